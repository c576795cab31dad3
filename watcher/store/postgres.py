"""The store on PostgreSQL (``[store] url``): one psycopg 3 connection, its transactions, the
SQL dialect's differences from SQLite, and psycopg's errors turned into one-line
``StoreError``s that name the database (never its password) and the fix.

As the embedded store's connection does (``watcher/store/db.py``), one connection serves every
thread of a process, guarded by a re-entrant lock held for a whole transaction. Writers of
every replica are serialised as SQLite serialises them: a transaction first takes a
transaction-scoped advisory lock (``pg_advisory_xact_lock``), so two processes never both read,
then both write; reads outside a transaction wait for nothing. Nothing here relies on a
session's state (no session advisory lock, no ``SET``, no prepared statement), so the store
works through PgBouncer in transaction mode, and a pool recycling connections could take
nothing from it.

A fence (``fence``): while a replica leads (``watcher/daemon/leader.py``), every write of its
jobs is made in a transaction that first checks, under a share lock on the lease row, that the
lease is still its own and unexpired; a deposed leader's late write is refused (``Deposed``)
and rolled back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from watcher.errors import ConfigError, StoreBusy, StoreError, StoreReadOnly
from watcher.logs import mask_url_credentials, register_secrets
from watcher.store.backend import Nesting, Params
from watcher.store.lease import LEASE, Lease

logger = logging.getLogger(__name__)

# Keys of the advisory locks (any 64-bit numbers; these spell "rwledger" and "rwpacing").
LEDGER_LOCK = 0x72776C6564676572
PACE_LOCK = 0x727770616369676E
CONNECT_TIMEOUT = 10  # seconds to reach the server at all
NEEDS_PSYCOPG = "the PostgreSQL store needs psycopg: pip install 'release-watch[postgres]'"


class Deposed(StoreError):
    """A write under a fencing token that is no longer the leader's: refused, rolled back."""


def password_of(url: str) -> str | None:
    """The password the URL carries itself, if any (best kept out of it: ``PGPASSWORD`` or
    libpq's ``~/.pgpass``, which psycopg reads itself)."""
    parts = urlsplit(url)
    if parts.password:
        return unquote(parts.password)
    return dict(parse_qsl(parts.query)).get("password") or None


def _translate(sql: str) -> str:
    """The store's ``?`` placeholders as psycopg's ``%s`` (a literal ``%`` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


def describe(url: str, error: Exception) -> StoreError:
    """psycopg's error as one line naming the store (its password masked) and the fix."""
    text = " ".join(str(error).split())
    secret = password_of(url)
    if secret:
        text = text.replace(secret, "***")
    where, lowered, name = mask_url_credentials(url), text.lower(), type(error).__name__
    if name in ("LockNotAvailable", "QueryCanceled") or "lock timeout" in lowered:
        return StoreBusy(f"the store {where} stayed locked by another process ({text}); try "
                         "again later")
    if name == "ReadOnlySqlTransaction" or "read-only" in lowered:
        return StoreReadOnly(f"the store {where} is read-only ({text}); point [store] url at "
                             "the primary server")
    if name in ("OperationalError", "ConnectionTimeout"):
        return StoreError(f"cannot reach the store {where} ({text}); check the server, "
                          "[store] url and the password (PGPASSWORD, ~/.pgpass)")
    return StoreError(f"the store {where} failed: {text}")


def require_psycopg() -> ModuleType:
    """psycopg, which only a PostgreSQL store needs (the ``[postgres]`` extra, not a
    dependency): where it cannot be imported, a ``ConfigError`` of one line saying how to
    install it (exit 2, as for any setting this installation cannot serve)."""
    try:
        import psycopg
    except ImportError as error:
        missing = isinstance(error, ModuleNotFoundError) and (
            (error.name or "").partition(".")[0] in ("psycopg", "psycopg_binary"))
        # Installed but broken (psycopg without [binary] and no libpq): the same fix, and why.
        why = "" if missing else f" (it fails to import: {' '.join(str(error).split())})"
        raise ConfigError(NEEDS_PSYCOPG + why) from error
    return psycopg


def _connect(url: str) -> Any:
    psycopg = require_psycopg()
    secret = password_of(url)
    if secret:
        register_secrets([secret])  # masked in every log line from now on
    try:
        # prepare_threshold=None: no server-side prepared statement (PgBouncer's transaction
        # mode hands each transaction another server connection).
        return psycopg.connect(url, autocommit=True, prepare_threshold=None,
                               connect_timeout=CONNECT_TIMEOUT, application_name="release-watch")
    except psycopg.Error as error:
        raise describe(url, error) from None


class PostgresDatabase(Nesting):
    def __init__(self, url: str, connection: Any, *, read_only: bool,
                 lock: int = LEDGER_LOCK) -> None:
        self.url = url
        self.connection = connection
        self.read_only = read_only
        self.path = Path("/nonexistent/postgresql-store")  # no local file: no writer.lock
        self.fence: Callable[[], int | None] | None = None  # the leader's token, or None
        self.has_claims = True
        self._lock_key = lock
        self._guard = threading.RLock()
        self._wait: float | None = None  # seconds a transaction waits for the writer lock

    @classmethod
    def connect(cls, url: str, *, read_only: bool = False,
                lock: int = LEDGER_LOCK) -> PostgresDatabase:
        return cls(url, _connect(url), read_only=read_only, lock=lock)

    @classmethod
    def open(cls, url: str, *, read_only: bool = False) -> PostgresDatabase:
        """Connect, and make the database a store of this schema (``pg_schema``)."""
        from watcher.store.pg_schema import prepare

        db = cls.connect(url, read_only=read_only)
        try:
            prepare(db)
        except BaseException:
            db.close()
            raise
        return db

    @property
    def where(self) -> str:
        return mask_url_credentials(self.url)

    def close(self) -> None:
        with self._guard:
            self.connection.close()

    def wait_at_most(self, seconds: float) -> None:
        """How long a transaction waits for another's writer lock before ``StoreBusy``:
        set per transaction (``SET LOCAL``), never on the session."""
        self._wait = seconds

    @contextmanager
    def guard(self) -> Iterator[None]:
        import psycopg

        with self._guard:
            if self._depth == 0 and (self.connection.closed or self.connection.broken):
                self.connection = _connect(self.url)  # the server restarted, or a pooler hung up
            try:
                yield
            except psycopg.Error as error:
                raise describe(self.url, error) from None

    def _autofenced(self, sql: str) -> bool:
        """A write outside a transaction, while fenced: made in one of its own."""
        return (self.fence is not None and self._depth == 0
                and sql.lstrip()[:6].upper() != "SELECT")

    def execute(self, sql: str, params: Params = ()) -> Any:
        if self._autofenced(sql):
            with self.transaction():
                return self.execute(sql, params)
        with self.guard():
            if not params:  # no placeholder: psycopg sends it as it is, % and all
                return self.connection.execute(sql)
            return self.connection.execute(_translate(sql), params)

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        if not rows:
            return
        if self._autofenced(sql):
            with self.transaction():
                self.executemany(sql, rows)
            return
        with self.guard(), self.connection.cursor() as cursor:
            cursor.executemany(_translate(sql), rows)

    def one(self, sql: str, params: Params = ()) -> Any:
        return self.execute(sql, params).fetchone()

    def all(self, sql: str, params: Params = ()) -> list[Any]:
        return list(self.execute(sql, params).fetchall())

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing, writers of every replica one at a time (the advisory lock); nested
        uses join the outer transaction. Under a fence, refused unless the lease is ours."""
        with self.guard():
            if self._depth:
                with self.joined():
                    yield
                return
            with self.connection.transaction(), self.opened():
                self._begin()
                yield

    def _begin(self) -> None:
        if self._wait is not None:
            self.connection.execute("SELECT set_config('lock_timeout', %s, true)",
                                    (f"{max(1, round(self._wait * 1000))}ms",))
        self.connection.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
        token = self.fence() if self.fence is not None else None
        if self.fence is not None:
            held = None if token is None else self.connection.execute(
                "SELECT 1 FROM rw_lease WHERE name = %s AND token = %s "
                "AND expires > clock_timestamp() FOR SHARE", (LEASE, token)).fetchone()
            if held is None:
                raise Deposed(f"this replica no longer leads the store {self.where} (its lease"
                              f"{'' if token is None else f' {token}'} was lost or taken "
                              "over); the write was refused")

    # ---- the dialect (``watcher/store/backend.py``) -----------------------------------------
    def among(self, column: str, values: Sequence[str]) -> tuple[str, Any]:
        return f"{column} = ANY(?)", list(values)

    def json_int(self, column: str, field: str) -> str:
        return f"({column}::jsonb ->> '{field}')::bigint"

    def json_text(self, column: str, field: str) -> str:
        return f"({column}::jsonb ->> '{field}')"

    def has_table(self, name: str) -> bool:
        # A query of the catalog, not to_regclass: that reads the session's catalog cache,
        # which a replica that just waited for the writers' lock may not have refreshed.
        return self.one("SELECT 1 FROM pg_tables WHERE schemaname = current_schema() "
                        "AND tablename = ?", (name.lower(),)) is not None

    def reclaim(self) -> None:
        """Nothing to do: autovacuum gives the space back."""

    def another(self) -> PostgresDatabase:
        return PostgresDatabase.connect(self.url, read_only=self.read_only, lock=PACE_LOCK)

    def lease(self, holder: str, seconds: float) -> Lease:
        """The leader's lease, on a connection of its own: a renewal never waits behind a
        transaction of this one."""
        return Lease(PostgresDatabase.connect(self.url), holder, seconds)

    def integrity(self) -> list[str]:
        """PostgreSQL checks its pages itself (and ``pg_amcheck`` is the administrator's):
        here, that every table of the store is there."""
        from watcher.store.pg_schema import missing_tables

        return [f"the table {name} is missing" for name in missing_tables(self)]
