"""What a digest is: a notifier's queued events of a period, as counts per repository and
subsystem, each repository's first releases, and the most important items, at most
``DIGEST_MAX_ITEMS`` of them (the rest counted, the release notes linked).

``watcher.delivery`` folds a queue into one (``delivery/digest.py``) and sends it; the plain
text of one is worded here (``digest_text``) and in the notifiers. Both use these values, so
they live here, below delivery: present never reaches delivery.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import overload

from watcher.models import Event, EventItem, top_level
from watcher.present.affects import AffectsTally
from watcher.present.limits import DIGEST_MAX_ITEMS


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
    # The most important items of some repositories alone, their events read again in queue
    # order and kept as the first pass keeps them (``watcher.delivery`` folds the queue).
    reselect: Callable[[frozenset[str]], list[DigestItem]] | None = field(
        default=None, repr=False, compare=False
    )

    def keep_items_of(self, names: Collection[str]) -> None:
        """Spends the item cap on the repositories ``names`` alone (those a notifier shows
        items for, when it cannot show every repository's): their events are read again, only
        theirs, and their most important items kept anew, shared as the first pass shares
        them; the other repositories keep their counts and show no item. The same ``names``
        give the same items, so a resumed delivery plans the same messages."""
        chosen = frozenset(names)
        if self.reselect is None or chosen >= {repo.repo for repo in self.repos}:
            return
        kept = self.reselect(chosen)
        for repo in self.repos:
            repo.items = []
        mine = by_repo(self)
        for shown in kept:
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


def by_repo(digest: Digest) -> dict[str, RepoDigest]:
    """The digest's repositories, in its order (``in_watch_order``)."""
    return {repo.repo: repo for repo in digest.repos}
