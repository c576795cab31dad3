"""Upgrades a schema-1 store (everything as diskcache keys) to schema 3 inside the caller's
transaction, so a crash half-way leaves the schema-1 store untouched.

The ledger's keys (releases, repo states, ETags, events, the outbox, deliveries, digest queues,
organisations, the daemon's state and the schema version) become rows of the ledger's tables
and leave diskcache; the PR labels stay in diskcache under schema 3's keys
(``watcher/store/cachekeys.py``), and diskcache's own tables stay as they were. Schema-1 keys were
pickled tuples (``("event", id)``, ``("outbox",)``…) and big values lived in diskcache's
``.val`` files; ``diskcache.Disk`` decodes both (``watcher/store/cacherows.py``). Rows are streamed
one at a time: only the small things whose order or totals need the whole picture (the outbox
list, digest queues, deliveries and repo states) are held until the end, and the PR labels,
written under their new keys once diskcache's table is no longer being read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from watcher.errors import StoreError
from watcher.models import Event
from watcher.store.cachekeys import pr_labels_key
from watcher.store.cacherows import CacheRow, CacheRows
from watcher.store.db import Database
from watcher.store.records import Delivery, DigestDelivery, ReleaseRecord, RepoState


@dataclass
class _Held:
    """What is written after the scan, once its order or totals are known."""

    schema: Any = None
    outbox: list[str] = field(default_factory=list)
    deliveries: dict[str, dict[str, Any]] = field(default_factory=dict)
    queues: dict[str, list[str]] = field(default_factory=dict)
    since: dict[str, str] = field(default_factory=dict)
    digests: dict[str, dict[str, Any]] = field(default_factory=dict)
    repos: list[dict[str, Any]] = field(default_factory=list)
    moved: list[CacheRow] = field(default_factory=list)
    labels: dict[str, list[str]] = field(default_factory=dict)  # a cache in schema 3 too
    rows: int = 0


def migrate_v1(db: Database, directory: Path) -> list[Path]:
    """Move every schema-1 ledger key into the tables (which must exist) and out of diskcache;
    returns the value files to delete once the transaction has committed."""
    cache = CacheRows(db, directory)
    held = _Held()
    for row in cache.rows():  # nothing is written to diskcache's table while it is read
        held.rows += 1
        _copy(db, row.key, cache.value(row), held)
        held.moved.append(replace(row, key=None, value=None))  # what deleting it needs
    if held.rows and held.schema != 1:
        raise StoreError(f"{directory} holds data but no release-watch schema version; "
                         "point store.path at an empty or release-watch directory")
    _write_held(db, held)
    leftovers = cache.delete(held.moved)
    for key, labels in held.labels.items():
        leftovers += cache.put(key, labels)
    return leftovers


def _copy(db: Database, key: Any, value: Any, held: _Held) -> None:
    kind = key[0] if isinstance(key, tuple) and key else None
    if kind == "schema":
        held.schema = value
    elif kind == "release":
        record = ReleaseRecord.model_validate(value)
        db.execute("INSERT INTO rw_release (repo, id, record) VALUES (?, ?, ?)",
                   (record.repo, record.release.id, record.model_dump_json()))
    elif kind == "event":
        event = Event.model_validate(value)
        db.execute("INSERT INTO rw_event (id, detected, body) VALUES (?, ?, ?)",
                   (event.id, event.detected_at.timestamp(), event.model_dump_json()))
    elif kind == "etag":
        db.execute("INSERT INTO rw_etag (url, etag) VALUES (?, ?)", (key[1], str(value)))
    elif kind == "org":
        db.execute("INSERT INTO rw_org (org, state) VALUES (?, ?)", (key[1], json.dumps(value)))
    elif kind == "pr-labels":
        held.labels[pr_labels_key(key[1], key[2])] = list(value)
    elif kind == "daemon":
        db.execute("INSERT INTO rw_meta (key, value) VALUES ('daemon', ?)", (json.dumps(value),))
    elif kind == "repo":
        held.repos.append(dict(value))
    elif kind == "outbox":
        held.outbox = list(value)
    elif kind == "delivery":
        held.deliveries[key[1]] = dict(value)
    elif kind == "digest-queue":
        held.queues[key[1]] = list(value)
    elif kind == "digest-since":
        held.since[key[1]] = str(value)
    elif kind == "digest-delivery":
        held.digests[key[1]] = dict(value)


def _write_held(db: Database, held: _Held) -> None:
    for data in held.repos:
        state = RepoState.model_validate(data)
        known = db.scalar("SELECT count(*) FROM rw_release WHERE repo = ?", (state.repo,))
        state = state.model_copy(update={"releases_known": known})
        db.execute("INSERT INTO rw_repo (repo, state, last_poll, last_success) "
                   "VALUES (?, ?, ?, ?)", state.row())
    for delivery_key in held.outbox:  # the outbox's order is the delivery order
        queued = held.deliveries.get(delivery_key)
        if queued is not None:
            delivery = Delivery.model_validate(queued)
            db.execute("INSERT INTO rw_delivery (id, event_id, notifier, record) "
                       "VALUES (?, ?, ?, ?)", (delivery.id, delivery.event_id,
                                               delivery.notifier, delivery.model_dump_json()))
    for notifier, event_ids in held.queues.items():
        db.executemany("INSERT INTO rw_digest_queue (notifier, event_id) VALUES (?, ?)",
                       [(notifier, event_id) for event_id in event_ids])
    for notifier in {*held.since, *held.digests}:
        pending = held.digests.get(notifier)
        db.execute("INSERT INTO rw_digest (notifier, since, pending) VALUES (?, ?, ?)",
                   (notifier, held.since.get(notifier),
                    _pending_json(db, pending) if pending else None))


def _pending_json(db: Database, data: dict[str, Any]) -> str:
    """A schema-1 digest in flight named its events; schema 2 names the queue position it
    reaches (its events were the queue's first entries when it started)."""
    digest = DigestDelivery.model_validate(data)
    wanted = set(digest.event_ids)
    rows = db.all("SELECT seq, event_id FROM rw_digest_queue WHERE notifier = ? ORDER BY seq",
                  (digest.notifier,))
    upto = max((seq for seq, event_id in rows if event_id in wanted), default=0)
    return digest.model_copy(update={"upto": upto}).model_dump_json(exclude={"event_ids"})

