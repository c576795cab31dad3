"""The on-disk memory of release-watch: one diskcache directory.

Keys (tuples; values are plain JSON-able dicts so a future version can read them):
  ("schema",)                       the schema version; another version is refused clearly
  ("repo", repo)                    RepoState: poll status and the ids of the releases known
  ("release", repo, id)             ReleaseRecord: the raw GitHub object, body hash, first seen…
  ("etag", url)                     the ETag last received for a listing page
  ("event", id)                     an Event, as the notifiers receive it
  ("outbox",)                       delivery ids still to send, oldest first
  ("delivery", id)                  Delivery: which event to which notifier, attempts, last
                                    error, and the handler's progress (Slack replies sent)
  ("digest-queue", notifier)        event ids waiting for that notifier's next digest
  ("digest-since", notifier)        when its last digest went out (the next one's period start)
  ("digest-delivery", notifier)     a digest being sent: its event ids and progress, kept until
                                    delivered so a crash re-sends it and resumes where it was
  ("org", org)                      an organisation's repo list, when refreshed, its ETags
  ("pr-labels", repo, number)       a PR's labels, cached for good (classify.use_pr_labels)
  ("daemon",)                       the running daemon's pid, heartbeat and next runs

What belongs together is written in one ``transact()``: the records of a poll, its events, their
deliveries and the ETag that vouches for them, so a crash leaves either all or nothing, and a
304 after a crash can never hide a change we did not record.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import diskcache
from pydantic import BaseModel, ConfigDict, Field

from watcher.errors import StoreError
from watcher.models import Event, Release

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1


class Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ReleaseRecord(Record):
    repo: str
    release: Release
    body_hash: str
    first_seen: datetime
    last_changed: datetime


class RepoState(Record):
    repo: str
    release_ids: list[int] = Field(default_factory=list)
    baseline_at: datetime | None = None
    last_poll: datetime | None = None
    last_success: datetime | None = None
    consecutive_failures: int = 0
    last_error: str | None = None
    rate_limit_remaining: int | None = None
    rate_limit_limit: int | None = None
    rate_limit_reset: float | None = None


class Delivery(Record):
    id: str
    event_id: str
    notifier: str
    queued_at: datetime
    attempts: int = 0
    last_error: str | None = None
    permanent_failure: bool = False
    progress: dict[str, Any] = Field(default_factory=dict)


class DigestDelivery(Record):
    notifier: str
    event_ids: list[str]
    since: datetime | None
    until: datetime
    attempts: int = 0
    last_error: str | None = None
    permanent_failure: bool = False
    progress: dict[str, Any] = Field(default_factory=dict)


def delivery_id(event_id: str, notifier: str) -> str:
    return f"{notifier}|{event_id}"


class Store:
    def __init__(self, cache: diskcache.Cache) -> None:
        self.cache = cache

    @classmethod
    def open(cls, path: Path) -> Store:
        try:
            path.mkdir(parents=True, exist_ok=True)
            cache = diskcache.Cache(str(path), size_limit=2**34, eviction_policy="none")
        except (OSError, diskcache.Timeout) as error:
            raise StoreError(f"cannot open the store at {path}: {error}") from None
        store = cls(cache)
        store._check_schema(path)
        return store

    def close(self) -> None:
        self.cache.close()

    def _check_schema(self, path: Path) -> None:
        version = self.cache.get(("schema",))
        if version is None:
            if any(True for _ in self.cache.iterkeys()):
                raise StoreError(f"{path} holds data but no release-watch schema version; "
                                 "point store.path at an empty or release-watch directory")
            self.cache.set(("schema",), SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            raise StoreError(f"the store at {path} has schema version {version}; this "
                             f"release-watch reads version {SCHEMA_VERSION}")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.cache.transact():
            yield

    # ---- reading ---------------------------------------------------------------------------
    def repo_state(self, repo: str) -> RepoState:
        data = self.cache.get(("repo", repo))
        return RepoState.model_validate(data) if data else RepoState(repo=repo)

    def repos(self) -> list[str]:
        return sorted(key[1] for key in self.cache.iterkeys()
                      if isinstance(key, tuple) and key[0] == "repo")

    def release_record(self, repo: str, release_id: int) -> ReleaseRecord | None:
        data = self.cache.get(("release", repo, release_id))
        return ReleaseRecord.model_validate(data) if data else None

    def release_records(self, repo: str) -> dict[int, ReleaseRecord]:
        records = {}
        for release_id in self.repo_state(repo).release_ids:
            record = self.release_record(repo, release_id)
            if record is not None:
                records[release_id] = record
        return records

    def etag(self, url: str) -> str | None:
        value = self.cache.get(("etag", url))
        return str(value) if value else None

    def etags(self, urls: list[str]) -> dict[str, str]:
        return {url: etag for url in urls if (etag := self.etag(url))}

    def event(self, event_id: str) -> Event | None:
        data = self.cache.get(("event", event_id))
        return Event.model_validate(data) if data else None

    def has_event(self, event_id: str) -> bool:
        return ("event", event_id) in self.cache

    def pending_deliveries(self) -> list[Delivery]:
        deliveries = []
        for key in self.cache.get(("outbox",), []):
            data = self.cache.get(("delivery", key))
            if data:
                deliveries.append(Delivery.model_validate(data))
        return deliveries

    # ---- writing (call inside transaction() where several belong together) -----------------
    def put_repo_state(self, state: RepoState) -> None:
        self.cache.set(("repo", state.repo), state.model_dump(mode="json"))

    def put_release(self, record: ReleaseRecord) -> None:
        key = ("release", record.repo, record.release.id)
        self.cache.set(key, record.model_dump(mode="json"))

    def delete_release(self, repo: str, release_id: int) -> None:
        self.cache.delete(("release", repo, release_id))

    def put_etags(self, etags: dict[str, str]) -> None:
        for url, etag in etags.items():
            self.cache.set(("etag", url), etag)

    def add_event(self, event: Event, notifiers: list[str], now: datetime,
                  digest_notifiers: tuple[str, ...] | list[str] = ()) -> bool:
        """Record an event, queue one delivery per immediate notifier and put it in each digest
        notifier's queue; False if it was known already (the same change is never queued
        twice)."""
        if self.has_event(event.id):
            return False
        with self.transaction():
            self.cache.set(("event", event.id), event.model_dump(mode="json"))
            outbox: list[str] = self.cache.get(("outbox",), [])
            for notifier in notifiers:
                delivery = Delivery(id=delivery_id(event.id, notifier), event_id=event.id,
                                    notifier=notifier, queued_at=now)
                self.cache.set(("delivery", delivery.id), delivery.model_dump(mode="json"))
                outbox.append(delivery.id)
            self.cache.set(("outbox",), outbox)
            for notifier in digest_notifiers:
                queue: list[str] = self.cache.get(("digest-queue", notifier), [])
                self.cache.set(("digest-queue", notifier), [*queue, event.id])
        return True

    def save_progress(self, delivery_key: str, updates: dict[str, Any]) -> None:
        data = self.cache.get(("delivery", delivery_key))
        if data is not None:
            data["progress"] = {**data.get("progress", {}), **updates}
            self.cache.set(("delivery", delivery_key), data)

    # ---- digests ---------------------------------------------------------------------------
    def digest_queue(self, notifier: str) -> list[str]:
        return list(self.cache.get(("digest-queue", notifier), []))

    def digest_since(self, notifier: str) -> datetime | None:
        value = self.cache.get(("digest-since", notifier))
        return datetime.fromisoformat(value) if value else None

    def digest_delivery(self, notifier: str) -> DigestDelivery | None:
        data = self.cache.get(("digest-delivery", notifier))
        return DigestDelivery.model_validate(data) if data else None

    def start_digest(self, notifier: str, now: datetime) -> DigestDelivery:
        """The digest in flight, or a new one taking the whole queue as it is now."""
        with self.transaction():
            pending = self.digest_delivery(notifier)
            if pending is not None:
                return pending
            digest = DigestDelivery(notifier=notifier, event_ids=self.digest_queue(notifier),
                                    since=self.digest_since(notifier), until=now)
            self.put_digest_delivery(digest)
            return digest

    def put_digest_delivery(self, digest: DigestDelivery) -> None:
        self.cache.set(("digest-delivery", digest.notifier), digest.model_dump(mode="json"))

    def digest_delivered(self, digest: DigestDelivery) -> None:
        """Only now do its events leave the queue; events queued meanwhile stay for the next."""
        with self.transaction():
            sent = set(digest.event_ids)
            queue = [e for e in self.digest_queue(digest.notifier) if e not in sent]
            self.cache.set(("digest-queue", digest.notifier), queue)
            self.cache.set(("digest-since", digest.notifier), digest.until.isoformat())
            self.cache.delete(("digest-delivery", digest.notifier))

    def pr_labels(self, repo: str, numbers: list[int]) -> dict[int, list[str]]:
        found = {}
        for number in numbers:
            value = self.cache.get(("pr-labels", repo, number))
            if value is not None:
                found[number] = list(value)
        return found

    def put_pr_labels(self, repo: str, labels: dict[int, list[str]]) -> None:
        """Kept for good: a merged PR's release-notes labels do not change."""
        with self.transaction():
            for number, names in labels.items():
                self.cache.set(("pr-labels", repo, number), list(names))

    def org_state(self, org: str) -> dict[str, Any] | None:
        value = self.cache.get(("org", org.lower()))
        return dict(value) if value else None

    def put_org_state(self, org: str, state: dict[str, Any]) -> None:
        self.cache.set(("org", org.lower()), state)

    def put_daemon_state(self, state: dict[str, Any]) -> None:
        self.cache.set(("daemon",), state)

    def daemon_state(self) -> dict[str, Any] | None:
        value = self.cache.get(("daemon",))
        return dict(value) if value else None

    def digest_notifiers(self) -> list[str]:
        return sorted({key[1] for key in self.cache.iterkeys()
                       if isinstance(key, tuple) and key[0] in {"digest-queue",
                                                                "digest-delivery"}})

    def delivered(self, delivery: Delivery) -> None:
        with self.transaction():
            outbox: list[str] = self.cache.get(("outbox",), [])
            self.cache.set(("outbox",), [key for key in outbox if key != delivery.id])
            self.cache.delete(("delivery", delivery.id))

    def delivery_failed(self, delivery: Delivery, error: str, *, permanent: bool) -> Delivery:
        # Re-read: the handler may have saved progress since ``delivery`` was loaded.
        data = self.cache.get(("delivery", delivery.id))
        current = Delivery.model_validate(data) if data else delivery
        failed = current.model_copy(update={"attempts": current.attempts + 1,
                                            "last_error": error, "permanent_failure": permanent})
        self.cache.set(("delivery", delivery.id), failed.model_dump(mode="json"))
        return failed

