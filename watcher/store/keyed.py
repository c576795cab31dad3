"""What the store keeps by key rather than in the ledger (``watcher/store/cachekeys.py``): a PR's
labels, what a notifier remembered, a codebase's impact index; diskcache keys in the embedded
store, rows of ``rw_kv`` on PostgreSQL (``watcher/store/tablekeys.py``), through one port
(``KeyValues``), never inside a ledger transaction.

A part of ``Store`` (which mixes it in); ``keys`` is None for a store opened read-only (no
cached key is found then).
"""

from __future__ import annotations

from typing import Any

from watcher.errors import StoreReadOnly
from watcher.store.backend import Backend, Key, KeyValues
from watcher.store.cachekeys import code_index_key, memory_key, pr_labels_key


class KeyedValues:
    db: Backend
    keys: KeyValues | None

    def pr_labels(self, repo: str, numbers: list[int]) -> dict[int, list[str]]:
        keys = self._keys()
        if keys is None:
            return {}
        wanted: dict[Key, int] = {pr_labels_key(repo, number): number for number in numbers}
        return {wanted[key]: list(labels)
                for key, labels in keys.get_many(list(wanted)).items()}

    def put_pr_labels(self, repo: str, labels: dict[int, list[str]]) -> None:
        """Kept for good: a merged PR's release-notes labels do not change."""
        self._writable_keys().set_many({pr_labels_key(repo, number): list(names)
                                        for number, names in labels.items()})

    def code_index(self, root: str) -> dict[str, str]:
        """A codebase's impact index as last scanned, per file (its size, mtime, hash and
        uses, as ``watcher.impact.scan`` writes them); {} when never scanned."""
        keys = self._keys()
        found = keys.get_many([code_index_key(root)]) if keys is not None else {}
        return dict(next(iter(found.values()), None) or {})

    def put_code_index(self, root: str, files: dict[str, str]) -> None:
        """A cache: losing it costs one full scan of the codebase, never an event."""
        self._writable_keys().set_many({code_index_key(root): dict(files)})

    def recall(self, notifier: str, key: str) -> dict[str, Any] | None:
        """What a notifier remembered under ``key`` (the Slack message of a release)."""
        keys = self._keys()
        found = keys.get_many([memory_key(notifier, key)]) if keys is not None else {}
        value = next(iter(found.values()), None)
        return dict(value) if value else None  # {}: forgotten (its thread is gone)

    def remember(self, notifier: str, key: str, value: dict[str, Any]) -> None:
        self._writable_keys().set_many({memory_key(notifier, key): dict(value)})

    def _keys(self) -> KeyValues | None:
        if self.db.holds_transaction():
            # diskcache's connection would wait for the write lock this thread holds.
            raise RuntimeError("the store's diskcache keys are used outside its transactions")
        return self.keys

    def _writable_keys(self) -> KeyValues:
        keys = self._keys()
        if keys is None:
            raise StoreReadOnly(f"the store {self.db.where} was opened read-only")
        return keys

