"""Builds the contract's event objects from a release and its item changes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Protocol

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


class Found(Protocol):
    """An item's APIs and their uses in the configured code (``watcher.impact.ItemImpact``),
    and the uses the team suppressed (counted on the item, never shown as claims)."""

    @property
    def apis(self) -> list[str]: ...

    @property
    def affects(self) -> list[Affect]: ...

    @property
    def suppressed(self) -> Sequence[object]: ...


class ReleaseImpact(Protocol):
    """The impact step for one release (``watcher.impact.ReleaseAnalysis``): ``of`` an item,
    its APIs and uses (None when it names none), read in the notes' order; then the package's
    API changes no item spoke of that touch the code, as items of their own, and how many
    touch none. Passed in, so events need not know how impact is found."""

    @property
    def untouched(self) -> int: ...

    @property
    def pending(self) -> bool:
        """The package's API changes could not be had yet; a later poll asks again."""
        ...

    def without_package(self) -> ReleaseImpact:
        """The release read from its notes alone."""
        ...

    def of(self, item: ClassifiedItem) -> Found | None: ...

    def unmentioned(self) -> Sequence[tuple[ClassifiedItem, Found]]: ...


# The impact step of a poll: a repo's release → its ``ReleaseImpact``.
ImpactOf = Callable[[str, Release], ReleaseImpact]


def event_id(repo: str, release_id: int, event: EventType, body_hash: str) -> str:
    """Stable across machines and runs: the same change of the same release is the same id."""
    return f"{repo}:{release_id}:{event}:{body_hash}"


def event_item(change: ItemChange, impact: ReleaseImpact | None = None,
               found: Found | None = None) -> EventItem:
    """``impact``: with ``[impact]`` configured, what the item changes and touches; an item
    removed from the notes touches nothing any more. ``found``: known already (an item the
    package's diff made)."""
    item = change.item
    if found is None and impact is not None and change.change != "removed":
        found = impact.of(item)
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
        apis=found.apis if found else None,
        affects=found.affects if found else None,
        suppressed=len(found.suppressed) if found else 0,
    )


def added(items: Iterable[ClassifiedItem], impact: ReleaseImpact | None = None
          ) -> list[EventItem]:
    return [event_item(ItemChange("added", item), impact) for item in items]


def whole_release(items: Iterable[ClassifiedItem], impact: ReleaseImpact | None = None
                  ) -> list[EventItem]:
    """A release's items as a reader gets them: the notes' own, then (with ``[impact]``) the
    package's API changes the notes do not mention, where they touch the code."""
    found = added(items, impact)
    for item, touched in impact.unmentioned() if impact is not None else ():
        found.append(event_item(ItemChange("added", item), found=touched).model_copy(
            update={"origin": "package"}))
    return found


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
    summary = summarize(items).model_copy(
        update={"unmentioned_api_changes": event.summary.unmentioned_api_changes})
    return event.model_copy(update={"items": items, "summary": summary,
                                    "changes": changes or None})
