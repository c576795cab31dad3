"""The store's SQLite file as the ledger uses it: one connection, its pragmas, nested-safe
transactions, and sqlite3's errors turned into one-line ``StoreError``s that name the file and
the fix.

One connection serves every thread (the daemon opens the store on its main thread and runs
jobs on the scheduler's), guarded by a re-entrant lock held for a whole transaction, so no
thread ever sees another's half-written transaction and no thread opens a second ledger
connection. diskcache, which keeps the store's cached keys in the same file, has connections
of its own (``watcher/store/cachekeys.py``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from watcher.errors import StoreBusy, StoreDamaged, StoreError, StoreReadOnly
from watcher.store.backend import Nesting, Params
from watcher.store.files import DB_NAME as DB_NAME

BUSY_TIMEOUT = 60.0  # seconds another writer's transaction may keep us waiting


def describe(path: Path, error: sqlite3.Error) -> StoreError:
    """sqlite3's error as one line saying what is wrong with which file, and what to do."""
    text = str(error)
    lowered = text.lower()
    if "readonly" in lowered or "read-only" in lowered:
        return StoreReadOnly(f"the store {path} is read-only for this user ({text}); make it "
                             "writable, or point store.path at a writable directory")
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return StoreDamaged(f"the store database {path} is damaged ({text}); restore it from "
                            "a backup, or start over with `release-watch store reinit`")
    if "unable to open" in lowered:
        return StoreError(f"cannot open the store database {path} ({text}); check that this "
                          "user may read and write it and its directory")
    if "locked" in lowered or "busy" in lowered:
        return locked(path, text)
    return StoreError(f"the store database {path} failed: {text}")


def _wal_index_possible(path: Path) -> bool:
    """Whether SQLite can use a WAL index beside ``path``: there is one, or it may make one.
    (Root may write any directory; a read-only mount is refused by ``access`` too.)"""
    return Path(f"{path}-shm").exists() or os.access(path.parent, os.W_OK)


def _no_wal_index(error: sqlite3.OperationalError) -> bool:
    """SQLite could not open or make the WAL index: CANTOPEN, or READONLY_DIRECTORY (no
    ``-shm`` can be made in a directory this user may not write)."""
    return ("unable to open" in str(error).lower()
            or error.sqlite_errorname == "SQLITE_READONLY_DIRECTORY")


def locked(path: Path, detail: str) -> StoreBusy:
    return StoreBusy(f"the store database {path} stayed locked by another process for "
                      f"{BUSY_TIMEOUT:.0f}s ({detail}); try again later")


class Database(Nesting):
    def __init__(self, connection: sqlite3.Connection, path: Path, *, read_only: bool) -> None:
        self.connection = connection
        self.path = path
        self.read_only = read_only
        self.has_claims = False  # one daemon, one writer at a time: its locks
        self.fence: Callable[[], int | None] | None = None  # no leader to fence
        self._lock = threading.RLock()

    @classmethod
    def connect(cls, path: Path, *, read_only: bool = False) -> Database:
        """Open ``path``. Read-only opens never write, not even the WAL index: where SQLite
        cannot make one beside the database it is read as immutable."""
        try:
            if not read_only:
                connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None,
                                             check_same_thread=False)
                database = cls(connection, path, read_only=False)
                # Takes effect only in a new file (before its first table): retention then
                # frees pages a little at a time. It must come before the switch to WAL.
                database.execute("PRAGMA auto_vacuum=INCREMENTAL")
                database.execute("PRAGMA journal_mode=WAL")
                database.execute("PRAGMA synchronous=NORMAL")
                return database
            return cls._connect_read_only(path)
        except sqlite3.Error as error:
            raise describe(path, error) from error

    @classmethod
    def _connect_read_only(cls, path: Path) -> Database:
        """``mode=ro``, so nothing is ever written. A WAL database needs its index (``-shm``)
        to be read; where there is none and the directory cannot be written (a read-only
        store after a clean exit), SQLite cannot make one and refuses, so the file is read
        as it stands (``immutable=1``): with no ``-shm`` no writer has it open, and the last
        one to close it left nothing in a WAL to miss."""
        uri = path.resolve().as_uri()
        modes = ["mode=ro", "mode=ro&immutable=1"]
        if not _wal_index_possible(path):
            del modes[0]
        for mode in modes:
            connection = sqlite3.connect(f"{uri}?{mode}", uri=True, timeout=BUSY_TIMEOUT,
                                         isolation_level=None, check_same_thread=False)
            try:
                connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError as error:
                connection.close()
                if _no_wal_index(error) and "immutable" not in mode:
                    continue  # no WAL index can be made here: read the file as it stands
                raise
            return cls(connection, path, read_only=True)
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            self.connection.close()

    # ---- the dialect (``watcher/store/backend.py``) -----------------------------------------
    @property
    def where(self) -> str:
        return str(self.path)

    def among(self, column: str, values: Sequence[str]) -> tuple[str, Any]:
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))

    def json_int(self, column: str, field: str) -> str:
        return f"json_extract({column}, '$.{field}')"

    def json_text(self, column: str, field: str) -> str:
        return f"json_extract({column}, '$.{field}')"

    def has_table(self, name: str) -> bool:
        return self.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (name,)) is not None

    def reclaim(self) -> None:
        if not self.connection.in_transaction:  # PRAGMA incremental_vacuum commits
            self.execute("PRAGMA incremental_vacuum")

    def another(self) -> Database:
        return Database.connect(self.path)

    def lease(self, holder: str, seconds: float) -> None:
        """None: one daemon holds the embedded store, by its ``daemon.lock``."""
        return None

    def integrity(self) -> list[str]:
        found = [str(row[0]) for row in self.all("PRAGMA integrity_check")]
        return [] if found == ["ok"] else found

    def wait_at_most(self, seconds: float) -> None:
        """How long a statement of this connection waits for another's write lock before it
        fails with ``StoreBusy`` (``BUSY_TIMEOUT`` unless set here); the slash commands'
        connection waits less than Slack waits for their answer."""
        with self.guard():
            self.connection.execute(f"PRAGMA busy_timeout = {max(1, round(seconds * 1000))}")

    @contextmanager
    def guard(self) -> Iterator[None]:
        with self._lock:
            try:
                yield
            except sqlite3.Error as error:
                raise describe(self.path, error) from error

    def execute(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        with self.guard():
            return self.connection.execute(sql, params)

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        with self.guard():
            self.connection.executemany(sql, rows)

    def one(self, sql: str, params: Params = ()) -> Any:
        """The first row, or None."""
        with self.guard():
            return self.connection.execute(sql, params).fetchone()

    def all(self, sql: str, params: Params = ()) -> list[Any]:
        with self.guard():
            return self.connection.execute(sql, params).fetchall()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing. ``BEGIN IMMEDIATE`` takes the write lock up front, so two processes
        never both read, then both write; nested uses join the outer transaction."""
        with self.guard():
            if self._depth:
                with self.joined():
                    yield
                return
            self.connection.execute("BEGIN IMMEDIATE")
            with self.opened():
                try:
                    yield
                    self.connection.execute("COMMIT")
                except BaseException:
                    if self.connection.in_transaction:  # a failed COMMIT leaves it open too
                        self.connection.execute("ROLLBACK")
                    raise
