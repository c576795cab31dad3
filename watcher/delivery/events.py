"""Builds the contract's event objects from a release and its item changes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from watcher.models import (
    ClassifiedItem,
    Event,
    EventItem,
    EventType,
    Release,
    Summary,
    top_level,
)
from watcher.notes import ItemChange


def event_id(repo: str, release_id: int, event: EventType, body_hash: str) -> str:
    """Stable across machines and runs: the same change of the same release is the same id."""
    return f"{repo}:{release_id}:{event}:{body_hash}"


def event_item(change: ItemChange) -> EventItem:
    item = change.item
    return EventItem(subsystem=item.subsystem, kind=item.kind, text=item.text,
                     section=list(item.section), prs=list(item.prs), change=change.change,
                     old_text=change.old_text, group=item.group, decided_by=item.decided_by,
                     confidence=round(item.confidence, 3))


def added(items: Iterable[ClassifiedItem]) -> list[EventItem]:
    return [event_item(ItemChange("added", item)) for item in items]


def summarize(items: list[EventItem]) -> Summary:
    by_subsystem = Counter(top_level(item.subsystem) for item in items)
    by_kind = Counter(item.kind for item in items)
    return Summary(items=len(items), by_subsystem=dict(by_subsystem.most_common()),
                   by_kind=dict(by_kind.most_common()))


def make_event(event: EventType, repo: str, release: Release, body_hash: str,
               items: list[EventItem], detected_at: datetime) -> Event:
    return Event(
        id=event_id(repo, release.id, event, body_hash), event=event, repo=repo,
        release_id=release.id, tag=release.tag_name, name=release.name, url=release.html_url,
        prerelease=release.prerelease, published_at=release.published_at,
        detected_at=detected_at, summary=summarize(items), items=items)


def with_items(event: Event, items: list[EventItem]) -> Event:
    """The same event carrying only ``items`` (a notifier's filtered view)."""
    return event.model_copy(update={"items": items, "summary": summarize(items)})
