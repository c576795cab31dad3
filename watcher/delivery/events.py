"""Builds the contract's event objects from a release and its item changes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime

from watcher.models import (
    Affect,
    ClassifiedItem,
    Event,
    EventItem,
    EventType,
    Previous,
    Release,
    Summary,
    top_level,
)
from watcher.notes import ItemChange

# The impact step (``watcher.impact``): an item's APIs and their uses in the configured code,
# or None when it names none. Passed in, so events need not know how impact is found.
ImpactOf = Callable[[ClassifiedItem], tuple[list[str], list[Affect]] | None]


def event_id(repo: str, release_id: int, event: EventType, body_hash: str) -> str:
    """Stable across machines and runs: the same change of the same release is the same id."""
    return f"{repo}:{release_id}:{event}:{body_hash}"


def event_item(change: ItemChange, impact: ImpactOf | None = None) -> EventItem:
    """``impact``: with ``[impact]`` configured, what the item changes and touches; an item
    removed from the notes touches nothing any more."""
    item = change.item
    found = impact(item) if impact is not None and change.change != "removed" else None
    return EventItem(
        subsystem=item.subsystem,
        kind=item.kind,
        text=item.text,
        section=list(item.section),
        prs=list(item.prs),
        change=change.change,
        old_text=change.old_text,
        group=item.group,
        decided_by=item.decided_by,
        confidence=round(item.confidence, 3),
        candidates=[(name, p) for name, p in item.candidates] if item.candidates else None,
        apis=found[0] if found else None,
        affects=found[1] if found else None,
    )


def added(items: Iterable[ClassifiedItem], impact: ImpactOf | None = None) -> list[EventItem]:
    return [event_item(ItemChange("added", item), impact) for item in items]


def summarize(items: list[EventItem]) -> Summary:
    by_subsystem = Counter(top_level(item.subsystem) for item in items)
    by_kind = Counter(item.kind for item in items)
    return Summary(
        items=len(items),
        by_subsystem=dict(by_subsystem.most_common()),
        by_kind=dict(by_kind.most_common()),
    )


def previous(old: Release, new: Release) -> Previous | None:
    """The name and tag ``old`` had, when ``new`` changed either (a rename, a re-tag)."""
    if (old.name, old.tag_name) == (new.name, new.tag_name):
        return None
    return Previous(name=old.name, tag=old.tag_name)


def make_event(
    event: EventType,
    repo: str,
    release: Release,
    body_hash: str,
    items: list[EventItem],
    detected_at: datetime,
    *,
    was: Previous | None = None,
    changes: list[EventItem] | None = None,
) -> Event:
    """``was``: the release's name and tag before a rename; ``changes``: on a ``released``
    event, what changed in the notes at promotion (``items`` stay the whole release)."""
    return Event(
        id=event_id(repo, release.id, event, body_hash),
        event=event,
        repo=repo,
        release_id=release.id,
        tag=release.tag_name,
        name=release.name,
        url=release.html_url,
        prerelease=release.prerelease,
        published_at=release.published_at,
        detected_at=detected_at,
        summary=summarize(items),
        items=items,
        previous=was,
        changes=changes or None,
    )


def with_items(
    event: Event, items: list[EventItem], changes: list[EventItem] | None = None
) -> Event:
    """The same event carrying only ``items`` (a notifier's filtered view), and of its
    promotion's ``changes`` only those given."""
    return event.model_copy(
        update={"items": items, "summary": summarize(items), "changes": changes or None}
    )
