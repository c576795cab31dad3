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
    headline,
    plural,
    subsystem_tag,
    use_place,
    uses_summary,
)

__all__ = ["SlackMessage", "plan_event", "plan_texts"]

TITLE_CHARS = 300          # a called-out item's title in the parent (its thread has it whole)
CALLOUT_ITEMS = 8          # BC-breaking/deprecation/… titles shown in the parent message
GROUP_CHARS = 200          # a group's name above its items (some groups are a paragraph)
KIND_RANK = {kind: index for index, kind in enumerate(KIND_ORDER)}


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
def by_kind(items: list[EventItem]) -> dict[str, list[EventItem]]:
    groups: dict[str, list[EventItem]] = {}
    for item in sorted(items, key=lambda item: KIND_RANK.get(item.kind, len(KIND_ORDER))):
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
        for kind, members in by_kind(group).items():
            add_items(packer, KIND_TITLES.get(kind, kind), members, style, show_top=False)


def plan_event(event: Event, *, threads: bool, max_chars: int,
               threshold: float = UNSURE_BELOW, code_link: str | None = None,
               max_messages: int | None = None) -> list[SlackMessage]:
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
    return parent.messages + _capped_thread(event, max_chars, style,
                                            max(1, max_messages - len(parent.messages)))


def _thread_messages(event: Event, items: list[EventItem], max_chars: int, style: Style,
                     closing: str | None = None) -> list[SlackMessage]:
    packer = Packer(max_chars, in_thread=True, fallback=fallback_text(event))
    _thread(event, items, packer, style)
    if closing is not None:
        packer.add(section(closing))
    return packer.messages


def _capped_thread(event: Event, max_chars: int, style: Style, room: int
                   ) -> list[SlackMessage]:
    """The most items, most important first (``KIND_ORDER``), whose thread with its closing
    count fits in ``room`` messages; found by halving, since more items never take fewer."""
    items = event.items
    last = len(KIND_RANK)
    ranked = sorted(range(len(items)), key=lambda i: (KIND_RANK.get(items[i].kind, last), i))

    def planned(count: int) -> list[SlackMessage]:
        keep = set(ranked[:count])
        left = [item for i, item in enumerate(items) if i not in keep]
        by_name = " · ".join(f"{escape(name)} {len(group)}"
                             for name, group in by_top_subsystem(left))
        closing = (f"_…{plural(len(left), 'more change')} not shown here ({by_name}): see "
                   f"{link(event.url, 'the full release notes')}_")
        return _thread_messages(event, [item for i, item in enumerate(items) if i in keep],
                                max_chars, style, closing)

    low, high, best = 0, len(items) - 1, planned(0)
    while low < high:
        middle = (low + high + 1) // 2
        messages = planned(middle)
        if len(messages) <= room:
            low, best = middle, messages
        else:
            high = middle - 1
    return best


def _single_message(event: Event, packer: Packer, rest: list[EventItem],
                    style: Style) -> list[SlackMessage]:
    """Fill the one message with whole items, most important first; count what is left."""
    message = packer.messages[0]
    footer = message.blocks.pop()  # the context line goes last
    shown = 0
    for kind, members in by_kind(rest).items():
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
