"""Digests: a notifier's queued events for a period, summarised in one pass over the queue. A
digest's queue may hold thousands of events, so it is never held whole: the events are read a
page at a time (``deliver.py`` pages through the store) and folded into a ``Digest`` (the value
``watcher.present`` defines, so its wording needs nothing of delivery) of counts per repository
and subsystem (a release's events of the period as one entry: ``fold``), each repository's
first releases, and the most important items, at most ``DIGEST_MAX_ITEMS`` of them (what
breaks the configured code first, then BC-breaking changes, deprecations, security fixes,
regressions, highlights, new features…). Everything past that is counted, and the digest links
the release notes instead. The cap is the digest's, not each repository's: a repository's
breaking changes are shown before another's bug fixes, equally important items are shared
between the repositories in turn, and what a digest costs is bounded by that cap and by the
number of repositories, not by the queue. The repositories come in the order of the config's
watch list (``order``), those it does not name (an organisation's) after them by name.

Notifiers that deliver a digest event by event (``jsonl``, and ``Notifier.send_digest`` by
default) read ``Digest.events``, which reads the queue again, page by page, as it is iterated.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from itertools import count

from watcher.delivery.fold import ReleaseFold, key_of_id
from watcher.models import ChangeType, Event, EventItem, top_level
from watcher.present import (
    DIGEST_MAX_ITEMS,
    KIND_ORDER,
    Digest,
    DigestItem,
    QueuedEvents,
    ReleaseRef,
    RepoDigest,
    SubsystemDigest,
    by_repo,
    happened,
    plural,
    release_title,
    subsystem_name,
)
from watcher.untrusted import clean_line

# What a digest is lives in ``watcher.present`` (its wording and the notifiers use it too);
# the names notifiers know it by from here are kept.
__all__ = ["DIGEST_MAX_ITEMS", "Digest", "RepoDigest", "build_digest", "by_repo", "by_subsystem",
           "in_watch_order", "summarize_digest"]

RELEASES_LISTED = 3  # a repository's releases named one by one, then counted and linked
_RANK = {kind: rank for rank, kind in enumerate(KIND_ORDER)}


def importance(item: EventItem) -> tuple[int, int]:
    """Lower first: an item that breaks the configured code, then by kind (``KIND_ORDER``)."""
    return (0 if item.breaks_code else 1, _RANK.get(item.kind, len(KIND_ORDER)))


def _what(event: Event, note: str | None = None) -> str:
    """``released: 609 changes``; ``note``: what a folded entry's other events did
    (``edited twice``)."""
    verb = happened(event)
    if event.previous is not None and event.previous.tag != event.tag:
        verb += f" (was {clean_line(event.previous.tag)})"  # a pre-release's tag, usually
    if event.event == "edited":
        changes: Counter[ChangeType] = Counter(item.change for item in event.items)
        said = f"{verb}: " + ", ".join(f"{n} {c}" for c, n in changes.items()) if changes else verb
    else:
        said = f"{verb}: {plural(len(event.items), 'change')}"
    return f"{said} ({note})" if note else said


def _releases_page(url: str) -> str | None:
    """``…/owner/repo/releases/tag/v1`` → ``…/owner/repo/releases``."""
    base, found, _ = url.partition("/releases/tag/")
    return f"{base}/releases" if found else None


class _Folder:
    """Folds routed events, in queue order, into per-repository tallies and the
    ``max_items`` most important items (a bounded heap). Items equally important (by
    ``importance``) are shared between repositories in turn: each one's first such item
    before any one's second, so a busy repository does not crowd a quiet one out of its
    thread; then the earlier item."""

    def __init__(self, max_items: int) -> None:
        self.max_items = max_items
        self.repos: dict[str, RepoDigest] = {}
        self.first: datetime | None = None
        self.size = 0
        self._heap: list[tuple[tuple[int, int, int, int], DigestItem]] = []
        self._order = count()
        self._turns: Counter[tuple[str, int, int]] = Counter()  # per repository and rank

    def add(self, event: Event, note: str | None = None) -> None:
        """One entry of the queue (``note``: what happened to a folded release besides)."""
        self.size += 1
        self.first = min(self.first or event.detected_at, event.detected_at)
        repo = self.repos.get(event.repo)
        if repo is None:
            repo = self.repos[event.repo] = RepoDigest(
                event.repo, releases_page=_releases_page(event.url)
            )
        ref = ReleaseRef(event.repo, release_title(event), event.url, _what(event, note))
        repo.events += 1
        if len(repo.releases) < RELEASES_LISTED:
            repo.releases.append(ref)
        items = [item for item in event.items if item.change != "removed"]  # no news
        repo.changes += len(items)
        for (top, kind), number in Counter(
            (top_level(item.subsystem), item.kind) for item in items
        ).items():
            group = repo.subsystems.get(top)
            if group is None:
                group = repo.subsystems[top] = SubsystemDigest(top, subsystem_name(top))
            group.count += number
            group.by_kind[kind] += number
            repo.kinds[kind] += number
        for item in items:
            if item.affects:
                repo.affects.add(item, self.max_items)
            self._keep(ref, item)

    def _keep(self, ref: ReleaseRef, item: EventItem) -> None:
        first, second = importance(item)
        turn = self._turns[ref.repo, first, second]
        self._turns[ref.repo, first, second] += 1
        rank = (-first, -second, -turn)  # negated: the heap's top is the least important kept
        heap = self._heap
        if len(heap) >= self.max_items and (not heap or rank <= heap[0][0][:3]):
            return  # no more important than any kept one (a tie keeps the earlier item)
        entry = ((*rank, -next(self._order)), DigestItem(ref, item))
        if len(heap) < self.max_items:
            heapq.heappush(heap, entry)
        else:
            heapq.heapreplace(heap, entry)

    def kept(self) -> list[DigestItem]:
        """The kept items, most important first; a repository's equally important items in
        queue order."""
        return [shown for _, shown in sorted(self._heap, key=lambda e: e[0], reverse=True)]


def in_watch_order(repos: Iterable[RepoDigest], order: Sequence[str] = ()) -> list[RepoDigest]:
    """``repos`` in the order of ``order`` (the config's watch list, names in any case), the
    repositories it does not name after them, by name: a stable order, week after week."""
    position = {name.lower(): rank for rank, name in enumerate(order)}
    return sorted(
        repos, key=lambda repo: (position.get(repo.repo.lower(), len(position)), repo.repo.lower())
    )


def summarize_digest(
    notifier: str,
    read: Callable[[], Iterable[Event]],
    *,
    since: datetime | None,
    now: datetime,
    max_items: int = DIGEST_MAX_ITEMS,
    order: Sequence[str] = (),
    read_repos: Callable[[frozenset[str]], Iterable[Event]] | None = None,
    read_ids: Callable[[], Iterable[str]] | None = None,
) -> Digest:
    """One pass over ``read()``, the notifier's routed events in queue order; the digest's
    ``events`` read them again when a notifier iterates them. ``order``: the watch list, as
    ``in_watch_order`` takes it; ``read_repos``: the events of some repositories only, in
    queue order (for ``Digest.keep_items_of``)."""
    folder = _Folder(max_items)
    fold = ReleaseFold(read, read_ids)
    for event, note in fold:
        folder.add(event, note)
    for shown in folder.kept():
        folder.repos[shown.release.repo].items.append(shown)
    start = min([when for when in (folder.first, since) if when is not None], default=now)
    return Digest(
        notifier=notifier,
        period_start=start,
        period_end=now,
        events=QueuedEvents(read, fold.size),
        repos=in_watch_order(folder.repos.values(), order),
        max_items=max_items,
        reselect=None if read_repos is None else _reselect(read_repos, read_ids, max_items),
    )


def _reselect(read_repos: Callable[[frozenset[str]], Iterable[Event]],
              read_ids: Callable[[], Iterable[str]] | None, max_items: int,
              ) -> Callable[[frozenset[str]], list[DigestItem]]:
    """``Digest.reselect``: the most important items of some repositories alone, their events
    read again (only theirs) and folded as the first pass folds the queue."""

    def reselect(chosen: frozenset[str]) -> list[DigestItem]:
        folder = _Folder(max_items)
        theirs = None if read_ids is None else (
            lambda: (i for i in read_ids() if key_of_id(i)[0] in chosen))
        for event, note in ReleaseFold(lambda: read_repos(chosen), theirs):
            folder.add(event, note)
        return folder.kept()

    return reselect


def build_digest(
    notifier: str,
    events: list[Event],
    *,
    since: datetime | None,
    now: datetime,
    max_items: int = DIGEST_MAX_ITEMS,
    order: Sequence[str] = (),
) -> Digest:
    """A digest of events already in memory (tests, previews of a few events)."""
    ordered = sorted(events, key=lambda e: (e.detected_at, e.repo, e.release_id))
    digest = summarize_digest(
        notifier,
        lambda: iter(ordered),
        since=since,
        now=now,
        max_items=max_items,
        order=order,
        read_repos=lambda names: (event for event in ordered if event.repo in names),
    )
    digest.events = ordered
    return digest


def by_subsystem(events: Iterable[Event]) -> list[SubsystemDigest]:
    """One repository's changes per subsystem, most first (a digest never mixes PyTorch and
    XLA items under one subsystem: call this per repository)."""
    folder = _Folder(0)
    for event in events:
        folder.add(event)
    groups: dict[str, SubsystemDigest] = {}
    for repo in folder.repos.values():
        for group in repo.subsystems.values():
            merged = groups.setdefault(
                group.subsystem, SubsystemDigest(group.subsystem, group.name)
            )
            merged.count += group.count
            merged.by_kind.update(group.by_kind)
    return sorted(groups.values(), key=lambda s: (-s.count, s.name))
