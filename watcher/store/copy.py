"""An embedded store copied into PostgreSQL (``release-watch store copy --to URL``): every
ledger table row for row, sequence numbers and ids kept (a digest in flight names its queue's
positions, a subscription's notifier its id), and diskcache's keys as rows of ``rw_kv``; the
pacing window is not copied (nothing in it outlives a minute).

Idempotent: a row whose key the database holds already is left as it is, so a second run
copies nothing new; the whole copy is one transaction, and each table is verified afterwards
(every key of the source is in the target) before it commits. A database holding events the
source never had is another store: refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watcher.errors import StoreError
from watcher.store.backend import Backend
from watcher.store.cacherows import CacheRows
from watcher.store.db import Database
from watcher.store.store import Store
from watcher.store.tablekeys import encode

# (table, columns, key columns, the sequence column whose counter must follow the copy)
TABLES: tuple[tuple[str, tuple[str, ...], tuple[str, ...], str | None], ...] = (
    ("rw_meta", ("key", "value"), ("key",), None),
    ("rw_repo", ("repo", "state", "last_poll", "last_success"), ("repo",), None),
    ("rw_release", ("repo", "id", "record"), ("repo", "id"), None),
    ("rw_etag", ("url", "etag", "last_page"), ("url",), None),
    ("rw_event", ("seq", "id", "detected", "body"), ("id",), "seq"),
    ("rw_delivery", ("seq", "id", "event_id", "notifier", "record"), ("id",), "seq"),
    ("rw_digest_queue", ("seq", "notifier", "event_id"), ("seq",), "seq"),
    ("rw_digest", ("notifier", "since", "pending"), ("notifier",), None),
    ("rw_org", ("org", "state"), ("org",), None),
    ("rw_subscription", ("id", "channel", "record"), ("id",), "id"),
    ("rw_seen_request", ("key", "until"), ("key",), None),
    ("rw_suppression", ("key", "record"), ("key",), None),
    ("rw_channel_quiet", ("channel", "what", "target", "record"), ("channel", "what", "target"),
     None),
)
KV = "rw_kv"
BATCH = 1000


@dataclass(frozen=True)
class Copied:
    table: str
    rows: int  # in the source
    copied: int  # new in the target

    @property
    def line(self) -> str:
        return (f"{self.table}: {self.rows:,} rows, {self.copied:,} copied, "
                f"{self.rows - self.copied:,} there already; verified")


def _rows(db: Backend, table: str, columns: tuple[str, ...]) -> list[tuple[Any, ...]]:
    if not db.has_table(table):  # a table added within schema 3 the store never made
        return []
    where = " WHERE key <> 'schema'" if table == "rw_meta" else ""  # each has its own
    return [tuple(row) for row in db.all(f"SELECT {', '.join(columns)} FROM {table}{where}")]


def _keys(db: Backend, table: str, columns: tuple[str, ...]) -> set[tuple[Any, ...]]:
    return {tuple(row) for row in _rows(db, table, columns)}


def _cache_rows(source: Database, directory: Path) -> Iterator[tuple[str, str]]:
    """diskcache's keys as ``rw_kv`` rows: (encoded key, JSON value)."""
    if not source.has_table("Cache"):
        return
    cache = CacheRows(source, directory)
    for row in cache.rows():
        if not isinstance(row.key, str | tuple):
            raise StoreError(f"the diskcache key {row.key!r} is not one of release-watch's")
        value = cache.value(row)
        try:
            text = json.dumps(value)
        except TypeError as error:
            raise StoreError(f"the diskcache key {row.key!r} holds a value that is not JSON "
                             f"({error}); it cannot be copied") from None
        yield encode(row.key), text


def _copy_table(target: Backend, table: str, columns: tuple[str, ...],
                rows: list[tuple[Any, ...]]) -> int:
    before = int(target.scalar(f"SELECT count(*) FROM {table}"))
    marks = ", ".join("?" * len(columns))
    for start in range(0, len(rows), BATCH):
        target.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks}) "
                           "ON CONFLICT DO NOTHING", rows[start:start + BATCH])
    return int(target.scalar(f"SELECT count(*) FROM {table}")) - before


def _verify(target: Backend, table: str, keys: tuple[str, ...],
            wanted: set[tuple[Any, ...]]) -> None:
    missing = wanted - _keys(target, table, keys)
    if missing:
        raise StoreError(f"{table}: {len(missing):,} rows of the source are not in "
                         f"{target.where} after the copy (another store's rows hold their "
                         "keys?); nothing was committed")


def copy_store(source_store: Store, target_store: Store) -> list[Copied]:
    """Copy the embedded store ``source_store`` into ``target_store``, in one transaction."""
    source, target = source_store.db, target_store.db
    if not isinstance(source, Database):
        raise StoreError("store copy copies an embedded store (store.path)")
    directory = source.path.parent
    strange = _keys(target, "rw_event", ("id",)) - _keys(source, "rw_event", ("id",))
    if strange:
        raise StoreError(f"{target.where} holds events the store {directory} never had "
                         f"({len(strange):,}): it is another store; copy into a new database")
    report = []
    with target.transaction():
        for table, columns, keys, counter in TABLES:
            rows = _rows(source, table, columns)
            copied = _copy_table(target, table, columns, rows)
            index = [columns.index(key) for key in keys]
            _verify(target, table, keys, {tuple(row[i] for i in index) for row in rows})
            if counter is not None:  # new rows of the target number on after the copied
                target.execute(f"SELECT setval(pg_get_serial_sequence('{table}', "
                               f"'{counter}'), greatest((SELECT max({counter}) FROM {table}),"
                               " 1))")
            report.append(Copied(table, len(rows), copied))
        values = list(_cache_rows(source, directory))
        copied = _copy_table(target, KV, ("key", "value"), values)
        _verify(target, KV, ("key",), {(key,) for key, _ in values})
        report.append(Copied(f"{KV} (diskcache keys)", len(values), copied))
    return report
