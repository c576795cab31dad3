"""The names of the embedded store's files, without the database code: whether a store was
made yet at a path is asked by commands that never open one (``impact`` over bundled atlases
looks for stored ones), which need not import sqlite3 to ask."""

from __future__ import annotations

__all__ = ["DB_NAME"]

DB_NAME = "cache.db"  # diskcache's own file name: the ledger tables live beside its keys
