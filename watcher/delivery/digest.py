"""Digests: a notifier's queued events for a period, summarised per repo and per subsystem."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from watcher.models import Event, EventItem, Frozen, top_level
from watcher.present import subsystem_name

IMPORTANCE = ("bc_breaking", "deprecation", "security", "regression", "new_feature")
TOP_ITEMS = 5


class Digest(Frozen):
    notifier: str
    period_start: datetime
    period_end: datetime
    events: list[Event]

    @property
    def empty(self) -> bool:
        return not self.events


@dataclass(frozen=True)
class SubsystemDigest:
    subsystem: str        # top-level id
    name: str             # what readers call it
    count: int
    by_kind: dict[str, int]
    top: list[tuple[Event, EventItem]]  # most important first: BC, deprecations, new features


def build_digest(notifier: str, events: list[Event], *, since: datetime | None,
                 now: datetime) -> Digest:
    start = min([e.detected_at for e in events] + ([since] if since else []), default=now)
    ordered = sorted(events, key=lambda e: (e.detected_at, e.repo, e.release_id))
    return Digest(notifier=notifier, period_start=start, period_end=now, events=ordered)


def by_repo(digest: Digest) -> dict[str, list[Event]]:
    """The digest's events per repository, in the order repositories first appear."""
    repos: dict[str, list[Event]] = {}
    for event in digest.events:
        repos.setdefault(event.repo, []).append(event)
    return repos


def by_subsystem(events: list[Event]) -> list[SubsystemDigest]:
    """One repository's changes per subsystem, most first (a digest never mixes PyTorch and
    XLA items under one subsystem: call this per repository)."""
    groups: dict[str, list[tuple[Event, EventItem]]] = {}
    for event in events:
        for item in event.items:
            if item.change != "removed":
                groups.setdefault(top_level(item.subsystem), []).append((event, item))
    result = []
    for subsystem, pairs in groups.items():
        kinds = Counter(item.kind for _, item in pairs)
        important = [pair for kind in IMPORTANCE for pair in pairs if pair[1].kind == kind]
        result.append(SubsystemDigest(subsystem, subsystem_name(subsystem), len(pairs),
                                      dict(kinds.most_common()), important[:TOP_ITEMS]))
    return sorted(result, key=lambda s: (-s.count, s.name))
