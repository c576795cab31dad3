"""Decides, without any I/O, what a fresh listing means against what the store remembers.

Input: the stored records of one repo, the releases just listed (newest first), the ids GitHub
confirmed deleted, and ``now``. Output: the records to write and the events to announce.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from watcher.delivery import (
    ImpactOf,
    ReleaseImpact,
    event_item,
    make_event,
    previous,
    whole_release,
)
from watcher.models import ClassifiedItem, Event, EventItem, Release
from watcher.notes import Analyzer, body_hash, diff_items
from watcher.store import ReleaseRecord

_OLDEST = datetime.min.replace(tzinfo=UTC)
# How long a release announced before its wheels were published is asked about again: the
# wheels of a torch release follow its notes by hours or days, never by a month.
PACKAGE_WAIT = timedelta(days=30)

logger = logging.getLogger(__name__)


@dataclass
class RepoPlan:
    records: list[ReleaseRecord] = field(default_factory=list)
    deleted: list[int] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    baseline: int | None = None  # a repo's first poll: the releases recorded as its history

    def mark_pending(self, release_id: int) -> None:
        """The release was announced without its package's API changes: ask again later."""
        self.records = [record.model_copy(update={"package_pending": True})
                        if record.release.id == release_id else record
                        for record in self.records]

    def pending(self, known: dict[int, ReleaseRecord]) -> bool:
        """Whether a release of the repo still waits for its package, once this plan is kept."""
        after = {**known, **{record.release.id: record for record in self.records}}
        return any(record.package_pending for release_id, record in after.items()
                   if release_id not in self.deleted)


@dataclass(frozen=True)
class RepoPolicy:
    include_prereleases: bool = True
    first_run: bool = False
    first_run_announce: int = 1


def _when(release: Release) -> datetime:
    return release.published_at or release.created_at or _OLDEST


def deletion_candidates(
    known: dict[int, ReleaseRecord], listed: list[Release], complete: bool
) -> list[int]:
    """Known releases missing from the listing where they should have been.

    Absence from a page is no proof (a release may have slid onto page 2), so only releases
    newer than the oldest one listed, or any when the listing was complete, are candidates;
    the caller confirms each with a direct look-up.
    """
    listed_ids = {release.id for release in listed}
    missing = [rid for rid in known if rid not in listed_ids]
    if complete or not listed:
        return missing if complete else []
    oldest = min(_when(release) for release in listed)
    return [rid for rid in missing if _when(known[rid].release) > oldest]


def _recreated(
    known: dict[int, ReleaseRecord], listed: list[Release], deleted: list[int]
) -> dict[str, ReleaseRecord]:
    """Known releases by tag, of those confirmed deleted or missing from the listing.

    GitHub gives a tag one release at a time, so a new id listed under one of these tags is
    that release deleted and re-created (to fix its text, or by a release script): the same
    release to a reader, never a new one.
    """
    listed_ids = {release.id for release in listed}
    gone = [
        record
        for release_id, record in known.items()
        if release_id in deleted or release_id not in listed_ids
    ]
    # Newest last, so it wins should two records ever share a tag.
    return {
        record.release.tag_name: record
        for record in sorted(gone, key=lambda record: _when(record.release))
    }


def _edit_hash(old: ReleaseRecord, new: Release, new_hash: str) -> str:
    if old.body_hash != new_hash:
        return new_hash
    title = f"{new.tag_name}\n{new.name or ''}\n{new_hash}"  # a title-only edit is its own change
    return hashlib.sha256(title.encode("utf-8")).hexdigest()


def _changes(
    old: Release,
    new_items: list[ClassifiedItem],
    analyzer: Analyzer,
    repo: str,
    page: str | None,
    impact: ReleaseImpact | None,
) -> list[EventItem]:
    """What the notes added, removed or changed since ``old``, item by item. ``page``: the
    release's page now (where items past the cap are), the same on both sides of the diff."""
    before = analyzer.items(old.body, repo=repo, url=page, tag=old.tag_name)
    return [event_item(change, impact) for change in diff_items(before, new_items)]


def _later_events(
    repo: str,
    old: ReleaseRecord,
    release: Release,
    new_hash: str,
    analyzed: Callable[[Release], list[ClassifiedItem]],
    analyzer: Analyzer,
    now: datetime,
    impact: ImpactOf | None,
) -> list[Event]:
    """What happened to a known release: it became a full release, or its notes, name or tag
    changed in a way a reader can see; nothing otherwise."""
    body_changed = old.body_hash != new_hash
    was = previous(old.release, release)
    page = release.html_url or None
    if not body_changed and was is None and not (
            old.release.prerelease and not release.prerelease):
        return []
    found = impact(repo, release) if impact is not None else None
    if old.release.prerelease and not release.prerelease:
        # One event says it all: what it is called now and was, and what its notes changed
        # at promotion; its items are the whole release, for readers who never saw the
        # pre-release (a notifier with prereleases = false).
        new_items = analyzed(release)
        changes = (
            _changes(old.release, new_items, analyzer, repo, page, found) if body_changed else None
        )
        items = whole_release(new_items, found)
        return [counted(make_event("released", repo, release, new_hash, items, now, was=was,
                                   changes=changes), found)]
    new_items = analyzed(release)
    changes = _changes(old.release, new_items, analyzer, repo, page, found) if body_changed else []
    event = make_event(
        "edited", repo, release, _edit_hash(old, release, new_hash), changes, now, was=was
    )
    return [event.model_copy(update={"release_items": whole_release(new_items, found)})]


def _package_arrived(
    old: ReleaseRecord,
    release: Release,
    new_hash: str,
    analyzed: Callable[[Release], list[ClassifiedItem]],
    now: datetime,
    impact: ImpactOf,
) -> tuple[ReleaseRecord | None, list[Event]]:
    """A release announced before its package could be read, asked about again: once the
    package's API changes can be had, an ``edited`` event with what they add to what was
    announced (its own items, and the notes' items whose uses changed), when that touches the
    code; the record no longer pending. (None, []) while still pending."""
    repo = old.repo
    done = old.model_copy(update={"package_pending": False, "release": release})
    if now - old.first_seen > PACKAGE_WAIT:
        logger.info("package diff of %s %s given up: no package after %d days", repo,
                    release.tag_name, PACKAGE_WAIT.days)
        return done, []
    found = impact(repo, release)
    if found.pending:
        return None, []
    items = analyzed(release)
    announced = {(item.origin, item.text): item
                 for item in whole_release(items, found.without_package())}
    now_items = whole_release(items, found)
    changes = []
    for item in now_items:
        was = announced.get((item.origin, item.text))
        if was is None:
            changes.append(item)
        elif (was.apis, was.affects) != (item.apis, item.affects):
            changes.append(item.model_copy(update={"change": "changed"}))
    if not any(item.affects for item in changes):
        return done, []
    package_hash = hashlib.sha256(f"{new_hash}\npackage".encode()).hexdigest()
    event = make_event("edited", repo, release, package_hash, changes, now)
    return done, [counted(event, found).model_copy(update={"release_items": now_items})]


def counted(event: Event, impact: ReleaseImpact | None) -> Event:
    """The event, its summary counting the package's API changes that touch no code."""
    if impact is None or not impact.untouched:
        return event
    summary = event.summary.model_copy(update={"unmentioned_api_changes": impact.untouched})
    return event.model_copy(update={"summary": summary})


def plan_repo(
    repo: str,
    known: dict[int, ReleaseRecord],
    listed: list[Release],
    deleted: list[int],
    policy: RepoPolicy,
    analyzer: Analyzer,
    now: datetime,
    impact: ImpactOf | None = None,
) -> RepoPlan:
    """``impact``: the impact step, with ``[impact]`` configured."""
    plan = RepoPlan()
    announce: list[tuple[Release, str]] = []

    def analyzed(release: Release) -> list[ClassifiedItem]:
        return analyzer.items(
            release.body,
            label=f"{repo} {release.tag_name}",
            repo=repo,
            url=release.html_url or None,
            tag=release.tag_name,
        )

    def announced(release: Release, new_hash: str) -> Event:
        """A release's ``published`` event: every item, with the package's own changes."""
        found = impact(repo, release) if impact is not None else None
        if found is not None and found.pending:
            plan.mark_pending(release.id)
        items = whole_release(analyzed(release), found)
        return counted(make_event("published", repo, release, new_hash, items, now), found)

    def all_items(release: Release) -> list[EventItem]:
        return whole_release(analyzed(release),
                             impact(repo, release) if impact is not None else None)

    # A release older than every one we know was history when our baseline was taken (it was
    # on a page the baseline did not read, found now by a deep scan): recorded, not announced.
    history = min((_when(record.release) for record in known.values()), default=None)
    recreated = _recreated(known, listed, deleted)
    for release in sorted((r for r in listed if not r.draft), key=_when):
        new_hash = body_hash(release.body)
        old = known.get(release.id)
        if old is None and (old := recreated.pop(release.tag_name, None)) is not None:
            # Compared with what the deleted release said, below; its record moves to the new
            # id (written under it there, dropped under the old one here).
            plan.deleted.append(old.release.id)
        wanted = policy.include_prereleases or not release.prerelease
        if old is None:
            plan.records.append(
                ReleaseRecord(
                    repo=repo, release=release, body_hash=new_hash, first_seen=now, last_changed=now
                )
            )
            if history is not None and _when(release) < history:
                continue
            if policy.first_run:
                if wanted:
                    announce.append((release, new_hash))
            elif wanted:
                plan.events.append(announced(release, new_hash))
            continue
        body_changed = old.body_hash != new_hash
        if body_changed or previous(old.release, release) is not None:
            plan.records.append(
                old.model_copy(
                    update={"release": release, "body_hash": new_hash, "last_changed": now}
                )
            )
        elif release != old.release:
            # Whitespace churn, a flag, or a field we do not announce: remember it silently.
            plan.records.append(old.model_copy(update={"release": release}))
        if wanted:
            later = _later_events(repo, old, release, new_hash, analyzed, analyzer, now, impact)
            plan.events += later
            if not later and old.package_pending and impact is not None:
                record, arrived = _package_arrived(old, release, new_hash, analyzed, now, impact)
                if record is not None:
                    plan.records = [r for r in plan.records if r.release.id != release.id]
                    plan.records.append(record)
                plan.events += arrived

    if policy.first_run:
        plan.baseline = len(plan.records)
    if announce and policy.first_run_announce:
        for release, new_hash in announce[-policy.first_run_announce :]:
            plan.events.append(announced(release, new_hash))

    for release_id in deleted:
        if release_id in plan.deleted:
            continue  # re-created under the same tag: nothing a reader had is gone
        record = known[release_id]
        plan.deleted.append(release_id)
        event = make_event("deleted", repo, record.release, record.body_hash, [], now)
        plan.events.append(event.model_copy(update={"release_items": all_items(record.release)}))
    return plan
