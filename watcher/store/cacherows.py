"""diskcache's ``Cache`` table read and written through the ledger's own connection, inside its
transactions: how an upgrade moves keys into or out of diskcache in the same transaction as the
ledger's tables, and how ``store check`` looks at diskcache's value files on a read-only store.

The columns are diskcache's own (its Cache table has had them since diskcache 3); keys and
values are encoded and decoded by ``diskcache.Disk`` with the settings diskcache stored, so
diskcache reads a row written here as one of its own, and the triggers diskcache installed keep
its count and size right. Everything else goes through diskcache itself
(``watcher/store/cachekeys.py``).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from watcher.errors import StoreError
from watcher.store.db import Database


def has_cache_table(db: Database) -> bool:
    found = db.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'Cache'")
    return found is not None


@dataclass(frozen=True)
class CacheRow:
    rowid: int
    key: Any
    filename: str | None  # a value file beside cache.db, for a value over the inline limit
    mode: int
    value: Any  # as stored; ``CacheRows.value`` decodes it


class CacheRows:
    def __init__(self, db: Database, directory: Path) -> None:
        import diskcache

        if not has_cache_table(db):
            raise StoreError(f"the store {directory} has no diskcache tables; open it again")
        self.db = db
        self.directory = directory
        settings = dict(db.all("SELECT key, value FROM Settings"))
        self.disk = diskcache.Disk(str(directory), **{
            name.removeprefix("disk_"): value for name, value in settings.items()
            if name.startswith("disk_")})

    def rows(self) -> Iterator[CacheRow]:
        """Every row, oldest first, streamed rather than fetched whole."""
        cursor = self.db.execute("SELECT rowid, key, raw, filename, mode, value FROM Cache "
                                 "ORDER BY rowid")
        for rowid, key, raw, filename, mode, value in cursor:
            yield CacheRow(rowid, self.disk.get(key, raw), filename, mode, value)

    def value(self, row: CacheRow) -> Any:
        return self.disk.fetch(row.mode, row.filename, row.value, False)

    def put(self, key: Any, value: Any) -> list[Path]:
        """As ``diskcache.Cache.set`` writes it; returns the value file of the value it
        replaced, if any, to delete once committed. A value over the inline limit goes to its
        file at once, so a transaction rolled back leaves that file behind, named by nothing."""
        db_key, raw = self.disk.put(key)
        size, mode, filename, db_value = self.disk.store(value, False, key=key)
        replaced = [CacheRow(rowid, key, old, 0, None) for rowid, old in self.db.all(
            "SELECT rowid, filename FROM Cache WHERE key = ? AND raw = ?", (db_key, raw))]
        leftovers = self.delete(replaced)
        now = time.time()  # diskcache's bookkeeping; nothing reads it without eviction
        self.db.execute("INSERT INTO Cache (key, raw, store_time, expire_time, access_time, "
                        "access_count, tag, size, mode, filename, value) "
                        "VALUES (?, ?, ?, NULL, ?, 0, NULL, ?, ?, ?, ?)",
                        (db_key, raw, now, now, size, mode, filename, db_value))
        return leftovers

    def delete(self, rows: Iterable[CacheRow]) -> list[Path]:
        """Deletes ``rows``; returns their value files, to delete once the transaction has
        committed (until then the rows still name them)."""
        rows = list(rows)
        self.db.executemany("DELETE FROM Cache WHERE rowid = ?", [(row.rowid,) for row in rows])
        return [self.directory / row.filename for row in rows if row.filename]


def remove_value_files(paths: Iterable[Path]) -> None:
    """As diskcache removes a value file: with its folders, once they are empty."""
    for path in paths:
        with contextlib.suppress(OSError):  # gone already
            path.unlink()
        with contextlib.suppress(OSError):  # stops at the first folder that is not empty
            os.removedirs(path.parent)


def missing_value_files(db: Database, directory: Path) -> list[str]:
    """diskcache's value files that its rows name but that are not there (``store check``)."""
    if not has_cache_table(db):
        return []
    return [f"diskcache value file {name} is missing (cache row {rowid})"
            for rowid, name in db.all("SELECT rowid, filename FROM Cache "
                                      "WHERE filename IS NOT NULL ORDER BY rowid")
            if not (directory / name).is_file()]
