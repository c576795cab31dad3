"""Keeps the counts in a release's first Slack message true to the release as it now is.

An ``edited`` event carries only what changed, and each channel sees the release through its
own filters, so the totals cannot come from the event. They come from what the notifier
remembered beside the message when it posted it: the items it counted, per subsystem, kind and
whether the subsystem was a guess (the ``Tally`` its count line is drawn from), and the titles
it called out. An edit adds its added items to that, takes its removed ones away and renames
its changed ones; a ``released`` event carries the whole release, so it counts afresh. The
count line and the called-out kinds are then drawn again from it, through the same functions
that drew them first (``blocks``), and the message is updated in place.

What no event says is not followed: an item that moved between headings with its text
unchanged is no edit, so the counts keep it where it was until the next ``released`` event.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from handlers.slack.blocks import (
    CALLED_BLOCK,
    COUNTS_BLOCK,
    callout_blocks,
    callout_titles,
    counts_block,
    summary_text,
)
from handlers.slack.items import CALLOUT_ITEMS, Style, item_title
from handlers.slack.layout import MAX_BLOCKS, SlackMessage
from watcher.models import Event, EventItem
from watcher.present import CALLED_OUT, Tally, headline, tally


def parent_counts(event: Event, style: Style) -> dict[str, Any]:
    """What to remember beside a release's first message so later events can recount it;
    nothing for a message without a count line (an edit posted on its own)."""
    if event.event == "edited" or not event.items:
        return {}
    memory: dict[str, Any] = {
        "tally": _encoded(tally(event.items, style.threshold)),
        "headline": headline(event),
    }
    if len(event.items) > 1:  # a single item is shown whole, with no called-out titles
        memory["called"] = callout_titles(event.items, style)
    return memory


def recounted(memory: dict[str, Any], event: Event, style: Style, max_chars: int) -> dict[str, Any]:
    """The remembered first message after ``event``, its count line and called-out kinds
    drawn again (unchanged when it has none, or remembers no counts)."""
    if "tally" not in memory or event.event not in ("edited", "released"):
        return memory
    called: dict[str, list[str]] | None = None
    if "called" in memory:
        called = {kind: list(titles) for kind, titles in memory["called"].items()}
    if event.event == "released":  # the whole release: counted afresh
        counts = tally(event.items, style.threshold)
        called = callout_titles(event.items, style) if called is not None else None
    else:
        counts = _decoded(memory["tally"])
        for item in event.items:
            _apply(item, counts, called, style)
    blocks = _redrawn(memory.get("blocks") or [], counts, called, max_chars)
    kinds: Counter[str] = Counter()
    for (_, kind, _), count in counts.items():
        kinds[kind] += count
    title = str(memory.get("headline") or "")
    updated = {
        **memory,
        "tally": _encoded(counts),
        "blocks": blocks,
        "text": summary_text(title, sum(counts.values()), kinds),
    }
    if called is not None:
        updated["called"] = called
    return updated


def _apply(
    item: EventItem, counts: Tally, called: dict[str, list[str]] | None, style: Style
) -> None:
    """One change of an edit: an added item counts, a removed one no longer does, a changed
    one keeps its place (its classification is taken to be the same) under its new title."""
    (key,) = tally([item], style.threshold)
    titles = None
    if called is not None and item.kind in CALLED_OUT:
        titles = called.setdefault(item.kind, [])
    title = item_title(item, style)
    if item.change == "added":
        counts[key] += 1
        if titles is not None and len(titles) < CALLOUT_ITEMS:
            titles.append(title)
    elif item.change == "removed":
        counts[key] -= 1
        if counts[key] <= 0:
            del counts[key]
        if titles is not None and title in titles:
            titles.remove(title)
    elif titles is not None and item.old_text is not None:
        before = item_title(item.model_copy(update={"text": item.old_text}), style)
        if before in titles:
            titles[titles.index(before)] = title


def _redrawn(
    blocks: list[dict[str, Any]], counts: Tally, called: dict[str, list[str]] | None, max_chars: int
) -> list[dict[str, Any]]:
    """The message's blocks with the count line and the called-out kinds drawn again from
    ``counts`` (the called-out kinds right after the count line, where ``blocks`` puts them);
    only the count line, should the called-out kinds no longer fit in one message."""
    if not any(block.get("block_id") == COUNTS_BLOCK for block in blocks):
        return blocks  # not the message that holds the counts (a parent in two parts)
    kinds: Counter[str] = Counter()
    for (_, kind, _), count in counts.items():
        kinds[kind] += count
    callouts = (
        []
        if called is None
        else [
            block
            for kind in CALLED_OUT
            if kinds[kind]
            for block in callout_blocks(kind, kinds[kind], called.get(kind, []))
        ]
    )
    plain = [
        block for block in blocks if not str(block.get("block_id", "")).startswith(CALLED_BLOCK)
    ]
    full: list[dict[str, Any]] = []
    for block in plain:
        if block.get("block_id") == COUNTS_BLOCK:
            full += [counts_block(counts), *callouts]
        else:
            full.append(block)
    if len(full) <= MAX_BLOCKS and SlackMessage("", full).payload_chars() <= max_chars:
        return full
    return [
        counts_block(counts) if block.get("block_id") == COUNTS_BLOCK else block for block in blocks
    ]


def _encoded(counts: Tally) -> list[list[Any]]:
    return [
        [subsystem, kind, guess, count]
        for (subsystem, kind, guess), count in sorted(counts.items())
        if count > 0
    ]


def _decoded(rows: list[list[Any]]) -> Tally:
    return Counter(
        {
            (str(subsystem), str(kind), bool(guess)): int(count)
            for subsystem, kind, guess, count in rows
        }
    )
