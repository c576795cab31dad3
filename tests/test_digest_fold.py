"""A release's events of one digest period fold into one entry: the release as it is at the
period's end, its edits noted (``watcher.delivery.fold``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from watcher.delivery.digest import build_digest
from watcher.delivery.events import make_event
from watcher.delivery.fold import ReleaseFold, compose_changes
from watcher.models import EventItem, Release

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def item(text: str, change: str = "added", old: str | None = None,
         kind: str = "bc_breaking") -> EventItem:
    return EventItem(subsystem="nn", kind=kind, text=text, section=[], prs=[1], change=change,
                     old_text=old)


def event(kind: str, items: list[EventItem], now: list[EventItem] | None = None, *,
          hours: int = 0, release_id: int = 7):
    made = make_event(kind, "pytorch/pytorch", Release(id=release_id, tag_name="v2.7.0",
                                                       name="PyTorch 2.7.0"),
                      f"{hours:064d}", items, NOW + timedelta(hours=hours))
    return made.model_copy(update={"release_items": now})


@pytest.mark.parametrize(("edits", "expected"), [
    ([[item("A")], [item("A", "removed")]], []),
    ([[item("A")], [item("B", "changed", "A")]], [("B", "added", None)]),
    ([[item("B", "changed", "A")], [item("C", "changed", "B")]], [("C", "changed", "A")]),
    ([[item("B", "changed", "A")], [item("B", "removed")]], [("A", "removed", None)]),
    ([[item("A", "removed")], [item("A")]], []),
    ([[item("A")], [item("X")]], [("A", "added", None), ("X", "added", None)]),
], ids=["added-then-removed", "added-then-changed", "changed-twice", "changed-then-removed",
        "removed-then-added-back", "two-additions"])
def test_edits_compose_into_what_changed_over_the_period(edits, expected):
    assert [(i.text, i.change, i.old_text) for i in compose_changes(edits)] == expected


def test_a_release_and_its_edits_are_one_entry_as_it_now_is():
    whole = [item("A"), item("B")]
    queue = [event("published", whole, hours=1),
             event("edited", [item("C")], [*whole, item("C")], hours=2),
             event("edited", [item("D", "changed", "C")], [*whole, item("D")], hours=3)]
    fold = ReleaseFold(lambda: iter(queue))
    (entry, note), = list(fold)
    assert fold.size == 3  # the queue's events, for notifiers that send them one by one
    assert entry.event == "published" and [i.text for i in entry.items] == ["A", "B", "D"]
    assert note == "edited twice"
    digest = build_digest("weekly", queue, since=None, now=NOW + timedelta(days=1))
    (repo,) = digest.repos
    assert (repo.events, repo.changes, repo.kinds["bc_breaking"]) == (1, 3, 3)
    assert repo.releases[0].what == "released: 3 changes (edited twice)"
    assert len(digest.events) == 3


def test_a_release_only_edited_in_the_period_shows_its_edits_composed():
    queue = [event("edited", [item("C")], [item("A"), item("C")], hours=1),
             event("edited", [item("C", "removed"), item("E")], [item("A"), item("E")],
                   hours=2)]
    (entry, note), = list(ReleaseFold(lambda: iter(queue)))
    assert entry.event == "edited" and [(i.text, i.change) for i in entry.items] == [
        ("E", "added")]
    assert note == "edited twice"


def test_edits_from_before_they_carried_the_release_apply_to_what_was_announced():
    queue = [event("published", [item("A"), item("B"), item("C")], hours=1),
             event("edited", [item("C", "removed"), item("B2", "changed", "B"), item("D")],
                   None, hours=2)]  # no release_items: recorded by an earlier version
    (entry, note), = list(ReleaseFold(lambda: iter(queue)))
    assert entry.event == "published" and note == "edited once"
    assert [(i.text, i.change) for i in entry.items] == [
        ("A", "added"), ("B2", "added"), ("D", "added")]


def test_the_queue_ids_say_how_many_events_a_release_has():
    """Read from the store's queue, so the events are parsed once; an event its notifier no
    longer takes still lets the release's entry out, at the end."""
    queue = [event("published", [item("A")], hours=1),
             event("edited", [item("C")], [item("A"), item("C")], hours=2)]
    ids = [e.id for e in queue] + [queue[1].id.replace(":edited:", ":deleted:")]
    reads = []

    def read():
        reads.append(1)
        return iter(queue)

    entries = list(ReleaseFold(read, lambda: ids))
    assert len(reads) == 1
    assert [(e.event, [i.text for i in e.items], n) for e, n in entries] == [
        ("published", ["A", "C"], "edited once")]


def test_a_release_published_and_deleted_in_the_period_is_its_deletion():
    queue = [event("published", [item("A")], hours=1), event("deleted", [], [item("A")], hours=2)]
    (entry, note), = list(ReleaseFold(lambda: iter(queue)))
    assert entry.event == "deleted" and note == "announced earlier in this period"


def test_other_releases_keep_their_place_in_the_queue():
    queue = [event("published", [item("A")], hours=1, release_id=1),
             event("published", [item("B")], hours=2, release_id=2),
             event("edited", [item("C")], [item("A"), item("C")], hours=3, release_id=1)]
    folded = ReleaseFold(lambda: iter(queue))
    entries = [(e.release_id, [i.text for i in e.items]) for e, _ in folded]
    assert entries == [(2, ["B"]), (1, ["A", "C"])]  # a folded release at its last event


def test_a_folded_release_is_at_its_last_event_even_when_others_come_after():
    """The queue's last event belongs to another release: the folded one still comes out at
    its own last event, before it, not at the end of the queue."""
    queue = [event("published", [item("A")], hours=1, release_id=1),
             event("edited", [item("C")], [item("A"), item("C")], hours=2, release_id=1),
             event("published", [item("B")], hours=3, release_id=2)]
    entries = [(e.release_id, [i.text for i in e.items], note)
               for e, note in ReleaseFold(lambda: iter(queue))]
    assert entries == [(1, ["A", "C"], "edited once"), (2, ["B"], None)]


def test_a_promotion_shows_the_release_as_promoted():
    """A pre-release edited, then promoted (``released``) with notes that changed again: the
    entry is the promotion's items, not those of the edit before it."""
    queue = [event("edited", [item("B")], [item("A"), item("B")], hours=1),
             event("released", [item("A"), item("C")], hours=2)]
    (entry, note), = list(ReleaseFold(lambda: iter(queue)))
    assert entry.event == "released" and note == "edited once"
    assert [i.text for i in entry.items] == ["A", "C"]


def test_an_edit_recorded_without_the_release_applies_to_the_promoted_items():
    queue = [event("released", [item("A"), item("B")], hours=1),
             event("edited", [item("B", "removed"), item("D")], None, hours=2)]
    (entry, note), = list(ReleaseFold(lambda: iter(queue)))
    assert entry.event == "released" and note == "edited once"
    assert [(i.text, i.change) for i in entry.items] == [("A", "added"), ("D", "added")]
