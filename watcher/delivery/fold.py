"""A release's events of one digest period, folded into one entry: the release as it is at the
period's end, its edits noted.

A weekly digest that met a release's publication and two edits of its notes would otherwise
list the release three times and count an item an edit changed twice. So the queue's event ids
are read first, to know how many events each release has, and the events then folded as they
come: a release published (or promoted) in the period is shown as it now is (the last edit's
``release_items``: the release's items after it; for an edit recorded before edits carried
them, the edit's changes applied to the items announced), with "edited twice" in its line; a
release only edited in the period shows its edits' changes composed (an item added and then
removed is no news, an item added and then changed is added as it now reads). Only a release
between its first and its last event of the period is held in memory.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from watcher.delivery.events import with_items
from watcher.models import Event, EventItem

ReleaseKey = tuple[str, int]
Folded = tuple[Event, str | None]  # an entry and what happened to it in words, if folded


def _key(event: Event) -> ReleaseKey:
    return (event.repo, event.release_id)


def key_of_id(event_id: str) -> ReleaseKey:
    """``pytorch/pytorch:123:edited:<sha256>`` → ``("pytorch/pytorch", 123)``."""
    repo, release_id, _, _ = event_id.rsplit(":", 3)
    return (repo, int(release_id))


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


def _applied(items: list[EventItem], changes: list[EventItem]) -> list[EventItem]:
    """``items`` with an edit's composed ``changes`` applied (for edits recorded before events
    carried the release's items): removed ones out, changed ones in their place, added ones
    last."""
    by_text = {change.old_text or change.text: change for change in changes
               if change.change != "added"}
    kept = []
    for item in items:
        change = by_text.get(item.text)
        if change is None:
            kept.append(item)
        elif change.change == "changed":
            kept.append(change.model_copy(update={"change": "added", "old_text": None}))
    return kept + [change for change in changes if change.change == "added"]


@dataclass
class _Pending:
    """A release's events of the period seen so far, folded."""

    counts: Counter[str] = field(default_factory=Counter)
    now: list[EventItem] | None = None  # the release's items as last seen, if announced
    edits: list[list[EventItem]] = field(default_factory=list)
    last: Event | None = None

    def add(self, event: Event) -> None:
        self.counts[event.event] += 1
        self.last = event
        if event.event in ("published", "released"):
            self.now = list(event.items)
        elif event.event == "edited":
            self.edits.append(event.items)
            if event.release_items is not None:
                self.now = list(event.release_items)
            elif self.now is not None:  # recorded before edits carried the release
                self.now = _applied(self.now, compose_changes([event.items]))

    def entry(self) -> Folded:
        """The release's one entry: as it now is when it was announced in the period, else
        its edits composed."""
        last = self.last
        assert last is not None
        edited = self.counts["edited"]
        note = f"edited {_times(edited)}" if edited else None
        if self.counts["published"] or self.counts["released"]:
            if last.event == "deleted" or self.now is None:
                return last, "announced earlier in this period"
            kind = "released" if self.counts["released"] else "published"
            event = with_items(last, self.now).model_copy(update={
                "event": kind, "changes": None, "release_items": None})
            return event, note
        if last.event == "deleted":
            return last, note
        changes = compose_changes(self.edits)
        return with_items(last, changes).model_copy(update={"release_items": None}), note


class ReleaseFold:
    """The queue's events with each release's events of the period folded into one entry, at
    the place of its last event; a release with one event passes as it is. ``ids``: the
    queue's event ids (cheap to read; else ``read`` is read twice), to know how many events
    each release has; ``size`` is the queue's events, once iterated."""

    def __init__(self, read: Callable[[], Iterable[Event]],
                 ids: Callable[[], Iterable[str]] | None = None) -> None:
        self._read = read
        self._ids = ids
        self.size = 0

    def _survey(self) -> Counter[ReleaseKey]:
        if self._ids is not None:
            return Counter(key_of_id(event_id) for event_id in self._ids())
        return Counter(_key(event) for event in self._read())

    def __iter__(self) -> Iterator[Folded]:
        expected = self._survey()
        self.size = 0
        pending: dict[ReleaseKey, _Pending] = {}
        for event in self._read():
            self.size += 1
            key = _key(event)
            if expected[key] <= 1 and key not in pending:
                yield event, None
                continue
            fold = pending.setdefault(key, _Pending())
            fold.add(event)
            if sum(fold.counts.values()) >= expected[key]:
                yield pending.pop(key).entry()
        # A release whose last queued events its notifier no longer takes (its filters
        # changed since): folded from what it does take.
        for fold in pending.values():
            yield fold.entry()
