"""Which store a configuration names: the embedded one in a directory (``store.path``, the
default), or PostgreSQL (``[store] url``), opened the same way by every command."""

from __future__ import annotations

from pathlib import Path

from watcher.store.store import Store


def open_store(path: Path, url: str | None = None, *, read_only: bool = False) -> Store:
    """``url`` None: the embedded store at ``path``; else the store in that PostgreSQL
    database (psycopg is imported only then)."""
    if url is None:
        return Store.open(path, read_only=read_only)
    return Store.connect(url, read_only=read_only)


def shared(store: Store) -> bool:
    """Whether replicas may share ``store`` (PostgreSQL), where one elects a leader; the
    embedded store is one process's, held by its ``daemon.lock``."""
    from watcher.store.db import Database

    return not isinstance(store.db, Database)
