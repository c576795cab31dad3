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
``watcher/store/migrate_v2.py``). Tables added since schema 3 came out (``ADDITIONS``: the
shared pacing window, the Slack subscriptions, the signed requests seen) are created by every
writable open that misses them, in the same transaction, without a version of their own.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from watcher.errors import StoreDamaged, StoreError
from watcher.store.cachekeys import CacheKeys
from watcher.store.cacherows import CacheRows, missing_value_files, remove_value_files
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
LEDGER = frozenset(re.findall(r"CREATE TABLE (\w+)", TABLES))  # schema 2 has them all too
# Added within schema 3, created by every writable open if missing: a store written before
# them is still schema 3, and code that does not know them leaves them alone (SQLite keeps
# indexes up to date whoever writes). rw_pace is the pacing window shared by every process on
# the store (nothing in it outlives a minute); the outbox's indexes let ``status`` count
# deliveries per notifier and find the failing ones without reading every queued record (a
# store without them is read by scans); rw_subscription holds the channels' Slack
# subscriptions (``watcher/store/subscriptions.py``); rw_seen_request the Slack request URL's
# signatures of the last five minutes (``watcher/store/seen.py``: nothing in it outlives them);
# rw_suppression the uses a team said are "not us" (``watcher/store/suppressions.py``).
# Neither a damaged ledger nor a bare file
# is judged by these tables.
ADDITIONS = """
CREATE TABLE IF NOT EXISTS rw_pace (key TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS rw_pace_order ON rw_pace (key, at);
CREATE INDEX IF NOT EXISTS rw_delivery_notifier ON rw_delivery (notifier, seq);
CREATE INDEX IF NOT EXISTS rw_delivery_failing ON rw_delivery (seq)
    WHERE json_extract(record, '$.attempts') > 0;
CREATE TABLE IF NOT EXISTS rw_subscription (id INTEGER PRIMARY KEY AUTOINCREMENT,
                                            channel TEXT NOT NULL, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rw_subscription_channel ON rw_subscription (channel, id);
CREATE TABLE IF NOT EXISTS rw_seen_request (key TEXT PRIMARY KEY, until REAL NOT NULL);
CREATE INDEX IF NOT EXISTS rw_seen_request_until ON rw_seen_request (until);
CREATE TABLE IF NOT EXISTS rw_suppression (key TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS rw_channel_quiet (channel TEXT NOT NULL, what TEXT NOT NULL,
                                             target TEXT NOT NULL, record TEXT NOT NULL,
                                             PRIMARY KEY (channel, what, target));
"""
ADDED = frozenset(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", ADDITIONS))
DISKCACHE = frozenset({"Settings", "Cache"})


def _tables(db: Database) -> set[str]:
    """The tables, but SQLite's own (``sqlite_sequence`` outlives every table it numbered)."""
    return {row[0] for row in db.all("SELECT name FROM sqlite_master WHERE type = 'table' "
                                     "AND name NOT LIKE 'sqlite%'")} - ADDED


def is_bare(db: Database, directory: Path) -> bool:
    """Whether the file holds no store: no table at all (a new or an emptied SQLite file), or
    diskcache's alone without schema 1's version key (a store whose ledger tables were
    dropped). Anything else is not bare: opening it says what it is."""
    tables = _tables(db)
    if not tables:
        return True
    if tables != DISKCACHE:
        return False
    rows = CacheRows(db, directory)
    key, raw = rows.disk.put(("schema",))  # encoded as schema 1's code stored it
    return db.one("SELECT 1 FROM Cache WHERE key = ? AND raw = ?", (key, raw)) is None


def stored_version(db: Database) -> int | None:
    """The version in ``rw_meta``; 1 for diskcache's tables alone (schema 1); None for a file
    with no table. A ledger missing some of its tables or its version is damaged."""
    tables = _tables(db)
    _check_ledger(db, tables)
    if "rw_meta" in tables:
        value = db.scalar("SELECT value FROM rw_meta WHERE key = 'schema'")
        if value is None:  # written with the tables, in their one transaction
            raise StoreDamaged(f"the store database {db.path} has lost its schema version; "
                               "restore it from a backup, or start over with `release-watch "
                               "store reinit`")
        return int(value)
    if "Cache" in tables:
        return 1
    if tables:
        raise StoreError(f"{db.path} is an SQLite database but not a release-watch store; "
                         "point store.path at an empty or release-watch directory")
    return None


def _check_ledger(db: Database, tables: set[str]) -> None:
    """Some of the ledger's tables but not all: rows of them are gone, whatever the version."""
    missing = sorted(LEDGER - tables)
    if missing and tables & LEDGER:
        raise StoreDamaged(f"the store database {db.path} has lost the ledger tables "
                           f"{', '.join(missing)}; restore it from a backup, or start over with "
                           "`release-watch store reinit`")


def create(db: Database) -> None:
    for statement in TABLES.split(";"):
        if statement.strip():
            db.execute(statement)
    db.execute("INSERT INTO rw_meta (key, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))


def add_tables(db: Database) -> None:
    """``ADDITIONS``, idempotently: a no-op once they exist."""
    for statement in ADDITIONS.split(";"):
        if statement.strip():
            db.execute(statement)


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
        add_tables(db)
    if version in (None, 1):
        make_cache_tables(directory)  # diskcache's settings, once this is a store of ours
    remove_value_files(leftovers)  # referenced by nothing, now that it committed


def _upgrade(db: Database, directory: Path, version: int) -> list[Path]:
    if version == 1:
        _require_value_files(db, directory)  # before a word about upgrading: it cannot
    logger.warning("upgrading the store %s from schema %d to %d", directory, version,
                   SCHEMA_VERSION)
    if version == 1:
        from watcher.store.migrate_v1 import migrate_v1

        try:
            return migrate_v1(db, directory)
        except OSError as error:  # a value file there, but unreadable
            raise _unusable(directory, f"its diskcache value file "
                            f"{_relative(error.filename, directory)} cannot be read "
                            f"({error.strerror})") from error
    from watcher.store.migrate_v2 import migrate_v2

    leftovers = migrate_v2(db, directory)
    db.execute("UPDATE rw_meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
    return leftovers


def _require_value_files(db: Database, directory: Path) -> None:
    """Schema 1 kept big ledger values (a long release record) in diskcache's value files
    beside cache.db: without one, a record would be lost, so the store is not upgraded."""
    lost = missing_value_files(db, directory)
    if lost:
        more = f", and {len(lost) - 1} more" if len(lost) > 1 else ""
        raise _unusable(directory, f"its {lost[0]}{more}")


def _unusable(directory: Path, problem: str) -> StoreDamaged:
    return StoreDamaged(f"the store {directory} cannot be upgraded from schema 1: {problem}; "
                        "restore it from a backup (`release-watch store check` lists what is "
                        "missing), or start over with `release-watch store reinit`")


def _relative(filename: str | None, directory: Path) -> str:
    return str(filename or "?").removeprefix(f"{directory}/")


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
