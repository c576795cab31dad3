"""The store's tables (schema 2), created on first open, and the upgrade from schema 1.

Schema 1 kept everything as diskcache keys, the outbox and digest queues as single lists
rewritten on every event. Schema 2 keeps its own tables in the same ``cache.db``: every event,
delivery and queue entry is a row, queues are read in the order of an AUTOINCREMENT sequence
number, and nothing grows with history except the rows themselves. Why tables rather than more
diskcache keys: diskcache has no ordered or ranged reads (a queue or a count would scan every
key), while SQLite gives appends and deletes in O(log n), counts and ordered reads by index,
one-statement retention and narrow updates of a column, in the file (and transactions) the
store already had.
"""

from __future__ import annotations

import logging
from pathlib import Path

from watcher.db import Database
from watcher.errors import StoreError

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 2

TABLES = """
CREATE TABLE rw_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE rw_repo (repo TEXT PRIMARY KEY, state TEXT NOT NULL, last_poll TEXT,
                      last_success TEXT);
CREATE TABLE rw_release (repo TEXT NOT NULL, id INTEGER NOT NULL, record TEXT NOT NULL);
CREATE UNIQUE INDEX rw_release_key ON rw_release (repo, id);
CREATE TABLE rw_etag (url TEXT PRIMARY KEY, etag TEXT NOT NULL,
                      last_page INTEGER NOT NULL DEFAULT 0);
CREATE TABLE rw_event (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
                       detected REAL NOT NULL, body TEXT);
CREATE INDEX rw_event_prunable ON rw_event (detected) WHERE body IS NOT NULL;
CREATE TABLE rw_delivery (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
                          event_id TEXT NOT NULL, notifier TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE rw_digest_queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, notifier TEXT NOT NULL,
                              event_id TEXT NOT NULL);
CREATE INDEX rw_digest_queue_order ON rw_digest_queue (notifier, seq);
CREATE TABLE rw_digest (notifier TEXT PRIMARY KEY, since TEXT, pending TEXT);
CREATE TABLE rw_org (org TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE rw_pr_labels (repo TEXT NOT NULL, number INTEGER NOT NULL, labels TEXT NOT NULL,
                           PRIMARY KEY (repo, number)) WITHOUT ROWID;
"""


def _tables(db: Database) -> set[str]:
    return {row[0] for row in db.all("SELECT name FROM sqlite_master WHERE type = 'table'")}


def stored_version(db: Database) -> int | None:
    """2 for a schema-2 store, 1 for a diskcache (schema 1) one, None for an empty file."""
    tables = _tables(db)
    if "rw_meta" in tables:
        value = db.scalar("SELECT value FROM rw_meta WHERE key = 'schema'")
        return int(value) if value is not None else None
    if "Cache" in tables:
        return 1
    if tables:
        raise StoreError(f"{db.path} is an SQLite database but not a release-watch store; "
                         "point store.path at an empty or release-watch directory")
    return None


def create(db: Database) -> None:
    for statement in TABLES.split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("INSERT INTO rw_meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))


def prepare(db: Database, directory: Path) -> None:
    """Make the file a schema-2 store: create it, upgrade it, or check it, in one transaction
    (a second process opening the same store at the same time waits, then finds it done)."""
    if db.read_only:
        check(db, stored_version(db))
        return
    leftovers: list[Path] = []
    with db.transaction():
        version = stored_version(db)
        if version is None:
            create(db)
        elif version == 1:
            from watcher.migrate import migrate_v1

            logger.warning("upgrading the store %s from schema 1 to %d", directory,
                           SCHEMA_VERSION)
            create(db)
            leftovers = migrate_v1(db, directory)
        else:
            check(db, version)
    for leftover in leftovers:  # schema 1's value files, no longer referenced by anything
        leftover.unlink(missing_ok=True)


def check(db: Database, version: int | None) -> None:
    if version == SCHEMA_VERSION:
        return
    if version == 1:
        raise StoreError(f"the store {db.path} has schema version 1 and cannot be upgraded "
                         "while read-only; run `release-watch poll` once as a user who may "
                         "write it")
    raise StoreError(f"the store {db.path} has schema version {version}; this release-watch "
                     f"reads version {SCHEMA_VERSION}")
