"""Which store a configuration names: the embedded one in a directory (``store.path``, the
default), or PostgreSQL (``[store] url``), opened the same way by every command."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from watcher.store.atlases import StoredAtlases

if TYPE_CHECKING:
    from watcher.store.store import Store


def open_store(path: Path, url: str | None = None, *, read_only: bool = False) -> Store:
    """``url`` None: the embedded store at ``path``; else the store in that PostgreSQL
    database (psycopg is imported only then)."""
    from watcher.store.store import Store  # the ledger's queries: not for an atlas look-up

    if url is None:
        return Store.open(path, read_only=read_only)
    return Store.connect(url, read_only=read_only)


def shared(store: Store) -> bool:
    """Whether replicas may share ``store`` (PostgreSQL), where one elects a leader; the
    embedded store is one process's, held by its ``daemon.lock``."""
    from watcher.store.db import Database

    return not isinstance(store.db, Database)


@contextmanager
def atlases_read_only(path: Path, url: str | None = None) -> Iterator[StoredAtlases | None]:
    """The atlases a store keeps, read without writing (the offline ``impact``); None where
    no embedded store was made yet at ``path``."""
    if url is not None:
        from watcher.store.tablekeys import TableKeys

        store = open_store(path, url, read_only=True)
        try:
            yield StoredAtlases(TableKeys(store.db))
        finally:
            store.close()
        return
    from watcher.store.files import DB_NAME  # not .db: no sqlite3 to ask whether it is

    if not (path / DB_NAME).is_file():
        yield None
        return
    from watcher.store.cachekeys import CacheKeys

    keys = CacheKeys(path)
    try:
        yield StoredAtlases(keys)
    finally:
        keys.close()
