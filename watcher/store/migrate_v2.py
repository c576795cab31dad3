"""Upgrades a schema-2 store (tables only) to schema 3 inside the caller's transaction, so a
crash half-way leaves the schema-2 store as it was, still usable by the code that wrote it.

Schema 2 kept its caches in tables too: PR labels in ``rw_pr_labels``, what notifiers
remembered in ``rw_meta`` under ``memory|notifier|key``. Schema 3 keeps them as diskcache keys
(``watcher/store/cachekeys.py``); they are written into diskcache's Cache table through the ledger's
connection (``watcher/store/cacherows.py``), so moving them and dropping the old rows is one
transaction. diskcache's tables must exist already: diskcache itself creates them, before the
transaction (inside it, diskcache's connection would wait for ours).
"""

from __future__ import annotations

import json
from pathlib import Path

from watcher.store.cachekeys import memory_key, pr_labels_key
from watcher.store.cacherows import CacheRows
from watcher.store.db import Database

MEMORY = "memory|"


def migrate_v2(db: Database, directory: Path) -> list[Path]:
    """Returns the value files of replaced keys, to delete once the transaction committed."""
    cache = CacheRows(db, directory)
    leftovers = []
    for repo, number, labels in db.execute("SELECT repo, number, labels FROM rw_pr_labels"):
        leftovers += cache.put(pr_labels_key(repo, number), list(json.loads(labels)))
    for key, value in db.execute("SELECT key, value FROM rw_meta WHERE key GLOB 'memory|*'"):
        # Notifier names are free text; a memory's own key ("thread:owner/repo:id") has no |.
        notifier, _, name = key.removeprefix(MEMORY).rpartition("|")
        leftovers += cache.put(memory_key(notifier, name), dict(json.loads(value)))
    db.execute("DELETE FROM rw_meta WHERE key GLOB 'memory|*'")
    db.execute("DROP TABLE rw_pr_labels")
    return leftovers
