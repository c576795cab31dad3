"""What the store remembers, as values: a release as last seen, a repo's poll state, a queued
delivery, a digest in flight. Plain pydantic models, dumped as JSON into the store's tables."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from watcher.models import Release


class Record(BaseModel):
    # Built on first use, as the domain values are (``watcher.models.Frozen``).
    model_config = ConfigDict(extra="ignore", defer_build=True)


class ReleaseRecord(Record):
    repo: str
    release: Release
    body_hash: str
    first_seen: datetime
    last_changed: datetime
    # Announced while its package's atlas could not be had (wheels not yet published): later
    # polls ask again and announce what the package adds once it can be read.
    package_pending: bool = False


# The poll timestamps: columns of their own, moved for many repos in one statement.
_MOVING = frozenset({"last_poll", "last_success"})


class RepoState(Record):
    repo: str
    baseline_at: datetime | None = None
    last_poll: datetime | None = None
    last_success: datetime | None = None
    consecutive_failures: int = 0
    last_error: str | None = None
    releases_known: int = 0
    # The batched GraphQL check's fingerprint of the newest releases, as of the last REST read
    # that agreed with it (github.graphql_threshold); None until the first such read.
    fingerprint: str | None = None
    deep_scanned_at: datetime | None = None  # github.deep_scan: the last read of every page
    # Where GitHub redirected the last read of the repo (renamed or transferred): the config
    # should name that instead. A field with a default: state JSON without it still reads.
    moved_to: str | None = None
    # A release of the repo was announced before its package could be read: polls that
    # find the listing unchanged still ask for the package.
    package_pending: bool = False

    _COLUMNS: ClassVar[set[str]] = {"repo", *_MOVING}

    def row(self) -> tuple[str, str, str | None, str | None]:
        """(repo, state JSON, last_poll, last_success): the two timestamps are columns of
        their own, so a poll can move them for many repos in one statement."""
        return (self.repo, self.model_dump_json(exclude=self._COLUMNS), *self.timestamps())

    def timestamps(self) -> tuple[str | None, str | None]:
        """(last_poll, last_success) as their columns hold them: all a no-change poll writes."""
        return _iso(self.last_poll), _iso(self.last_success)

    @classmethod
    def from_row(cls, repo: str, state: str, last_poll: str | None,
                 last_success: str | None) -> RepoState:
        data = json.loads(state)
        data.update(repo=repo, last_poll=last_poll, last_success=last_success)
        return cls.model_validate(data)

    def same_but_timestamps(self, other: RepoState) -> bool:
        """Whether only ``last_poll``/``last_success`` differ: such a change is written in
        the poll's one batched update, never as a row of its own."""
        # Field by field, not two dumps: a no-change poll asks this of every repo it polls.
        return all(getattr(self, name) == getattr(other, name)
                   for name in type(self).model_fields if name not in _MOVING)


class Delivery(Record):
    id: str
    event_id: str
    notifier: str
    queued_at: datetime
    attempts: int = 0
    last_error: str | None = None
    permanent_failure: bool = False
    progress: dict[str, Any] = {}  # copied for each instance by pydantic


class DigestDelivery(Record):
    """A digest being sent. It covers its notifier's queue up to ``upto`` (a queue sequence
    number), so events queued while it is in flight wait for the next one; ``event_ids`` is
    read from the queue, never stored twice."""

    notifier: str
    event_ids: list[str]
    since: datetime | None
    until: datetime
    upto: int = 0
    attempts: int = 0
    last_error: str | None = None
    permanent_failure: bool = False
    progress: dict[str, Any] = {}


def delivery_id(event_id: str, notifier: str) -> str:
    return f"{notifier}|{event_id}"


def _iso(when: datetime | None) -> str | None:
    return when.isoformat() if when else None
