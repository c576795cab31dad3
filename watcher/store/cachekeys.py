"""The store's diskcache: what is a cache rather than the ledger, as diskcache keys in the same
``cache.db`` as the ledger's tables, opened on first use.

Keys (the values are plain lists and dicts):
  "pr-labels|owner/repo|number"   a PR's labels, kept for good (``classify.use_pr_labels``)
  ("memory", notifier, key)       what a notifier remembered: where a release's first Slack
                                  message went, and its blocks (``handlers/slack/notifier.py``)

A PR-label key is a string because a first poll looks up every PR of a release (hundreds): a
string key is stored as it is, where diskcache pickles and optimises a tuple first, which made
each look-up three times dearer (11 against 34 us); GitHub's names cannot hold a ``|``. A
notifier's name is free text, so its memory keeps the tuple, looked up once per delivery.

Why these and nothing else: each is read and written by key, on its own, never in one
transaction with a record, an event or a delivery, and none is ever read in order or counted.
Losing one costs a look-up again (a label) or a message of its own instead of a thread reply
(a memory), never a missed or repeated event. What is ordered, counted or written together with
the ETag that vouches for it is a table (``watcher/store/schema.py``), and so is what a read-only
``status`` reads (the daemon's heartbeat, the rate limit, organisations' repo lists): diskcache
cannot open a store it may not write.

Opened on first use, not with the store: a poll where nothing changed looks no label up and
sends nothing, and opening diskcache costs its import and a dozen writes to its Settings table.
diskcache has connections of its own (one per thread), so a thread must not use it inside a
ledger transaction it holds: diskcache would wait for the write lock that very thread holds.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from watcher.errors import StoreError
from watcher.store.db import BUSY_TIMEOUT, DB_NAME, describe, locked

# Stored in diskcache's Settings table, so anyone opening the directory with diskcache gets them.
# "none": nothing is evicted, whatever the size (the limit is only far away for good measure),
# and with nothing to evict or expire, a write skips diskcache's culling queries (limit 0);
# INCREMENTAL auto-vacuum, as the ledger's connection sets it (``watcher/store/db.py``), where
# diskcache's default (FULL) would switch the file back and forth at every open.
SETTINGS: dict[str, Any] = {"eviction_policy": "none", "size_limit": 2**62, "cull_limit": 0,
                            "sqlite_auto_vacuum": 2}

Key = str | tuple[str, str, str]
_MISSING = object()


def pr_labels_key(repo: str, number: int) -> str:
    return f"pr-labels|{repo}|{number}"


def code_index_key(root: str) -> str:
    """One codebase's per-file impact index (``[impact] code``), under the root as configured."""
    return f"code-index|{root}"


def memory_key(notifier: str, key: str) -> tuple[str, str, str]:
    return ("memory", notifier, key)


class CacheKeys:
    """diskcache's ``Cache`` over the store directory, opened once, on first use."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache: Any = None  # diskcache.Cache, once opened
        self._opening = threading.Lock()

    @property
    def opened(self) -> bool:
        return self._cache is not None

    def open(self) -> Any:
        if self._cache is not None:
            return self._cache
        with self._opening:
            if self._cache is None:
                import diskcache

                with self._guard():
                    self._cache = diskcache.Cache(str(self.directory), timeout=BUSY_TIMEOUT,
                                                  **SETTINGS)
            return self._cache

    def close(self) -> None:
        """Closes this thread's connection; another thread's closes with its thread."""
        if self._cache is not None:
            self._cache.close()

    def get_many(self, keys: list[Key]) -> dict[Key, Any]:
        """The values under those of ``keys`` that are there."""
        cache = self.open()
        with self._guard():
            found = {key: cache.get(key, _MISSING) for key in keys}
        return {key: value for key, value in found.items() if value is not _MISSING}

    def set_many(self, values: dict[Key, Any]) -> None:
        """All of ``values`` in one diskcache transaction."""
        cache = self.open()
        with self._guard(), cache.transact():
            for key, value in values.items():
                cache.set(key, value)

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """diskcache's errors as the ledger's: one line naming the file and the fix."""
        import diskcache

        path = self.directory / DB_NAME
        try:
            yield
        except sqlite3.Error as error:
            raise describe(path, error) from error
        except diskcache.Timeout as error:
            raise locked(path, "diskcache") from error
        except OSError as error:  # a value file diskcache keeps beside the database
            raise StoreError(f"cannot use the store {self.directory}: {error.strerror or error}"
                             "; check that this user may read and write it") from error
