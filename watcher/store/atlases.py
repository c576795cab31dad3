"""The part of ``Store`` that keeps the API atlases of package releases built from wheels
fetched from the package index (``watcher.impact.atlas``), and when a version not yet
published was last asked for.

diskcache keys, not a table: an atlas is a cache in the sense ``cachekeys.py`` gives the word.
It is read and written by key on its own, never in a transaction with the ledger, never
ordered or counted; losing it costs one download and build again, never an event. It is about
100 KB of gzip'd bytes, which diskcache keeps in a value file of its own beside ``cache.db``
(its ``disk_min_file_size``), so the ledger's pages stay small. And a key needs no schema
migration, where a table would move every store to schema 4 for a cache.

Keys:
  "atlas|package|version"          the atlas's bytes (``watcher.impact.atlas.codec``)
  "atlas-versions|package"         the versions stored, so the release before one is found
                                   without listing diskcache's keys
  "atlas-tried|package|version"    when the index last said "no such version" or could not
                                   be reached (ISO 8601), so a poll loop asks at most so often
"""

from __future__ import annotations

import base64
from datetime import datetime

from watcher.store.backend import KeyValues


def atlas_key(package: str, version: str) -> str:
    return f"atlas|{package}|{version}"


def atlas_versions_key(package: str) -> str:
    return f"atlas-versions|{package}"


def atlas_tried_key(package: str, version: str) -> str:
    return f"atlas-tried|{package}|{version}"


class AtlasShelf:
    """Mixed into ``Store``; it provides ``_keys()`` and ``_writable_keys()``."""

    def _keys(self) -> KeyValues | None:
        raise NotImplementedError

    def _writable_keys(self) -> KeyValues:
        raise NotImplementedError

    def atlas(self, package: str, version: str) -> bytes | None:
        """The stored atlas of one release, as the bytes ``put_atlas`` was given."""
        found = self._get(atlas_key(package, version))
        if isinstance(found, str):  # base64: the key-value port takes JSON values only
            return base64.b64decode(found)
        return bytes(found) if isinstance(found, bytes | bytearray) else None

    def put_atlas(self, package: str, version: str, data: bytes) -> None:
        versions = self.atlas_versions(package)
        keys = self._writable_keys()
        keys.set_many({atlas_key(package, version): base64.b64encode(data).decode("ascii"),
                       atlas_versions_key(package): sorted({*versions, version})})

    def atlas_versions(self, package: str) -> list[str]:
        """The versions of ``package`` whose atlas is stored."""
        found = self._get(atlas_versions_key(package))
        return [str(version) for version in found] if isinstance(found, list) else []

    def atlas_tried(self, package: str, version: str) -> datetime | None:
        """When the index was last asked for a version it did not have (or did not answer)."""
        found = self._get(atlas_tried_key(package, version))
        return datetime.fromisoformat(found) if isinstance(found, str) else None

    def put_atlas_tried(self, package: str, version: str, when: datetime) -> None:
        self._writable_keys().set_many({atlas_tried_key(package, version): when.isoformat()})

    def _get(self, key: str) -> object:
        keys = self._keys()
        found = keys.get_many([key]) if keys is not None else {}
        return found.get(key)


class StoredAtlases(AtlasShelf):
    """The atlases a store keeps, read without writing anything (the offline ``impact``
    command: what it fetches is not kept, what a poll or ``atlas build`` stored is read)."""

    def __init__(self, keys: KeyValues | None) -> None:
        self.keys = keys

    def _keys(self) -> KeyValues | None:
        return self.keys

    def put_atlas(self, package: str, version: str, data: bytes) -> None:
        """Kept nowhere: the command writes no state."""

    def put_atlas_tried(self, package: str, version: str, when: datetime) -> None:
        """Kept nowhere: the command writes no state."""
