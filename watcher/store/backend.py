"""What ``Store`` needs of a database, whichever it is: the SQL dialect's few differences
behind one boundary, so the store's queries are written once.

Two backends: ``watcher/store/db.py`` (the embedded store's SQLite file, the default) and
``watcher/store/postgres.py`` (``[store] url``: PostgreSQL, for replicas sharing one store).
Statements use ``?`` placeholders, standard upserts (``INSERT … ON CONFLICT … DO UPDATE``,
``… DO NOTHING``) and ``RETURNING``, which both read alike; what differs is asked of the
backend: a list parameter (``among``), a JSON field (``json_int``, ``json_text``), whether a
table exists, reclaiming space after a prune, and a second connection of its own.

The diskcache keys have a port of their own (``KeyValues``): diskcache in the embedded store
(``watcher/store/cachekeys.py``), a table on PostgreSQL (``watcher/store/tablekeys.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

Params = Sequence[Any] | dict[str, Any]
Key = str | tuple[str, str, str]


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Backend(Protocol):
    read_only: bool
    # The embedded store's database file; a server's store has none (a path where nothing
    # is, so no lock file is ever found beside it).
    path: Path
    # Whether deliveries are claimed row by row (``watcher/store/claims.py``): replicas share
    # this store. ``fence``: the leader's current token, every write checked against it.
    has_claims: bool
    fence: Callable[[], int | None] | None

    @property
    def where(self) -> str:
        """The store as a message names it (a path; a URL without its password)."""

    def close(self) -> None: ...

    def execute(self, sql: str, params: Params = ()) -> Cursor: ...

    def executemany(self, sql: str, rows: Sequence[Params]) -> None: ...

    def one(self, sql: str, params: Params = ()) -> Any: ...

    def all(self, sql: str, params: Params = ()) -> list[Any]: ...

    def scalar(self, sql: str, params: Params = ()) -> Any: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def holds_transaction(self) -> bool: ...

    def wait_at_most(self, seconds: float) -> None: ...

    def among(self, column: str, values: Sequence[str]) -> tuple[str, Any]:
        """``column`` is one of ``values``: the SQL and its one parameter."""

    def json_int(self, column: str, field: str) -> str:
        """The integer ``field`` of the JSON text in ``column``."""

    def json_text(self, column: str, field: str) -> str:
        """The text ``field`` of the JSON text in ``column``."""

    def has_table(self, name: str) -> bool: ...

    def reclaim(self) -> None:
        """Give back the space a prune freed, where the database wants telling."""

    def another(self) -> Backend:
        """A connection of its own to the same store (the pacing window's)."""

    def integrity(self) -> list[str]:
        """The database's own check of what it holds: the problems, [] when sound."""

    def lease(self, holder: str, seconds: float) -> Lease | None:
        """The leader's lease where replicas share the store (``watcher/store/lease.py``)."""


class Lease(Protocol):
    def acquire(self) -> int | None:
        """Take or renew the lease: its fencing token, or None while another holds it."""

    def release(self) -> None: ...

    def close(self) -> None: ...


class KeyValues(Protocol):
    """What is a cache rather than the ledger, by key: plain lists and dicts as values."""

    def get_many(self, keys: list[Key]) -> dict[Key, Any]: ...

    def set_many(self, values: dict[Key, Any]) -> None: ...

    def close(self) -> None: ...


class Nesting:
    """What both backends' transactions share: one transaction open at a time per
    connection, owned by the thread that opened it, nested uses joining it."""

    _depth = 0
    _owner: int | None = None

    def one(self, sql: str, params: Params = ()) -> Any:
        raise NotImplementedError

    def scalar(self, sql: str, params: Params = ()) -> Any:
        row = self.one(sql, params)
        return None if row is None else row[0]

    def holds_transaction(self) -> bool:
        """Whether this thread has a transaction open."""
        return self._depth > 0 and self._owner == threading.get_ident()

    @contextmanager
    def joined(self) -> Iterator[None]:
        """A transaction inside the open one: it is part of it."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    @contextmanager
    def opened(self) -> Iterator[None]:
        """The outermost transaction, by this thread, while it lasts."""
        self._depth, self._owner = 1, threading.get_ident()
        try:
            yield
        finally:
            self._depth, self._owner = 0, None
