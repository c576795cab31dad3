"""The store's tables on PostgreSQL and their versioned migrations, as the embedded store has
its own (``watcher/store/schema.py``): the version is the ``schema`` row of ``rw_meta``, and an
open that finds an older one runs every migration after it in one transaction, under the
writers' advisory lock, so two replicas starting together upgrade once and the second finds it
done; a database of a newer version is refused.

The tables are the embedded ledger's, column for column, and three more: ``rw_kv``, what the
embedded store keeps as diskcache keys (PR labels, notifier memory, the impact index, atlases:
a key and its JSON value, ``watcher/store/tablekeys.py``); ``rw_lease``, the leader's lease
(holder, fencing token, expiry, ``watcher/store/lease.py``); and ``rw_delivery.claim``, the
token a delivery was claimed under (``watcher/store/claims.py``).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from watcher.errors import StoreError

if TYPE_CHECKING:
    # The database by the port every backend implements: the PostgreSQL backend opens through
    # this module, so this module names it by that port, not by its class (no circle).
    from watcher.store.backend import Backend

logger = logging.getLogger(__name__)

# One entry per version: the statements that make version N from version N - 1.
MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE rw_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE rw_repo (repo TEXT PRIMARY KEY, state TEXT NOT NULL, last_poll TEXT,
                      last_success TEXT);
CREATE TABLE rw_release (repo TEXT NOT NULL, id BIGINT NOT NULL, record TEXT NOT NULL,
                         PRIMARY KEY (repo, id));
CREATE TABLE rw_etag (url TEXT PRIMARY KEY, etag TEXT NOT NULL,
                      last_page INTEGER NOT NULL DEFAULT 0);
CREATE TABLE rw_event (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE,
                       detected DOUBLE PRECISION NOT NULL, body TEXT);
CREATE INDEX rw_event_prunable ON rw_event (detected) WHERE body IS NOT NULL;
CREATE TABLE rw_delivery (seq BIGSERIAL PRIMARY KEY, id TEXT NOT NULL UNIQUE,
                          event_id TEXT NOT NULL, notifier TEXT NOT NULL, record TEXT NOT NULL,
                          claim BIGINT);
CREATE INDEX rw_delivery_notifier ON rw_delivery (notifier, seq);
CREATE INDEX rw_delivery_failing ON rw_delivery (seq)
    WHERE (record::jsonb ->> 'attempts')::bigint > 0;
CREATE TABLE rw_digest_queue (seq BIGSERIAL PRIMARY KEY, notifier TEXT NOT NULL,
                              event_id TEXT NOT NULL);
CREATE INDEX rw_digest_queue_order ON rw_digest_queue (notifier, seq);
CREATE TABLE rw_digest (notifier TEXT PRIMARY KEY, since TEXT, pending TEXT);
CREATE TABLE rw_org (org TEXT PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE rw_pace (key TEXT NOT NULL, at DOUBLE PRECISION NOT NULL);
CREATE INDEX rw_pace_order ON rw_pace (key, at);
CREATE TABLE rw_subscription (id BIGSERIAL PRIMARY KEY, channel TEXT NOT NULL,
                              record TEXT NOT NULL);
CREATE INDEX rw_subscription_channel ON rw_subscription (channel, id);
CREATE TABLE rw_seen_request (key TEXT PRIMARY KEY, until DOUBLE PRECISION NOT NULL);
CREATE INDEX rw_seen_request_until ON rw_seen_request (until);
CREATE TABLE rw_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE rw_lease (name TEXT PRIMARY KEY, holder TEXT NOT NULL, token BIGINT NOT NULL,
                       expires TIMESTAMPTZ NOT NULL);
""",
    # The uses a team said are "not us" (``watcher/store/suppressions.py``).
    2: """
CREATE TABLE rw_suppression (key TEXT PRIMARY KEY, record TEXT NOT NULL);
""",
    # What Slack channels muted and snoozed (``watcher/store/quiet.py``).
    3: """
CREATE TABLE rw_channel_quiet (channel TEXT NOT NULL, what TEXT NOT NULL, target TEXT NOT NULL,
                               record TEXT NOT NULL, PRIMARY KEY (channel, what, target));
""",
}
SCHEMA_VERSION = max(MIGRATIONS)
TABLES = frozenset(name for script in MIGRATIONS.values()
                   for name in re.findall(r"CREATE TABLE (\w+)", script))


def stored_version(db: Backend) -> int | None:
    """The version in ``rw_meta``; None for a database without the store's tables."""
    # Both in one statement: another replica may commit the tables between two.
    found = {row[0] for row in db.all("SELECT tablename FROM pg_tables WHERE schemaname = "
                                      "current_schema() AND tablename IN ('rw_meta', "
                                      "'rw_event')")}
    if "rw_meta" not in found:
        if "rw_event" in found:
            raise StoreError(f"the store {db.where} has lost its rw_meta table; restore the "
                             "database from a backup")
        return None
    value = db.scalar("SELECT value FROM rw_meta WHERE key = 'schema'")
    if value is None:
        raise StoreError(f"the store {db.where} has lost its schema version; restore the "
                         "database from a backup")
    return int(value)


def missing_tables(db: Backend) -> list[str]:
    return sorted(name for name in TABLES if not db.has_table(name))


def prepare(db: Backend) -> None:
    """Make the database a store of ``SCHEMA_VERSION``: create it or upgrade it in one
    transaction; read-only, only check it."""
    version = stored_version(db)
    if version == SCHEMA_VERSION:
        return
    if db.read_only:
        _check(db, version, read_only=True)
        return
    with db.transaction():  # the writers' lock: a second replica waits, then finds it done
        version = stored_version(db)
        _check(db, version)
        start = version or 0
        if start < SCHEMA_VERSION and start:
            logger.warning("upgrading the store %s from schema %d to %d", db.where, start,
                           SCHEMA_VERSION)
        for step in range(start + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[step].split(";"):
                if statement.strip():
                    db.execute(statement)
        db.execute("INSERT INTO rw_meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) "
                   "DO UPDATE SET value = excluded.value", (str(SCHEMA_VERSION),))


def _check(db: Backend, version: int | None, *, read_only: bool = False) -> None:
    if version is not None and version > SCHEMA_VERSION:
        raise StoreError(f"the store {db.where} has schema version {version}; this "
                         f"release-watch reads version {SCHEMA_VERSION}")
    if read_only:
        what = "no store yet" if version is None else f"schema version {version}"
        raise StoreError(f"the store {db.where} holds {what}; run `release-watch poll` once "
                         "as a user who may write it")
