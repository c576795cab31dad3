"""An event's plan (``watcher.present.plan_event``) drawn as Slack pieces: the second stage of
a Slack message, between the plan and the packing.

A piece is a Block Kit block or a titled list of entries (``layout.Titled``) that the packing
cuts into sections; this module decides how each part of the plan reads in mrkdwn, never how
it fits. Every item reaches the reader whole: its continuation lines, nested bullets, BC-breaking
prose and code. A parent message shows only the titles of what it calls out, because its thread
holds every item whole; an event of one item shows that item in the parent.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from handlers.slack.blocks import Piece, Titled, context, header, section
from handlers.slack.buttons import controls, item_actions, release_memory
from handlers.slack.items import (
    CALLOUT_ITEMS,
    TITLE_CHARS,
    Style,
    affects_lines,
    item_title,
    kind_label,
    with_groups,
)
from handlers.slack.text import Line, escape, link, to_mrkdwn
from watcher.models import KIND_TITLES, Affect, EventItem
from watcher.present import (
    USES_SHOWN,
    EventPlan,
    Section,
    changes_in_words,
    kinds_in_words,
    plural,
    release_title,
    tally_line,
)


# ---- words ----------------------------------------------------------------------------------
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


def summary_text(plan: EventPlan) -> str:
    """The notification line: ``PyTorch 2.7.0 released: 609 changes; 11 BC-breaking changes,
    2 deprecations``."""
    kinds = Counter(item.kind for item in plan.items)
    called = kinds_in_words([(kind, kinds[kind]) for kind in ("bc_breaking", "deprecation")])
    total = len(plan.items)
    detail = f": {plural(total, 'change')}" + (f"; {called}" if called else "")
    return escape(f"{plan.headline}{detail if total else ''}")


def promotion_summary(plan: EventPlan) -> str:
    """What a pre-release's becoming a full release changed: its name and tag, its notes."""
    said = [escape(plan.rename)] if plan.rename else []
    if plan.changes:
        said.append(f"the notes changed: {changes_in_words(plan.changes, escape)}")
    return "; ".join(said)


def closing_line(left: list[EventItem], sections: list[Section], url: str) -> str:
    """What a capped message says of the items it has no room for, per subsystem."""
    by_name = " · ".join(f"{escape(part.name)} {part.count}" for part in sections)
    return (f"_…{plural(len(left), 'more change')} not shown here ({by_name}): see "
            f"{link(url, 'the full release notes')}_")


# ---- the parent message ---------------------------------------------------------------------
def affects(plan: EventPlan, style: Style, *, where: str) -> list[Piece]:
    """ "Affects your code (…)", first: what a team must look at before it upgrades, what
    breaks before what to check, the mentions counted."""
    if not plan.affects:
        return []
    lines = affects_lines(plan.affects, style, where=where)
    return [Titled(escape(plan.affects.title), [[Line(line)] for line in lines]),
            *use_buttons(plan, style)]


def use_buttons(plan: EventPlan, style: Style) -> list[Piece]:
    """Under "Affects your code", per item listed: its uses whole, and "not us" on each use
    shown (bot-token channels only)."""
    if style.buttons is None:
        return []
    shown: dict[int, tuple[EventItem, list[Affect]]] = {}
    for group in plan.affects.tiers:
        for entry in group.entries[:CALLOUT_ITEMS]:
            _, uses = shown.setdefault(id(entry.item), (entry.item, []))
            uses += entry.uses[:USES_SHOWN]
    return [item_actions(item, uses, style.buttons, style.not_us)
            for item, uses in list(shown.values())[:CALLOUT_ITEMS]]


def callouts(plan: EventPlan, style: Style) -> list[Piece]:
    """Per called-out kind, its count and its first titles; the thread has them whole."""
    pieces: list[Piece] = []
    for group in plan.callouts:
        titles = [item_title(item, style) for item in group.items[:CALLOUT_ITEMS]]
        if len(group.items) > len(titles):
            titles.append(f"_…and {len(group.items) - len(titles)} more in the thread_")
        pieces.append(Titled(f"{KIND_TITLES[group.key]} ({len(group.items)})",
                             [[Line(title)] for title in titles], marks_cuts=False))
    return pieces


def footer(plan: EventPlan) -> dict[str, Any]:
    event = plan.event
    notes = link(event.url, "Full release notes")
    return context(f"{notes} · {escape(event.repo)} · {escape(event.tag)}")


def parent(plan: EventPlan, style: Style, *, threads: bool) -> list[Piece]:
    """The parent message: headline, what affects the code, what an edit or a promotion
    changed, the counts, then the one item whole or the called-out kinds' titles, and the
    link to the notes last."""
    event = plan.event
    pieces: list[Piece] = [header(plan.headline),
                           *affects(plan, style, where="in the thread" if threads else "below")]
    if plan.unmentioned is not None:
        pieces.append(context(escape(plan.unmentioned)))
    if plan.edited:
        pieces.append(section(edit_summary(plan.items, style, plan.rename)))
    elif event.event == "released" and (plan.rename or plan.changes):
        pieces.append(section(promotion_summary(plan)))
    if plan.counts is not None:
        pieces.append(section(f"*{escape(tally_line(plan.counts))}*"))
    if len(plan.items) == 1:
        item = plan.items[0]
        pieces.append(Titled(KIND_TITLES.get(item.kind, ""), with_groups([item], style,
                                                                          show_top=True)))
    elif threads and not plan.edited:
        pieces += callouts(plan, style)  # a webhook's one message has them first, whole
    if style.buttons is not None and threads:
        memory = release_memory(event, plan.items)
        pieces.append(controls(style.buttons, memory["release"], memory["subsystems"],
                               style.quiet))
    pieces.append(footer(plan))
    return pieces


# ---- the thread -----------------------------------------------------------------------------
def thread(sections: list[Section], style: Style, *, edited: bool) -> list[Piece]:
    """Per subsystem, per kind (per change, for an edit), every item whole."""
    pieces: list[Piece] = []
    for part in sections:
        pieces.append(section(f"*{escape(part.name)}* — {plural(part.count, 'change')}"))
        for group in part.groups:
            title = group.key.capitalize() if edited else KIND_TITLES.get(group.key, group.key)
            pieces.append(Titled(title, with_groups(group.items, style, show_top=False,
                                                    show_kind=edited)))
    return pieces


def whole_item(title: str, item: EventItem, style: Style) -> Titled:
    """One item whole under its kind's title (``""``: its kind's first item has it)."""
    return Titled(title, with_groups([item], style, show_top=True))


# ---- what follows a release's first message -------------------------------------------------
def opening(plan: EventPlan, style: Style) -> str:
    """A follow-up's first line: what happened to the release, in words."""
    event = plan.event
    title = escape(release_title(event))
    if event.event == "released":
        changed = promotion_summary(plan)
        return (f"*{title} is now a full release* (it was a pre-release)"
                + (f": {changed}" if changed else ""))
    if event.event == "deleted":
        return f"*{title} was deleted on GitHub.*"
    return f"*Release notes edited:* {edit_summary(plan.items, style, plan.rename)}"


def follow_up(plan: EventPlan, sections: list[Section], style: Style) -> list[Piece]:
    """The replies in the release's thread: what happened, what of it affects the code, then
    the changes whole, per subsystem and change, each item naming its kind."""
    pieces: list[Piece] = [section(opening(plan, style)), *affects(plan, style, where="below")]
    for part in sections:
        for group in part.groups:
            pieces.append(Titled(f"{escape(part.name)}: {group.key}",
                                 with_groups(group.items, style, show_top=False,
                                             show_kind=True)))
    return pieces


def status_line(memory: dict[str, Any]) -> dict[str, Any]:
    """The first message's last line once the release changed: how often and when it was
    edited, when it became a full release, when it was deleted."""
    parts = []
    if memory.get("edits"):
        parts.append(f"edited {memory['edits']}\u00d7, last {memory['last_edit']}")
    if memory.get("released"):
        parts.append(f"a full release since {memory['released']}")
    if memory.get("deleted"):
        parts.append(f"deleted on GitHub {memory['deleted']}")
    return context(f"_{escape(' · '.join(parts))}_")
