"""Plans the Slack messages for an event: a parent message and thread replies (bot token), or
one message with an honest "and N more" (webhook). Items are drawn by ``items``.

Every item reaches the reader whole: its continuation lines, nested bullets (as nested
bullets), BC-breaking prose and code (as code blocks). A parent message may show only the
titles of what it calls out, because its thread holds every item whole; an event of one item
shows that item in the parent. Long content is split between sections and messages on line
boundaries, a code block closed and reopened around a cut, and an item that goes on in the next
message says so.

The parent's count line and called-out kinds carry block ids, so that ``recount`` can draw
them again when the release changes. How it fits within Slack's limits is
``handlers.slack.layout``'s business.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from handlers.slack.items import (
    CALLOUT_ITEMS,
    KIND_RANK,
    TITLE_CHARS,
    Style,
    add_affects,
    add_items,
    by_kind,
    item_title,
    kind_label,
    with_groups,
)
from handlers.slack.layout import (
    MAX_BLOCKS,
    Packer,
    SlackMessage,
    block_chars,
    context,
    header,
    plan_texts,
    section,
    titled_sections,
)
from handlers.slack.text import Line, escape, link, to_mrkdwn
from watcher.models import KIND_TITLES, Event, EventItem
from watcher.present import (
    CALLED_OUT,
    UNSURE_BELOW,
    Tally,
    by_change,
    by_top_subsystem,
    changes_in_words,
    headline,
    kinds_in_words,
    plural,
    renamed,
    tally,
    tally_line,
)

__all__ = ["SlackMessage", "plan_event", "plan_texts"]

COUNTS_BLOCK = "release-watch-counts"  # block_ids in a parent that a later edit recounts
CALLED_BLOCK = "release-watch-called-"


# ---- events ---------------------------------------------------------------------------------
def edit_summary(items: list[EventItem], style: Style, rename: str | None = None) -> str:
    """What an edit changed, in words: ``2 changed in Distributed, 1 added in torch.compile``;
    a single change names its item and kind; a rename says what it was called."""
    said = [escape(rename)] if rename else []
    if not items:
        return "; ".join(said) or "The prose changed; no item was added, removed or changed."
    words = changes_in_words(items, escape)
    if len(items) == 1:
        first = to_mrkdwn(items[0].text.split("\n", 1)[0], style.repo, limit=TITLE_CHARS)
        words = f"{words}: {kind_label(items[0])}{first}"
    return "; ".join([*said, words])


def summary_text(title: str, total: int, kinds: Counter[str]) -> str:
    """The notification line: ``PyTorch 2.7.0 released: 609 changes; 11 BC-breaking changes,
    2 deprecations``."""
    called = kinds_in_words((kind, kinds[kind]) for kind in ("bc_breaking", "deprecation"))
    detail = f": {plural(total, 'change')}" + (f"; {called}" if called else "")
    return escape(f"{title}{detail if total else ''}")


def promotion_summary(event: Event) -> str:
    """What a pre-release's becoming a full release changed: its name and tag, its notes."""
    said = [escape(rename)] if (rename := renamed(event)) else []
    if event.changes:
        said.append(f"the notes changed: {changes_in_words(event.changes, escape)}")
    return "; ".join(said)


def fallback_text(event: Event) -> str:
    return summary_text(
        headline(event), len(event.items), Counter(item.kind for item in event.items)
    )


def counts_block(counts: Tally) -> dict[str, Any]:
    """The parent's count line, tagged so a later edit can recount it."""
    block = section(f"*{escape(tally_line(counts))}*")
    block["block_id"] = COUNTS_BLOCK
    return block


def callout_blocks(kind: str, count: int, titles: list[str]) -> list[dict[str, Any]]:
    """A called-out kind in the parent: its count, the first titles, how many more are in
    the thread; tagged so a later edit can recount it."""
    shown = titles[: min(CALLOUT_ITEMS, count)]
    if count > len(shown):
        shown.append(f"_…and {count - len(shown)} more in the thread_")
    parts = titled_sections(f"{KIND_TITLES[kind]} ({count})", [[Line(t)] for t in shown])
    blocks = [section(part.text) for part in parts]
    for index, block in enumerate(blocks):
        block["block_id"] = f"{CALLED_BLOCK}{kind}-{index}"
    return blocks


def callout_titles(items: list[EventItem], style: Style) -> dict[str, list[str]]:
    """The titles the parent shows per called-out kind (the thread holds them whole)."""
    return {
        kind: [item_title(item, style) for item in items if item.kind == kind][:CALLOUT_ITEMS]
        for kind in CALLED_OUT
    }


def _callouts(event: Event, packer: Packer, style: Style) -> None:
    for kind, titles in callout_titles(event.items, style).items():
        count = sum(1 for item in event.items if item.kind == kind)
        for block in callout_blocks(kind, count, titles) if count else ():
            packer.add(block)


def _footer(event: Event) -> dict[str, Any]:
    notes = link(event.url, "Full release notes")
    return context(f"{notes} · {escape(event.repo)} · {escape(event.tag)}")


def _parent(event: Event, packer: Packer, style: Style, *, threads: bool) -> set[int]:
    """Fills the parent message; returns the indexes of items it showed whole."""
    packer.add(header(headline(event)))
    items = event.items
    add_affects(packer, items, style)
    if event.event == "edited":
        packer.add(section(edit_summary(items, style, renamed(event))))
    elif event.event == "released" and (renamed(event) or event.changes):
        packer.add(section(promotion_summary(event)))
    if event.event != "edited" and items:
        packer.add(counts_block(tally(items, style.threshold)))
    if len(items) == 1:
        add_items(packer, KIND_TITLES.get(items[0].kind, ""), items, style, show_top=True)
        shown = {0}
    else:
        shown = set()
        if threads and event.event != "edited":
            _callouts(event, packer, style)  # a webhook's one message has them first, whole
    packer.add(_footer(event))
    return shown


def _thread(event: Event, items: list[EventItem], packer: Packer, style: Style) -> None:
    """Per subsystem, per kind (per change, for an edit), every item whole."""
    for name, group in by_top_subsystem(items):
        packer.add(section(f"*{escape(name)}* — {plural(len(group), 'change')}"))
        if event.event == "edited":
            for change, members in by_change(group):
                add_items(
                    packer, change.capitalize(), members, style, show_top=False, show_kind=True
                )
            continue
        for kind, members in by_kind(group).items():
            add_items(packer, KIND_TITLES.get(kind, kind), members, style, show_top=False)


def plan_event(
    event: Event,
    *,
    threads: bool,
    max_chars: int,
    threshold: float = UNSURE_BELOW,
    code_link: str | None = None,
    max_messages: int | None = None,
) -> list[SlackMessage]:
    """Bot-token mode: a parent message, then every item whole in its thread, in at most
    ``max_messages`` messages: when the items need more, the thread holds the most important
    of them whole and ends by counting the rest, with a link to the release notes.
    Webhook mode (``threads=False``): one message, most important first, the rest counted."""
    style = Style(threshold, event.repo, code_link)
    parent = Packer(max_chars, in_thread=False, fallback=fallback_text(event))
    shown = _parent(event, parent, style, threads=threads)
    rest = [item for i, item in enumerate(event.items) if i not in shown]
    if not threads:
        return _single_message(event, parent, rest, style)
    if len(event.items) <= 1:
        return parent.messages
    thread = _thread_messages(event, event.items, max_chars, style)
    if max_messages is None or len(parent.messages) + len(thread) <= max_messages:
        return parent.messages + thread
    return parent.messages + _capped_thread(
        event, max_chars, style, max(1, max_messages - len(parent.messages))
    )


def _thread_messages(
    event: Event, items: list[EventItem], max_chars: int, style: Style, closing: str | None = None
) -> list[SlackMessage]:
    packer = Packer(max_chars, in_thread=True, fallback=fallback_text(event))
    _thread(event, items, packer, style)
    if closing is not None:
        packer.add(section(closing))
    return packer.messages


def _capped_thread(event: Event, max_chars: int, style: Style, room: int) -> list[SlackMessage]:
    def planned(kept: list[EventItem], closing: str) -> list[SlackMessage]:
        return _thread_messages(event, kept, max_chars, style, closing)

    return most_that_fit(event, event.items, planned, room)


def most_that_fit(
    event: Event,
    items: list[EventItem],
    planned: Callable[[list[EventItem], str], list[SlackMessage]],
    room: int,
) -> list[SlackMessage]:
    """The messages ``planned`` makes of the most items, most important first
    (``KIND_ORDER``), that fit in ``room`` messages with a closing line counting the rest
    (with a link to the release notes); found by halving, since more items never take fewer
    messages."""
    last = len(KIND_RANK)
    ranked = sorted(range(len(items)), key=lambda i: (KIND_RANK.get(items[i].kind, last), i))

    def plan(count: int) -> list[SlackMessage]:
        keep = set(ranked[:count])
        left = [item for i, item in enumerate(items) if i not in keep]
        by_name = " · ".join(
            f"{escape(name)} {len(group)}" for name, group in by_top_subsystem(left)
        )
        closing = (
            f"_…{plural(len(left), 'more change')} not shown here ({by_name}): see "
            f"{link(event.url, 'the full release notes')}_"
        )
        return planned([item for i, item in enumerate(items) if i in keep], closing)

    low, high, best = 0, len(items) - 1, plan(0)
    while low < high:
        middle = (low + high + 1) // 2
        messages = plan(middle)
        if len(messages) <= room:
            low, best = middle, messages
        else:
            high = middle - 1
    return best


def _single_message(
    event: Event, packer: Packer, rest: list[EventItem], style: Style
) -> list[SlackMessage]:
    """Fill the one message with whole items, most important first; count what is left."""
    message = packer.messages[0]
    footer = message.blocks.pop()  # the context line goes last
    shown = 0
    for kind, members in by_kind(rest).items():
        title = f"{KIND_TITLES.get(kind, kind)} ({len(members)})"
        for item in members:
            blocks = [
                section(s.text)
                for s in titled_sections(title, with_groups([item], style, show_top=True))
            ]
            if not _room_for(message, blocks, packer.max_chars):
                return _closed(message, footer, event, len(rest) - shown)
            message.blocks.extend(blocks)
            shown += 1
            title = ""  # the kind's title heads its first item only
    return _closed(message, footer, event, len(rest) - shown)


def _room_for(message: SlackMessage, blocks: list[dict[str, Any]], max_chars: int) -> bool:
    size = sum(block_chars(b) for b in blocks)
    return (
        len(message.blocks) + len(blocks) <= MAX_BLOCKS - 2
        and message.payload_chars() + size + 400 <= max_chars
    )  # room for the last lines


def _closed(
    message: SlackMessage, footer: dict[str, Any], event: Event, left: int
) -> list[SlackMessage]:
    if left:
        message.blocks.append(section(f"_…and {left} more — {link(event.url, 'full notes')}_"))
    message.blocks.append(footer)
    return [message]
