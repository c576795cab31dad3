"""An event as a neutral plan of what a reader is told, in order: the first stage of every
notifier's message, before any channel's format.

``plan_event`` decides, once for every notifier, what a message of the event holds: its
headline, what a rename changed, what affects the configured code, the counts, the called-out
kinds, and every item per subsystem and kind (per change, for an edit). A channel renders the
plan (Slack blocks, console text, Atom HTML), packs the rendering into its messages and sends
them; none of those stages reaches back into this one, and none decides again what is said.
A release's first message, redrawn after an edit, is the plan of the release as it now is
(``release_now``), rendered and packed the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from watcher.models import Event, EventItem
from watcher.present.affects import AffectsPlan, affects_of
from watcher.present.words import (
    CALLED_OUT,
    KIND_ORDER,
    UNSURE_BELOW,
    Tally,
    by_change,
    by_top_subsystem,
    headline,
    renamed,
    tally,
    unmentioned_line,
)

KIND_RANK = {kind: index for index, kind in enumerate(KIND_ORDER)}


@dataclass(frozen=True)
class Group:
    """Items under one heading of a section: a kind (``bc_breaking``) or, for an edit, a
    change (``added``)."""

    key: str
    items: list[EventItem]


@dataclass(frozen=True)
class Section:
    """A top-level subsystem, by the name readers see, and its items in groups."""

    name: str
    count: int
    groups: list[Group]


@dataclass(frozen=True)
class EventPlan:
    event: Event
    headline: str
    rename: str | None            # what a rename or re-tag changed, in words
    affects: AffectsPlan          # what touches the code: breaks, check, mentions counted
    counts: Tally | None          # what a count line says; None for an edit
    callouts: list[Group]         # the called-out kinds (``CALLED_OUT``) with their items
    sections: list[Section]       # every item, per subsystem, per kind or change
    changes: list[EventItem]      # an edit's items, a promotion's changes; else none
    items: list[EventItem]        # the event's, as the channel sees them
    edited: bool                  # an edit: its items are changes, counted per change
    # The package's API changes the notes do not mention that touch no code: one line.
    unmentioned: str | None = None


def by_kind(items: list[EventItem]) -> list[Group]:
    """Items per kind, the most important kind first (``KIND_ORDER``), the notes' order kept
    within a kind."""
    groups: dict[str, list[EventItem]] = {}
    for item in sorted(items, key=lambda item: KIND_RANK.get(item.kind, len(KIND_ORDER))):
        groups.setdefault(item.kind, []).append(item)
    return [Group(kind, members) for kind, members in groups.items()]


def sections_of(items: list[EventItem], *, per_change: bool) -> list[Section]:
    """Per top-level subsystem (the largest first), per kind; ``per_change``: per change
    (added, changed, removed), as an edit is read."""
    sections = []
    for name, group in by_top_subsystem(items):
        groups = ([Group(change, members) for change, members in by_change(group)]
                  if per_change else by_kind(group))
        sections.append(Section(name, len(group), groups))
    return sections


def ranked(items: list[EventItem]) -> list[int]:
    """The items' indexes, most important first: by kind (``KIND_ORDER``), then as listed.
    What a message with room for only some of them keeps."""
    last = len(KIND_RANK)
    return sorted(range(len(items)), key=lambda i: (KIND_RANK.get(items[i].kind, last), i))


def plan_event(event: Event, threshold: float = UNSURE_BELOW) -> EventPlan:
    items = event.items
    edited = event.event == "edited"
    callouts = [Group(kind, picked) for kind in CALLED_OUT
                if (picked := [item for item in items if item.kind == kind])]
    return EventPlan(
        event=event,
        headline=headline(event),
        rename=renamed(event),
        affects=affects_of(items),
        unmentioned=unmentioned_line(event.summary.unmentioned_api_changes),
        counts=None if edited or not items else tally(items, threshold),
        callouts=callouts,
        sections=sections_of(items, per_change=edited),
        changes=items if edited else list(event.changes or ()),
        items=items,
        edited=edited,
    )


def release_now(event: Event) -> Event | None:
    """The release as it is after ``event`` (an edit, a promotion, a deletion), as its first
    announcement would show it now: what its first message is redrawn from. None for an event
    that does not carry the release's items (one recorded before events did)."""
    if event.event == "released":
        return event.model_copy(update={"event": "published", "previous": None,
                                        "changes": None})
    if event.release_items is None:
        return None
    return event.model_copy(update={"event": "published", "items": event.release_items,
                                    "previous": None, "changes": None,
                                    "release_items": None})
