"""Decides, without any I/O, what a fresh listing means against what the store remembers.

Input: the stored records of one repo, the releases just listed (newest first), the ids GitHub
confirmed deleted, and ``now``. Output: the records to write and the events to announce.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

from watcher.delivery import ImpactOf, added, event_item, make_event
from watcher.models import Event, EventItem, Release
from watcher.notes import Analyzer, body_hash, diff_items
from watcher.store import ReleaseRecord

_OLDEST = datetime.min.replace(tzinfo=UTC)


@dataclass
class RepoPlan:
    records: list[ReleaseRecord] = field(default_factory=list)
    deleted: list[int] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


@dataclass(frozen=True)
class RepoPolicy:
    include_prereleases: bool = True
    first_run: bool = False
    first_run_announce: int = 1


def _when(release: Release) -> datetime:
    return release.published_at or release.created_at or _OLDEST


def deletion_candidates(known: dict[int, ReleaseRecord], listed: list[Release],
                        complete: bool) -> list[int]:
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


def _recreated(known: dict[int, ReleaseRecord], listed: list[Release],
               deleted: list[int]) -> dict[str, ReleaseRecord]:
    """Known releases by tag, of those confirmed deleted or missing from the listing.

    GitHub gives a tag one release at a time, so a new id listed under one of these tags is
    that release deleted and re-created (to fix its text, or by a release script): the same
    release to a reader, never a new one.
    """
    listed_ids = {release.id for release in listed}
    gone = [record for release_id, record in known.items()
            if release_id in deleted or release_id not in listed_ids]
    # Newest last, so it wins should two records ever share a tag.
    return {record.release.tag_name: record
            for record in sorted(gone, key=lambda record: _when(record.release))}


def _edit_hash(old: ReleaseRecord, new: Release, new_hash: str) -> str:
    if old.body_hash != new_hash:
        return new_hash
    title = f"{new.tag_name}\n{new.name or ''}\n{new_hash}"  # a title-only edit is its own change
    return hashlib.sha256(title.encode("utf-8")).hexdigest()


def plan_repo(repo: str, known: dict[int, ReleaseRecord], listed: list[Release],
              deleted: list[int], policy: RepoPolicy, analyzer: Analyzer,
              now: datetime, impact: ImpactOf | None = None) -> RepoPlan:
    """``impact``: the impact step, with ``[impact]`` configured."""
    plan = RepoPlan()
    announce: list[tuple[Release, str]] = []

    def all_items(release: Release) -> list[EventItem]:
        return added(analyzer.items(release.body, label=f"{repo} {release.tag_name}", repo=repo,
                                    url=release.html_url or None), impact)
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
            plan.records.append(ReleaseRecord(repo=repo, release=release, body_hash=new_hash,
                                              first_seen=now, last_changed=now))
            if history is not None and _when(release) < history:
                continue
            if policy.first_run:
                if wanted:
                    announce.append((release, new_hash))
            elif wanted:
                items = all_items(release)
                plan.events.append(make_event("published", repo, release, new_hash, items, now))
            continue
        body_changed = old.body_hash != new_hash
        title_changed = (old.release.name, old.release.tag_name) != (release.name,
                                                                      release.tag_name)
        became_release = old.release.prerelease and not release.prerelease
        if body_changed or title_changed:
            plan.records.append(old.model_copy(update={"release": release, "body_hash": new_hash,
                                                       "last_changed": now}))
            if wanted:
                changes = []
                if body_changed:
                    page = release.html_url or None  # where items past the cap are
                    changes = diff_items(analyzer.items(old.release.body, repo=repo, url=page),
                                         analyzer.items(release.body, repo=repo, url=page))
                items = [event_item(change, impact) for change in changes]
                plan.events.append(make_event("edited", repo, release,
                                              _edit_hash(old, release, new_hash), items, now))
        elif release != old.release:
            # Whitespace churn, a flag, or a field we do not announce: remember it silently.
            plan.records.append(old.model_copy(update={"release": release}))
        if became_release:
            items = all_items(release)
            plan.events.append(make_event("released", repo, release, new_hash, items, now))

    if announce and policy.first_run_announce:
        for release, new_hash in announce[-policy.first_run_announce:]:
            items = all_items(release)
            plan.events.append(make_event("published", repo, release, new_hash, items, now))

    for release_id in deleted:
        if release_id in plan.deleted:
            continue  # re-created under the same tag: nothing a reader had is gone
        record = known[release_id]
        plan.deleted.append(release_id)
        plan.events.append(make_event("deleted", repo, record.release, record.body_hash, [], now))
    return plan
