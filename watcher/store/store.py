"""The memory of release-watch: by default on disk, a diskcache directory, ``store.path``, whose
one SQLite file, ``cache.db``, holds diskcache's keys and the ledger's tables side by side; or,
with ``[store] url``, a PostgreSQL database holding the same tables and the keys as rows of
``rw_kv`` (``Store.connect``), shared by replicas. One API over both: the SQL dialect is the
backend's (``watcher/store/backend.py``), the keys go through one port (``KeyValues``).

In diskcache (``watcher/store/cachekeys.py``; opened on first use): what is a cache, read and
written by key on its own, never in a transaction with the ledger:
  "pr-labels|owner/repo|number" a PR's labels, cached for good (classify.use_pr_labels)
  ("memory", notifier, key)     what a notifier remembered: a release's first Slack message
  "atlas|package|version"       the API atlas of a release fetched from the package index
                                (``atlases.py``, which says why a key and not a table)

In tables (schema 3, ``schema.py``; values are JSON so a future version can read them):
  rw_meta           the schema version; the daemon's pid, heartbeat and next runs; the rate
                    limit the last poll saw (a table, not diskcache: read-only ``status``
                    reads them, and diskcache cannot open a store it may not write)
  rw_repo           RepoState per repo; last_poll and last_success are columns of their own
  rw_release        ReleaseRecord per (repo, release id): the raw GitHub object, body hash…
  rw_etag           the ETag last received for a listing page, and whether it was the last
  rw_event          every event, by an ever-growing sequence number; past ``store.retention``
                    its body is dropped and its id kept, so the same change is never queued
                    twice, however old
  rw_delivery       the outbox: which event to which notifier, attempts, last error, and the
                    handler's progress (Slack replies sent), oldest first by sequence
  rw_digest_queue   event ids waiting for a notifier's next digest, in sequence order
  rw_digest         per digest notifier: when the last one went out, and the one in flight
                    (kept until delivered so a crash re-sends it and resumes where it was)
  rw_org            an organisation's repo list, when refreshed, its ETags (``status`` reads it)
  rw_pace           the send times of the last minute's GitHub requests, from every process on
                    this store (``watcher/github/pacing.py``); created by any schema-3 open
  rw_subscription   channels' Slack subscriptions (``subscriptions.py``); likewise
  rw_seen_request   the Slack request URL's signatures until they expire (``seen.py``), so a
                    replay is refused across restarts and processes; likewise
  rw_suppression    the uses a team said are "not us" (``suppressions.py``); likewise
  rw_channel_quiet  what Slack channels muted and snoozed with a button (``quiet.py``); likewise

Adding an event is a few row inserts and sending one a row delete, whatever is stored; queues
are read in order without being rewritten; ``status`` reads per repo, counts the outbox per
notifier in SQL and reads only the oldest and the failing deliveries.

What belongs together is written in one ``transaction()``: the records of a poll, its events,
their deliveries and the ETag that vouches for them, so a crash leaves either all or nothing,
and a 304 after a crash can never hide a change we did not record. diskcache's keys are never
written inside one (``CacheKeys`` explains why).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from watcher.models import Event
from watcher.store.atlases import AtlasShelf
from watcher.store.backend import Backend, KeyValues, Lease
from watcher.store.cachekeys import CacheKeys
from watcher.store.cacherows import missing_value_files
from watcher.store.claims import DeliveryClaims
from watcher.store.db import DB_NAME, Database
from watcher.store.digests import DigestLedger
from watcher.store.keyed import KeyedValues
from watcher.store.notes import NotesShelf
from watcher.store.pace import PaceLedger
from watcher.store.quiet import QuietLedger
from watcher.store.records import Delivery, DigestDelivery, ReleaseRecord, RepoState, delivery_id
from watcher.store.schema import SCHEMA_VERSION
from watcher.store.seen import SeenLedger
from watcher.store.storedir import open_database
from watcher.store.subscriptions import SubscriptionLedger
from watcher.store.suppressions import SuppressionLedger

__all__ = ["SCHEMA_VERSION", "Delivery", "DigestDelivery", "ReleaseRecord", "RepoState",
           "Store", "delivery_id"]


class Store(DeliveryClaims, DigestLedger, KeyedValues, PaceLedger, QuietLedger, SeenLedger,
            SubscriptionLedger, SuppressionLedger, AtlasShelf, NotesShelf):
    def __init__(self, db: Backend, keys: KeyValues | None = None) -> None:
        self.db = db
        self.keys = keys  # None: read-only, the ledger alone
        self._pace: Backend | None = None  # opened by the first paced request
        self._pace_lock = threading.Lock()

    @classmethod
    def open(cls, path: Path, *, read_only: bool = False, fresh: bool = False) -> Store:
        """Open the store in directory ``path``: create or upgrade it, unless ``read_only``
        (nothing is written then, and diskcache is not opened: a read-only store finds no
        cached key). ``fresh``: create it even where a store lost its database
        (``release-watch store reinit``)."""
        db = open_database(path, read_only=read_only, fresh=fresh)
        return cls(db, None if read_only else CacheKeys(path))

    @classmethod
    def connect(cls, url: str, *, read_only: bool = False) -> Store:
        """Open the store in the PostgreSQL database at ``url`` (``[store] url``): create or
        upgrade its tables, unless ``read_only``. psycopg is imported only here."""
        from watcher.store.postgres import PostgresDatabase
        from watcher.store.tablekeys import TableKeys

        db = PostgresDatabase.open(url, read_only=read_only)
        return cls(db, None if read_only else TableKeys(db))

    def close(self) -> None:
        if self.keys is not None:
            self.keys.close()
        if self._pace is not None:
            self._pace.close()
        self.db.close()

    def lease(self, holder: str, seconds: float) -> Lease | None:
        """The leader's lease on a shared store, on a connection of its own (``lease.py``);
        None for the embedded store, which one daemon holds by its ``daemon.lock``."""
        return self.db.lease(holder, seconds)

    def leader(self) -> dict[str, Any] | None:
        """Who leads a shared store: its lease's holder, term and seconds left (negative once
        lapsed); None for the embedded store, or before any replica led."""
        if not self.db.has_claims:
            return None
        from watcher.store.lease import leader_of

        return leader_of(self.db)

    def fenced_by(self, token: Callable[[], int | None]) -> None:
        """Every write from now on checked against the leader's ``token`` (a shared store:
        a deposed leader's late write is refused, ``Deposed``); nothing on the embedded one."""
        if self.db.has_claims:
            self.db.fence = token

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.db.transaction():
            yield

    # ---- repos and releases ----------------------------------------------------------------
    def repo_state(self, repo: str) -> RepoState:
        row = self.db.one("SELECT repo, state, last_poll, last_success FROM rw_repo "
                          "WHERE repo = ?", (repo,))
        return RepoState.from_row(*row) if row else RepoState(repo=repo)

    def repo_states(self, repos: list[str]) -> dict[str, RepoState]:
        """Many repos' states in one statement (a poll reads them all before its fetch
        threads start, rather than one query per repo while they hold the GIL)."""
        among, names = self.db.among("repo", repos)
        rows = self.db.all("SELECT repo, state, last_poll, last_success FROM rw_repo "
                           f"WHERE {among}", (names,))
        found = {row[0]: RepoState.from_row(*row) for row in rows}
        return {repo: found.get(repo) or RepoState(repo=repo) for repo in repos}

    def repos(self) -> list[str]:
        return [row[0] for row in self.db.all("SELECT repo FROM rw_repo ORDER BY repo")]

    def last_successes(self, repos: list[str]) -> dict[str, datetime]:
        """When each of ``repos`` was last polled successfully, for those that ever were: one
        statement over the column alone (``/metrics`` reads it at scrape time), no state
        parsed."""
        among, names = self.db.among("repo", repos)
        rows = self.db.all("SELECT repo, last_success FROM rw_repo WHERE last_success IS NOT "
                           f"NULL AND {among}", (names,))
        return {repo: datetime.fromisoformat(when) for repo, when in rows}

    def put_repo_state(self, state: RepoState) -> None:
        self.db.execute("INSERT INTO rw_repo (repo, state, last_poll, last_success) "
                        "VALUES (?, ?, ?, ?) ON CONFLICT (repo) DO UPDATE SET "
                        "state = excluded.state, last_poll = excluded.last_poll, "
                        "last_success = excluded.last_success", state.row())

    def touch_repos(self, states: Iterable[RepoState]) -> None:
        """Move only the poll timestamps, for many repos in one statement."""
        self.db.executemany("UPDATE rw_repo SET last_poll = ?, last_success = ? WHERE repo = ?",
                            [(*state.timestamps(), state.repo) for state in states])

    def release_record(self, repo: str, release_id: int) -> ReleaseRecord | None:
        record = self.db.scalar("SELECT record FROM rw_release WHERE repo = ? AND id = ?",
                                (repo, release_id))
        return ReleaseRecord.model_validate_json(record) if record else None

    def release_records(self, repo: str) -> dict[int, ReleaseRecord]:
        rows = self.db.all("SELECT id, record FROM rw_release WHERE repo = ?", (repo,))
        return {rid: ReleaseRecord.model_validate_json(record) for rid, record in rows}

    def releases_known(self, repo: str) -> int:
        return int(self.db.scalar("SELECT count(*) FROM rw_release WHERE repo = ?", (repo,)))

    def put_release(self, record: ReleaseRecord) -> None:
        self.db.execute("INSERT INTO rw_release (repo, id, record) VALUES (?, ?, ?) "
                        "ON CONFLICT (repo, id) DO UPDATE SET record = excluded.record",
                        (record.repo, record.release.id, record.model_dump_json()))

    def delete_release(self, repo: str, release_id: int) -> None:
        self.db.execute("DELETE FROM rw_release WHERE repo = ? AND id = ?", (repo, release_id))

    # ---- ETags -------------------------------------------------------------------------------
    def etag(self, url: str) -> str | None:
        value = self.db.scalar("SELECT etag FROM rw_etag WHERE url = ?", (url,))
        return str(value) if value else None

    def etags(self, urls: list[str]) -> dict[str, str]:
        among, names = self.db.among("url", urls)
        rows = self.db.all(f"SELECT url, etag FROM rw_etag WHERE {among}", (names,))
        return {url: etag for url, etag in rows if etag}

    def last_pages(self, urls: list[str]) -> set[str]:
        """Those of ``urls`` that were the last page of their listing when their ETag came."""
        among, names = self.db.among("url", urls)
        rows = self.db.all(f"SELECT url FROM rw_etag WHERE last_page <> 0 AND {among}",
                           (names,))
        return {row[0] for row in rows}

    def put_etags(self, etags: dict[str, str], last_pages: Iterable[str] = ()) -> None:
        last = set(last_pages)
        self.db.executemany("INSERT INTO rw_etag (url, etag, last_page) VALUES (?, ?, ?) "
                            "ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, "
                            "last_page = excluded.last_page",
                            [(url, etag, int(url in last)) for url, etag in etags.items()])

    # ---- events and the outbox ---------------------------------------------------------------
    def event(self, event_id: str) -> Event | None:
        body = self.db.scalar("SELECT body FROM rw_event WHERE id = ?", (event_id,))
        return Event.model_validate_json(body) if body else None

    def has_event(self, event_id: str) -> bool:
        return self.db.one("SELECT 1 FROM rw_event WHERE id = ?", (event_id,)) is not None

    def add_event(self, event: Event, notifiers: list[str], now: datetime,
                  digest_notifiers: tuple[str, ...] | list[str] = ()) -> bool:
        """Record an event, queue one delivery per immediate notifier and put it in each digest
        notifier's queue; False if it was known already (the same change is never queued
        twice). A few row inserts, however many events are stored."""
        with self.transaction():
            added = self.db.execute(
                "INSERT INTO rw_event (id, detected, body) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (event.id, event.detected_at.timestamp(), event.model_dump_json())).rowcount
            if not added:
                return False
            deliveries = [Delivery(id=delivery_id(event.id, notifier), event_id=event.id,
                                   notifier=notifier, queued_at=now) for notifier in notifiers]
            self.db.executemany("INSERT INTO rw_delivery (id, event_id, notifier, record) "
                                "VALUES (?, ?, ?, ?)",
                                [(d.id, d.event_id, d.notifier, d.model_dump_json())
                                 for d in deliveries])
            self.db.executemany("INSERT INTO rw_digest_queue (notifier, event_id) VALUES (?, ?)",
                                [(notifier, event.id) for notifier in digest_notifiers])
        return True

    def pending_deliveries(self) -> list[Delivery]:
        return [Delivery.model_validate_json(record) for (record,)
                in self.db.all("SELECT record FROM rw_delivery ORDER BY seq")]

    def pending_count(self) -> int:
        return int(self.db.scalar("SELECT count(*) FROM rw_delivery"))

    def pending_by_notifier(self) -> dict[str, tuple[int, datetime]]:
        """Per notifier with deliveries queued, in outbox order: how many, and when the
        oldest was queued; counted in SQL, reading no record but each notifier's oldest.
        The notifiers are found by seeks along the (notifier, seq) index; the outbox's total
        is SQLite's count of a whole table (it counts pages, not rows), so only the other
        notifiers' rows are counted one by one, and one notifier's queue costs nothing."""
        names: list[str] = []
        while (row := self.db.one("SELECT notifier FROM rw_delivery WHERE notifier > ? "
                                  "ORDER BY notifier LIMIT 1", (names[-1] if names else "",))):
            names.append(row[0])
        counts = {name: int(self.db.scalar("SELECT count(*) FROM rw_delivery WHERE "
                                           "notifier = ?", (name,))) for name in names[:-1]}
        if names:
            counts[names[-1]] = self.pending_count() - sum(counts.values())
        oldest = {}
        for name in names:
            first = self.db.scalar("SELECT min(seq) FROM rw_delivery WHERE notifier = ?", (name,))
            record = self.db.scalar("SELECT record FROM rw_delivery WHERE seq = ?", (first,))
            oldest[name] = (first, Delivery.model_validate_json(record).queued_at)
        return {name: (counts[name], oldest[name][1])
                for name in sorted(names, key=lambda name: oldest[name][0])}

    def failing_deliveries(self) -> list[Delivery]:
        """The queued deliveries that failed at least once, oldest first: read through a
        partial index of them alone, so a long healthy outbox is not read."""
        attempts = self.db.json_int("record", "attempts")
        return [Delivery.model_validate_json(record) for (record,) in self.db.all(
            f"SELECT record FROM rw_delivery WHERE {attempts} > 0 ORDER BY seq")]

    def _delivery(self, key: str) -> Delivery | None:
        record = self.db.scalar("SELECT record FROM rw_delivery WHERE id = ?", (key,))
        return Delivery.model_validate_json(record) if record else None

    def _put_delivery(self, delivery: Delivery) -> None:
        self.db.execute("UPDATE rw_delivery SET record = ? WHERE id = ?",
                        (delivery.model_dump_json(), delivery.id))

    def save_progress(self, delivery_key: str, updates: dict[str, Any]) -> None:
        with self.transaction():
            current = self._delivery(delivery_key)
            if current is not None:
                self._put_delivery(current.model_copy(
                    update={"progress": {**current.progress, **updates}}))

    def delivered(self, delivery: Delivery) -> None:
        self.db.execute("DELETE FROM rw_delivery WHERE id = ?", (delivery.id,))

    def delivery_failed(self, delivery: Delivery, error: str, *, permanent: bool) -> Delivery:
        with self.transaction():
            # Re-read: the handler may have saved progress since ``delivery`` was loaded.
            current = self._delivery(delivery.id) or delivery
            failed = current.model_copy(update={"attempts": current.attempts + 1,
                                                "last_error": error,
                                                "permanent_failure": permanent})
            self._put_delivery(failed)
        return failed

    # ---- retention ---------------------------------------------------------------------------
    def prune(self, before: datetime) -> int:
        """Drop the bodies of events detected before ``before`` that nothing still waits for;
        their ids stay, so the same change is still recognised. Returns how many."""
        # NOT IN over the (small) pending sets is read once per statement; an index on their
        # event ids would cost every event added a write more.
        pruned = self.db.execute(
            "UPDATE rw_event SET body = NULL WHERE body IS NOT NULL AND detected < ? "
            "AND id NOT IN (SELECT event_id FROM rw_delivery) "
            "AND id NOT IN (SELECT event_id FROM rw_digest_queue)",
            (before.timestamp(),)).rowcount
        if pruned:
            self.db.reclaim()
        return int(pruned)

    def integrity(self) -> list[str]:
        """SQLite's own check of every page and index (``release-watch store check``): the
        problems it found, [] when the database is sound. Reads the whole file."""
        return self.db.integrity() + (missing_value_files(self.db, self.db.path.parent)
                                      if isinstance(self.db, Database) else [])

    @staticmethod
    def file_integrity(path: Path) -> list[str]:
        """``integrity`` of the database in ``path`` when the store cannot be opened as one
        (a schema-1 store cannot be upgraded without its value files); a file SQLite cannot
        read at all (a garbled header) raises the one-line error it is."""
        db = Database.connect(path / DB_NAME, read_only=True)
        try:
            return db.integrity() + missing_value_files(db, path)
        finally:
            db.close()

    def totals(self) -> dict[str, int]:
        """Row counts for ``store check`` (not ``status``: counting events reads history)."""
        tables = {"repos": "rw_repo", "releases": "rw_release", "events": "rw_event",
                  "pending deliveries": "rw_delivery", "queued for digests": "rw_digest_queue"}
        if self.db.has_table("Cache"):  # not in a schema-2 store read as it is
            tables["diskcache keys"] = "Cache"
        if self.db.has_table("rw_kv"):  # PostgreSQL's table for them
            tables["stored keys"] = "rw_kv"
        return {name: int(self.db.scalar(f"SELECT count(*) FROM {table}"))
                for name, table in tables.items()}

    # ---- small keyed values ------------------------------------------------------------------
    def meta(self, key: str) -> dict[str, Any] | None:
        value = self.db.scalar("SELECT value FROM rw_meta WHERE key = ?", (key,))
        return dict(json.loads(value)) if value else None

    def put_meta(self, key: str, value: dict[str, Any]) -> None:
        self.db.execute("INSERT INTO rw_meta (key, value) VALUES (?, ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (key, json.dumps(value)))

    def daemon_state(self) -> dict[str, Any] | None:
        return self.meta("daemon")

    def put_daemon_state(self, state: dict[str, Any]) -> None:
        self.put_meta("daemon", state)

    def org_state(self, org: str) -> dict[str, Any] | None:
        value = self.db.scalar("SELECT state FROM rw_org WHERE org = ?", (org.lower(),))
        return dict(json.loads(value)) if value else None

    def put_org_state(self, org: str, state: dict[str, Any]) -> None:
        self.db.execute("INSERT INTO rw_org (org, state) VALUES (?, ?) "
                        "ON CONFLICT (org) DO UPDATE SET state = excluded.state",
                        (org.lower(), json.dumps(state)))
