"""The store's cached keys on PostgreSQL: what the embedded store keeps as diskcache keys
(``watcher/store/cachekeys.py``: PR labels, notifier memory, the impact index, atlases) as rows
of ``rw_kv``, one per key, its value as JSON text.

The same port as diskcache's (``KeyValues``: ``get_many``, ``set_many``), so whatever adds
keys through it (``cachekeys``' key functions) is stored here unchanged: a string key as it
is, a tuple key as its JSON array (no GitHub name or key function makes a string that starts
with ``[``). Values must be JSON (lists, dicts, strings, numbers), as every key's is.
"""

from __future__ import annotations

import json
from typing import Any

from watcher.store.backend import Backend, Key


def encode(key: Key) -> str:
    return key if isinstance(key, str) else json.dumps(list(key))


def decode(text: str) -> Key:
    if text.startswith("["):
        first, second, third = json.loads(text)
        return (str(first), str(second), str(third))
    return text


class TableKeys:
    def __init__(self, db: Backend) -> None:
        self.db = db

    def get_many(self, keys: list[Key]) -> dict[Key, Any]:
        if not keys:
            return {}
        wanted = {encode(key): key for key in keys}
        among, names = self.db.among("key", list(wanted))
        rows = self.db.all(f"SELECT key, value FROM rw_kv WHERE {among}", (names,))
        return {wanted[key]: json.loads(value) for key, value in rows}

    def set_many(self, values: dict[Key, Any]) -> None:
        """All of ``values`` in one transaction."""
        with self.db.transaction():
            self.db.executemany("INSERT INTO rw_kv (key, value) VALUES (?, ?) ON CONFLICT "
                                "(key) DO UPDATE SET value = excluded.value",
                                [(encode(key), json.dumps(value))
                                 for key, value in values.items()])

    def close(self) -> None:
        """The store's connection is closed with the store."""
