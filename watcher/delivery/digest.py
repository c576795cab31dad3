"""Digests: a notifier's queued events for a period, summarised in one pass over the queue. A
digest's queue may hold thousands of events, so it is never held whole: the events are read a
page at a time (``deliver.py`` pages through the store) and folded into a ``Digest`` of counts
per repository and subsystem (a release's events of the period as one entry: ``fold``), each
repository's first releases, and the most important items, at most ``DIGEST_MAX_ITEMS`` of them
(what breaks the configured code first, then BC-breaking changes, deprecations, security fixes,
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
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import count, islice
from typing import overload

from watcher.delivery.fold import ReleaseFold, key_of_id
from watcher.models import ChangeType, Event, EventItem, top_level
from watcher.present import (
    KIND_ORDER,
    AffectsTally,
    happened,
    plural,
    release_title,
    subsystem_name,
)
from watcher.untrusted import clean_line

DIGEST_MAX_ITEMS = 200  # items a digest shows whole; the rest are counted and linked
RELEASES_LISTED = 3  # a repository's releases named one by one, then counted and linked
_RANK = {kind: rank for rank, kind in enumerate(KIND_ORDER)}


def importance(item: EventItem) -> tuple[int, int]:
    """Lower first: an item that breaks the configured code, then by kind (``KIND_ORDER``)."""
    return (0 if item.breaks_code else 1, _RANK.get(item.kind, len(KIND_ORDER)))


@dataclass(frozen=True)
class ReleaseRef:
    """One event of the digest as a line: ``PyTorch 2.7.0`` released: 609 changes."""

    repo: str
    title: str
    url: str
    what: str


@dataclass
class SubsystemDigest:
    subsystem: str  # top-level id
    name: str  # what readers call it
    count: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class DigestItem:
    """A shown item, with the release it came from."""

    release: ReleaseRef
    item: EventItem


@dataclass
class RepoDigest:
    repo: str
    events: int = 0
    changes: int = 0
    releases: list[ReleaseRef] = field(default_factory=list)  # the first RELEASES_LISTED
    releases_page: str | None = None  # the repository's releases on GitHub
    subsystems: dict[str, SubsystemDigest] = field(default_factory=dict)
    kinds: Counter[str] = field(default_factory=Counter)
    affects: AffectsTally = field(default_factory=AffectsTally)
    items: list[DigestItem] = field(default_factory=list)  # shown, most important first

    @property
    def more_releases(self) -> int:
        return self.events - len(self.releases)

    @property
    def more_items(self) -> int:
        return self.changes - len(self.items)

    def by_subsystem(self) -> list[SubsystemDigest]:
        """Most changes first."""
        return sorted(self.subsystems.values(), key=lambda s: (-s.count, s.name))

    def shown_by_subsystem(self) -> list[tuple[SubsystemDigest, list[EventItem]]]:
        """The shown items per subsystem (in ``by_subsystem`` order), most important first."""
        groups: dict[str, list[EventItem]] = {}
        for shown in self.items:
            groups.setdefault(top_level(shown.item.subsystem), []).append(shown.item)
        return [
            (group, groups[group.subsystem])
            for group in self.by_subsystem()
            if group.subsystem in groups
        ]


class QueuedEvents(Sequence[Event]):
    """A digest's events, read again (a page at a time) each time they are iterated; a slice
    is a view that skips the events before it, never a copy of the queue."""

    def __init__(self, read: Callable[[], Iterable[Event]], size: int, start: int = 0) -> None:
        self._read = read
        self._size = size
        self._start = min(start, size)

    def __len__(self) -> int:
        return self._size - self._start

    def __iter__(self) -> Iterator[Event]:
        return islice(self._read(), self._start, self._size)

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> QueuedEvents: ...

    def __getitem__(self, index: int | slice) -> Event | QueuedEvents:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1 or stop != len(self):
                raise ValueError("a digest's events slice only as events[start:]")
            return QueuedEvents(self._read, self._size, self._start + start)
        position = index + len(self) if index < 0 else index
        if not 0 <= position < len(self):
            raise IndexError(index)
        return next(islice(iter(self), position, None))


@dataclass
class Digest:
    notifier: str
    period_start: datetime
    period_end: datetime
    events: Sequence[Event]
    repos: list[RepoDigest] = field(default_factory=list)
    max_items: int = DIGEST_MAX_ITEMS
    # The events of some repositories only, read again in queue order (``keep_items_of``).
    read_repos: Callable[[frozenset[str]], Iterable[Event]] | None = field(
        default=None, repr=False, compare=False
    )
    # The queue's event ids (``ReleaseFold``: how many events each release has), if cheap.
    read_ids: Callable[[], Iterable[str]] | None = field(default=None, repr=False, compare=False)

    def keep_items_of(self, names: Collection[str]) -> None:
        """Spends the item cap on the repositories ``names`` alone (those a notifier shows
        items for, when it cannot show every repository's): their events are read again, only
        theirs, and their most important items kept anew, shared as the first pass shares
        them; the other repositories keep their counts and show no item. The same ``names``
        give the same items, so a resumed delivery plans the same messages."""
        chosen = frozenset(names)
        if self.read_repos is None or chosen >= {repo.repo for repo in self.repos}:
            return
        folder = _Folder(self.max_items)
        read, ids = self.read_repos, self.read_ids
        theirs = None if ids is None else (
            lambda: (i for i in ids() if key_of_id(i)[0] in chosen))
        for event, note in ReleaseFold(lambda: read(chosen), theirs):
            folder.add(event, note)
        for repo in self.repos:
            repo.items = []
        mine = by_repo(self)
        for shown in folder.kept():
            if shown.release.repo in mine:
                mine[shown.release.repo].items.append(shown)

    @property
    def empty(self) -> bool:
        return not self.events

    @property
    def event_count(self) -> int:
        return len(self.events)

    @property
    def changes(self) -> int:
        return sum(repo.changes for repo in self.repos)

    @property
    def shown(self) -> int:
        return sum(len(repo.items) for repo in self.repos)

    @property
    def more_items(self) -> int:
        return self.changes - self.shown

    def kinds(self) -> Counter[str]:
        return sum((repo.kinds for repo in self.repos), Counter())


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
        read_repos=read_repos,
        read_ids=read_ids,
    )


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


def by_repo(digest: Digest) -> dict[str, RepoDigest]:
    """The digest's repositories, in its order (``in_watch_order``)."""
    return {repo.repo: repo for repo in digest.repos}


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
