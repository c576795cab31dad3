"""Items as Slack mrkdwn: an item whole (its continuation lines, nested bullets, BC-breaking
prose and code), its title for a parent message, a run of items under their group, and what of
them affects the configured code. ``render`` draws events and ``digest_plan`` digests with these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from handlers.slack.text import Line, escape, item_lines, link, to_mrkdwn
from watcher.delivery import NOT_QUIET, Quiet
from watcher.models import Affect, EventItem
from watcher.present import (
    KIND_NAMES,
    UNSURE_BELOW,
    USES_SHOWN,
    AffectsPlan,
    plural,
    subsystem_tag,
    use_place,
)
from watcher.untrusted import clean_line

if TYPE_CHECKING:
    from handlers.slack.buttons import ButtonRef

ANY_CODEBASE = ""  # the key of a link template that serves every codebase (``[impact] link``)
TITLE_CHARS = 300  # a called-out item's title in the parent (its thread has it whole)
CALLOUT_ITEMS = 8  # BC-breaking/deprecation/… titles shown in the parent message
GROUP_CHARS = 200  # a group's name above its items (some groups are a paragraph)


@dataclass(frozen=True)
class Style:
    """What a reader asked for: how sure a subsystem must be not to be marked a guess, and
    whether items name their top-level subsystem (a message mixing them) or only the finer,
    and each codebase's link template by its name (``HandlerContext.link_template``; under
    ``ANY_CODEBASE``, one for every codebase)."""

    threshold: float = UNSURE_BELOW
    repo: str = ""
    code_links: Mapping[str, str] = field(default_factory=dict)
    # Bot-token channels: where the release's first message is remembered, for its buttons
    # (None: no buttons), what the channel muted and snoozed, and the uses it said "not us"
    # to (by use key), as the buttons show them.
    buttons: ButtonRef | None = None
    quiet: Quiet = NOT_QUIET
    not_us: Mapping[str, Any] = field(default_factory=dict)


# ---- items as lines -------------------------------------------------------------------------
def kind_label(item: EventItem) -> str:
    """``*BC-breaking:* ``: an item's kind, where no heading above it says it."""
    return f"*{escape(KIND_NAMES.get(item.kind, item.kind))}:* "


def item_entry(
    item: EventItem, style: Style, *, show_top: bool, show_kind: bool = False
) -> list[Line]:
    """An item whole, as mrkdwn lines: ``• `FSDP` first line`` then the rest indented;
    ``show_kind``: ``• *BC-breaking:* `FSDP` first line``."""
    lines = item_lines(item.text, style.repo)
    tag = subsystem_tag(item, style.threshold, finer_only=not show_top)
    prefix = "• " + (kind_label(item) if show_kind else "") + (f"`{escape(tag)}` " if tag else "")
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


def item_title(item: EventItem, style: Style, *, show_kind: bool = False) -> str:
    """The first line only, for a parent message whose thread holds the item whole."""
    tag = subsystem_tag(item, style.threshold)
    prefix = "• " + (kind_label(item) if show_kind else "") + (f"`{escape(tag)}` " if tag else "")
    return prefix + to_mrkdwn(item.text.split("\n", 1)[0], style.repo, limit=TITLE_CHARS)


def with_groups(
    items: list[EventItem], style: Style, *, show_top: bool, show_kind: bool = False
) -> list[list[Line]]:
    """Each item's lines, a run of items under one group (``In MPSInductor:``, ``c10d``)
    headed by the group's name, as the notes had them."""
    entries: list[list[Line]] = []
    current = ""
    for item in items:
        entry = item_entry(item, style, show_top=show_top, show_kind=show_kind)
        if item.group and item.group != current:
            label = to_mrkdwn(item.group, style.repo, limit=GROUP_CHARS)
            entry = [Line(f"_{label}:_"), *entry]
        current = item.group
        entries.append(entry)
    return entries


def use_link(use: Affect, style: Style, *, named: bool = False) -> str:
    """``path:line`` (``named``: ``codebase: path:line``), linked to the code through its own
    codebase's template, never another's (the path is the operator's own codebase, still made
    safe as any URL we build)."""
    place = use_place(use, named=named)
    template = style.code_links.get(use.codebase, style.code_links.get(ANY_CODEBASE))
    if template is None:
        return f"`{escape(place)}`"
    url = template.replace("{path}", quote(use.path)).replace("{line}", str(use.line))
    return link(url, place)


def use_line(use: Affect, style: Style, *, named: bool) -> str:
    """``\u2003<link|ckpt.py:6> _relies on the default of weights_only, changed_``."""
    why = f" _{escape(clean_line(use.why))}_" if use.why else ""  # one line, whatever it holds
    return f"\u2003{use_link(use, style, named=named)}{why}"


def affects_lines(affects: AffectsPlan, style: Style, *, limit: int = CALLOUT_ITEMS,
                  more: int = 0, where: str = "in the thread") -> list[str]:
    """Per tier, breaks first: its title, then each item under it (``limit`` in all) with up
    to ``USES_SHOWN`` of its uses of that tier, each with its why, and how many more; then
    how many items were not listed (``more``: beyond ``affects.items``, a digest's) and
    ``where`` they are, and the line counting the mentions."""
    lines: list[str] = []
    listed: set[int] = set()
    for group in affects.tiers:
        entries = group.entries[:max(0, limit - len(listed))]
        if not entries:
            continue
        lines.append(f"*{escape(group.title)}*")
        for entry in entries:
            uses = [use_line(use, style, named=affects.named)
                    for use in entry.uses[:USES_SHOWN]]
            if len(entry.uses) > USES_SHOWN:
                uses.append(f"\u2003+{len(entry.uses) - USES_SHOWN} more")
            if entry.item.suppressed and id(entry.item) not in listed:
                uses.append(f"\u2003_{plural(entry.item.suppressed, 'use')} marked not us_")
            lines.append("\n".join([item_title(entry.item, style, show_kind=True), *uses]))
            listed.add(id(entry.item))
    left = sum(id(item) not in listed for item in affects.items) + more
    if left:
        lines.append(f"_…and {left} more {where}_")
    if affects.mentions:
        lines.append(f"_{escape(affects.mentions)}_")
    return lines
