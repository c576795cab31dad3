"""A release's events of one digest period, folded into one entry: the release as it is at the
period's end, its edits noted.

A weekly digest that met a release's publication and two edits of its notes would otherwise
list the release three times and count an item an edit changed twice. So the queue is read
once to find each release's last event of the period, and again to fold: a release published
(or promoted) in the period is shown as it now is (the last event's ``release_items``: the
release's items after its last edit), with "edited 2 times" in its line; a release only edited in
the period shows its edits' changes composed (an item added and then removed is no news, an
item added and then changed is added as it now reads). Events recorded before events carried
the release's items are listed one by one, as they always were.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from watcher.delivery.events import with_items
from watcher.models import Event, EventItem

ReleaseKey = tuple[str, int]
Folded = tuple[Event, str | None]  # an entry and what happened to it in words, if folded


@dataclass
class _Seen:
    last: int = -1
    events: Counter[str] = field(default_factory=Counter)
    legacy: bool = False  # an edit without the release's items: not folded


def _key(event: Event) -> ReleaseKey:
    return (event.repo, event.release_id)


def _survey(events: Iterable[Event]) -> dict[ReleaseKey, _Seen]:
    """Per release: the position of its last event in the queue, and its events by type."""
    seen: dict[ReleaseKey, _Seen] = {}
    for position, event in enumerate(events):
        entry = seen.setdefault(_key(event), _Seen())
        entry.last = position
        entry.events[event.event] += 1
        entry.legacy |= event.event == "edited" and event.release_items is None
    return seen


def compose_changes(edits: Iterable[list[EventItem]]) -> list[EventItem]:
    """Several edits' item changes as one: what changed from before the first to after the
    last, item by item (matched by text): added then removed is nothing, added then changed
    is added as it now reads, changed twice is changed from the first text."""
    net: dict[str, EventItem] = {}
    for items in edits:
        for item in items:
            earlier = net.pop(item.old_text or item.text, None)
            if earlier is None:
                net[item.text] = item
            elif item.change == "removed" and earlier.change == "changed":
                net[item.text] = item.model_copy(update={"text": earlier.old_text})
            elif item.change == "changed":
                net[item.text] = item if earlier.change == "removed" else item.model_copy(
                    update={"change": earlier.change, "old_text": earlier.old_text})
            # else: added then removed, or removed then added back: no change left
    return list(net.values())


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def _entry(last: Event, counts: Counter[str], edits: list[list[EventItem]]) -> Folded:
    """The release's one entry: as it now is when it was announced in the period, else its
    edits composed."""
    edited = counts["edited"]
    note = f"edited {_times(edited)}" if edited else None
    if counts["published"] or counts["released"]:
        now = last.items if last.event in ("published", "released") else last.release_items
        kind = "released" if counts["released"] else "published"
        if last.event == "deleted" or now is None:
            return last, "announced earlier in this period"
        event = with_items(last, now).model_copy(update={
            "event": kind, "changes": None, "release_items": None})
        return event, note
    if last.event == "deleted":
        return last, note
    changes = compose_changes(edits)
    return with_items(last, changes).model_copy(update={"release_items": None}), note


class ReleaseFold:
    """The queue's events with each release's events of the period folded into one entry, at
    the place of its last event; a release with one event, or whose edits do not carry the
    release's items (recorded before they did), passes event by event. ``read`` is called
    twice per iteration (the queue is paged, never held); ``size`` is the queue's events."""

    def __init__(self, read: Callable[[], Iterable[Event]]) -> None:
        self._read = read
        self.size = 0

    def __iter__(self) -> Iterator[Folded]:
        seen = _survey(self._read())
        self.size = sum(sum(entry.events.values()) for entry in seen.values())
        edits: dict[ReleaseKey, list[list[EventItem]]] = {}
        for position, event in enumerate(self._read()):
            entry = seen[_key(event)]
            if entry.legacy or sum(entry.events.values()) == 1:
                yield event, None
                continue
            if event.event == "edited":
                edits.setdefault(_key(event), []).append(event.items)
            if position == entry.last:
                yield _entry(event, entry.events, edits.pop(_key(event), []))
