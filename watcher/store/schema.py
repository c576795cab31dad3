"""The ledger's tables (schema 3), created on first open, and the upgrades from schemas 1 and 2.

Schema 3: ``cache.db`` is a diskcache directory's database. diskcache's own tables (Settings,
Cache) hold what is a cache (``watcher/store/cachekeys.py``); the ledger is tables of its own in the
same file, beside them. Why tables and not more diskcache keys: diskcache has no ordered or
ranged reads (a queue or a count would scan every key, as schema 1's did), while SQLite gives
appends and deletes in O(log n), counts and ordered reads by index, one-statement retention and
narrow updates of a column, and one transaction over the records of a poll, its events, their
deliveries and the ETag that vouches for them.

Schema 1 kept everything as diskcache keys, the outbox and digest queues as single lists
rewritten on every event. Schema 2 moved everything into tables and dropped diskcache's.
Both are upgraded on open, each in one transaction (``watcher/store/migrate_v1.py``,
``watcher/store/migrate_v2.py``).
"""

from __future__ import annotations

import logging
from pathlib import Path

from watcher.errors import StoreError
from watcher.store.cachekeys import CacheKeys
from watcher.store.cacherows import remove_value_files
from watcher.store.db import Database

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 3
READABLE = {2, SCHEMA_VERSION}  # a read-only open reads schema 2's ledger as schema 3's

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
"""


def _tables(db: Database) -> set[str]:
    return {row[0] for row in db.all("SELECT name FROM sqlite_master WHERE type = 'table'")}


def stored_version(db: Database) -> int | None:
    """The version in ``rw_meta``; 1 for diskcache's tables alone (schema 1); None for an
    empty file."""
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
    """Make the file a schema-3 store: create it, upgrade it, or check it, in one transaction
    (a second process opening the same store at the same time waits, then finds it done)."""
    if db.read_only:
        check(db, stored_version(db), read_only=True)
        return
    if stored_version(db) == 2:
        make_cache_tables(directory)  # the upgrade moves keys into them
    leftovers: list[Path] = []
    with db.transaction():
        version = stored_version(db)  # again: another process may have done it meanwhile
        if version is None or version == 1:
            create(db)
        if version in (1, 2):
            leftovers = _upgrade(db, directory, version)
        check(db, stored_version(db))
    if version in (None, 1):
        make_cache_tables(directory)  # diskcache's settings, once this is a store of ours
    remove_value_files(leftovers)  # referenced by nothing, now that it committed


def _upgrade(db: Database, directory: Path, version: int) -> list[Path]:
    logger.warning("upgrading the store %s from schema %d to %d", directory, version,
                   SCHEMA_VERSION)
    if version == 1:
        from watcher.store.migrate_v1 import migrate_v1

        return migrate_v1(db, directory)
    from watcher.store.migrate_v2 import migrate_v2

    leftovers = migrate_v2(db, directory)
    db.execute("UPDATE rw_meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
    return leftovers


def make_cache_tables(directory: Path) -> None:
    """diskcache's tables and settings, written by diskcache itself."""
    keys = CacheKeys(directory)
    keys.open()
    keys.close()


def check(db: Database, version: int | None, *, read_only: bool = False) -> None:
    if version == SCHEMA_VERSION or (read_only and version in READABLE):
        return
    if version == 1:
        raise StoreError(f"the store {db.path} has schema version 1 and cannot be upgraded "
                         "while read-only; run `release-watch poll` once as a user who may "
                         "write it")
    raise StoreError(f"the store {db.path} has schema version {version}; this release-watch "
                     f"reads version {SCHEMA_VERSION}")
