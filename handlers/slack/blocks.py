"""Plans the Slack messages for an event or a digest: a parent message and thread replies
(bot token), or one message with an honest "and N more" (webhook).

Every item reaches the reader whole: its continuation lines, nested bullets (as nested
bullets), BC-breaking prose and code (as code blocks). A parent message may show only the
titles of what it calls out, because its thread holds every item whole; an event of one item
shows that item in the parent. Long content is split between sections and messages on line
boundaries, a code block closed and reopened around a cut, and an item that goes on in the next
message says so.

How it fits within Slack's limits is ``handlers.slack.layout``'s business.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

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
from handlers.slack.text import Line, escape, item_lines, link, to_mrkdwn
from watcher.delivery import Digest, by_repo, by_subsystem
from watcher.models import KIND_TITLES, Affect, Event, EventItem
from watcher.present import (
    AFFECTS_TITLE,
    CALLED_OUT,
    KIND_ORDER,
    UNSURE_BELOW,
    USES_SHOWN,
    breaking,
    by_change,
    by_top_subsystem,
    changes_in_words,
    count_line,
    happened,
    headline,
    plural,
    release_title,
    subsystem_tag,
    use_place,
    uses_summary,
)

__all__ = ["SlackMessage", "plan_digest", "plan_event", "plan_texts"]

TITLE_CHARS = 300          # a called-out item's title in the parent (its thread has it whole)
CALLOUT_ITEMS = 8          # BC-breaking/deprecation/… titles shown in the parent message
GROUP_CHARS = 200          # a group's name above its items (some groups are a paragraph)
_RANK = {kind: index for index, kind in enumerate(KIND_ORDER)}


@dataclass(frozen=True)
class Style:
    """What a reader asked for: how sure a subsystem must be not to be marked a guess, and
    whether items name their top-level subsystem (a message mixing them) or only the finer."""

    threshold: float = UNSURE_BELOW
    repo: str = ""
    code_link: str | None = None  # ``[impact] link``


# ---- items as lines -------------------------------------------------------------------------
def item_entry(item: EventItem, style: Style, *, show_top: bool) -> list[Line]:
    """An item whole, as mrkdwn lines: ``• `FSDP` first line`` then the rest indented."""
    lines = item_lines(item.text, style.repo)
    tag = subsystem_tag(item, style.threshold, finer_only=not show_top)
    prefix = "• " + (f"`{escape(tag)}` " if tag else "")
    first = lines[0].text if lines else ""
    if item.change == "removed":
        first = f"~{first}~ _(removed)_"
    if item.touches_code:
        first += " _(affects your code)_"
    lines = [Line(prefix + first), *lines[1:]]
    if item.change == "changed" and item.old_text is not None:
        was = item_lines(item.old_text, style.repo, depth=2)
        lines += [Line("\u2003_was:_ " + (was[0].text if was else "")), *was[1:]]
    return lines


def item_title(item: EventItem, style: Style) -> str:
    """The first line only, for a parent message whose thread holds the item whole."""
    tag = subsystem_tag(item, style.threshold)
    prefix = "• " + (f"`{escape(tag)}` " if tag else "")
    return prefix + to_mrkdwn(item.text.split("\n", 1)[0], style.repo, limit=TITLE_CHARS)


def _with_groups(items: list[EventItem], style: Style, *, show_top: bool) -> list[list[Line]]:
    """Each item's lines, a run of items under one group (``In MPSInductor:``, ``c10d``)
    headed by the group's name, as the notes had them."""
    entries: list[list[Line]] = []
    current = ""
    for item in items:
        entry = item_entry(item, style, show_top=show_top)
        if item.group and item.group != current:
            label = to_mrkdwn(item.group, style.repo, limit=GROUP_CHARS)
            entry = [Line(f"_{label}:_"), *entry]
        current = item.group
        entries.append(entry)
    return entries


def add_items(packer: Packer, title: str, items: list[EventItem], style: Style, *,
              show_top: bool) -> None:
    """A titled list of items, whole, as many sections and messages as it takes."""
    packer.add_sections(titled_sections(title, _with_groups(items, style, show_top=show_top)))


# ---- events ---------------------------------------------------------------------------------
def _by_kind(items: list[EventItem]) -> dict[str, list[EventItem]]:
    groups: dict[str, list[EventItem]] = {}
    for item in sorted(items, key=lambda item: _RANK.get(item.kind, len(KIND_ORDER))):
        groups.setdefault(item.kind, []).append(item)
    return groups


def edit_summary(items: list[EventItem], style: Style) -> str:
    """What an edit changed, in words: ``2 changed in Distributed, 1 added in torch.compile``;
    a single change names its item."""
    if not items:
        return "The title or prose changed; no item was added, removed or changed."
    words = changes_in_words(items, escape)
    if len(items) == 1:
        first = to_mrkdwn(items[0].text.split("\n", 1)[0], style.repo, limit=TITLE_CHARS)
        return f"{words}: {first}"
    return words


def fallback_text(event: Event) -> str:
    kinds = Counter(item.kind for item in event.items)
    called = [f"{kinds[k]} {KIND_TITLES[k]}" for k in ("bc_breaking", "deprecation") if kinds[k]]
    detail = f": {plural(len(event.items), 'change')}" + (
        f"; {', '.join(called)}" if called else "")
    return escape(f"{headline(event)}{detail if event.items else ''}")


def _callouts(event: Event, packer: Packer, style: Style) -> None:
    """The called-out kinds' titles; the thread holds each of them whole."""
    for kind in CALLED_OUT:
        picked = [item for item in event.items if item.kind == kind]
        if not picked:
            continue
        lines = [item_title(item, style) for item in picked[:CALLOUT_ITEMS]]
        if len(picked) > CALLOUT_ITEMS:
            lines.append(f"_…and {len(picked) - CALLOUT_ITEMS} more in the thread_")
        packer.add_lines(f"{KIND_TITLES[kind]} ({len(picked)})", lines)


def use_link(use: Affect, style: Style) -> str:
    """``path:line``, linked to the code when ``[impact] link`` is set (the path is the
    operator's own codebase, still made safe as any URL we build)."""
    place = use_place(use)
    if style.code_link is None:
        return f"`{escape(place)}`"
    url = style.code_link.replace("{path}", quote(use.path)).replace("{line}", str(use.line))
    return link(url, place)


def affects_lines(items: list[EventItem], style: Style, *, limit: int = CALLOUT_ITEMS
                  ) -> list[str]:
    """Each BC-breaking or deprecation item that touches the code: its title, then up to
    ``USES_SHOWN`` of its uses and how many more."""
    picked = breaking(items)
    lines = []
    for item in picked[:limit]:
        uses = item.affects or []
        places = ", ".join(use_link(use, style) for use in uses[:USES_SHOWN])
        more = f" +{len(uses) - USES_SHOWN} more" if len(uses) > USES_SHOWN else ""
        lines.append(f"{item_title(item, style)}\n\u2003{places}{more}")
    if len(picked) > limit:
        lines.append(f"_…and {len(picked) - limit} more in the thread_")
    return lines


def add_affects(packer: Packer, items: list[EventItem], style: Style) -> None:
    """"Affects your code (N)", first: what a team must look at before it upgrades."""
    picked = breaking(items)
    if picked:
        title = f"{AFFECTS_TITLE} ({len(picked)}, {uses_summary(picked)})"
        packer.add_lines(escape(title), affects_lines(items, style))


def _footer(event: Event) -> dict[str, Any]:
    notes = link(event.url, "Full release notes")
    return context(f"{notes} · {escape(event.repo)} · {escape(event.tag)}")


def _parent(event: Event, packer: Packer, style: Style, *, threads: bool) -> set[int]:
    """Fills the parent message; returns the indexes of items it showed whole."""
    packer.add(header(headline(event)))
    items = event.items
    add_affects(packer, items, style)
    if event.event == "edited":
        packer.add(section(edit_summary(items, style)))
    elif items:
        packer.add(section(f"*{escape(count_line(items, style.threshold))}*"))
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
                add_items(packer, change.capitalize(), members, style, show_top=False)
            continue
        for kind, members in _by_kind(group).items():
            add_items(packer, KIND_TITLES.get(kind, kind), members, style, show_top=False)


def plan_event(event: Event, *, threads: bool, max_chars: int,
               threshold: float = UNSURE_BELOW, code_link: str | None = None
               ) -> list[SlackMessage]:
    """Bot-token mode: a parent message, then every item whole in its thread.
    Webhook mode (``threads=False``): one message, most important first, the rest counted."""
    style = Style(threshold, event.repo, code_link)
    parent = Packer(max_chars, in_thread=False, fallback=fallback_text(event))
    shown = _parent(event, parent, style, threads=threads)
    rest = [item for i, item in enumerate(event.items) if i not in shown]
    if not threads:
        return _single_message(event, parent, rest, style)
    if len(event.items) <= 1:
        return parent.messages
    thread = Packer(max_chars, in_thread=True, fallback=fallback_text(event))
    _thread(event, event.items, thread, style)
    return parent.messages + thread.messages


def _single_message(event: Event, packer: Packer, rest: list[EventItem],
                    style: Style) -> list[SlackMessage]:
    """Fill the one message with whole items, most important first; count what is left."""
    message = packer.messages[0]
    footer = message.blocks.pop()  # the context line goes last
    shown = 0
    for kind, members in _by_kind(rest).items():
        title = f"{KIND_TITLES.get(kind, kind)} ({len(members)})"
        for item in members:
            blocks = [section(s.text) for s in titled_sections(
                title, _with_groups([item], style, show_top=True))]
            if not _room_for(message, blocks, packer.max_chars):
                return _closed(message, footer, event, len(rest) - shown)
            message.blocks.extend(blocks)
            shown += 1
            title = ""  # the kind's title heads its first item only
    return _closed(message, footer, event, len(rest) - shown)


def _room_for(message: SlackMessage, blocks: list[dict[str, Any]], max_chars: int) -> bool:
    size = sum(block_chars(b) for b in blocks)
    return (len(message.blocks) + len(blocks) <= MAX_BLOCKS - 2
            and message.payload_chars() + size + 400 <= max_chars)  # room for the last lines


def _closed(message: SlackMessage, footer: dict[str, Any], event: Event,
            left: int) -> list[SlackMessage]:
    if left:
        message.blocks.append(section(f"_…and {left} more — {link(event.url, 'full notes')}_"))
    message.blocks.append(footer)
    return [message]


# ---- digests --------------------------------------------------------------------------------
def _period(digest: Digest) -> str:
    return f"{digest.period_start:%Y-%m-%d} to {digest.period_end:%Y-%m-%d}"


def plan_digest(digest: Digest, *, threads: bool, max_chars: int,
                threshold: float = UNSURE_BELOW, code_link: str | None = None
                ) -> list[SlackMessage]:
    """Parent: the period, then per repository its releases and edits and its changes per
    subsystem. Thread (or, for a webhook, the same message until full): per repository and
    subsystem, the most important items whole."""
    period = _period(digest)
    fallback = escape(f"release-watch digest {period}: "
                      f"{plural(len(digest.events), 'release event')}")
    parent = Packer(max_chars, in_thread=False, fallback=fallback)
    parent.add(header(f"Release digest {period}"))
    if digest.empty:
        parent.add(section("Nothing new in this period."))
        return parent.messages
    detail = Packer(max_chars, in_thread=threads, fallback=fallback)
    for repo, events in by_repo(digest).items():
        style = Style(threshold, repo, code_link)
        add_affects(parent, [item for event in events for item in event.items], style)
        lines = [f"• {link(event.url, release_title(event))} {escape(_what(event))}"
                 for event in events]
        groups = by_subsystem(events)
        lines += [f"• *{escape(g.name)}* {g.count}: " + ", ".join(
            f"{n} {KIND_TITLES.get(k, k).lower()}" for k, n in g.by_kind.items())
            for g in groups]
        parent.add_lines(escape(repo), lines)
        for group in groups:
            if group.top:
                add_items(detail, f"{escape(repo)} · {escape(group.name)}: most important",
                                 [item for _, item in group.top], style, show_top=False)
    if threads:
        return parent.messages + detail.messages
    return _digest_single(parent, detail, max_chars)


def _what(event: Event) -> str:
    verb = happened(event)
    if event.event == "edited":
        changes = Counter(item.change for item in event.items)
        return f"{verb}: " + ", ".join(f"{n} {c}" for c, n in changes.items()) if changes \
            else verb
    return f"{verb}: {plural(len(event.items), 'change')}"


def _digest_single(parent: Packer, detail: Packer, max_chars: int) -> list[SlackMessage]:
    message = parent.messages[0]
    for block in (b for m in detail.messages for b in m.blocks):
        if len(message.blocks) >= MAX_BLOCKS - 1 or (
                message.payload_chars() + block_chars(block) + 300 > max_chars):
            message.blocks.append(section("_…more in the release notes linked above_"))
            break
        message.blocks.append(block)
    return [message]
