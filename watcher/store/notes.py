"""The part of ``Store`` that keeps the release notes ``release-watch upgrade`` fetched: each
listing page's ETag and the tags it held, and each release's notes by repo and tag, so the
next run asks GitHub conditionally and a ``304`` (free with a token) is answered from here.

Apart from the bot's ledger on purpose: the releases a poll records and the ETags it keeps
vouch for what the daemon has announced. Were ``upgrade`` to write those, a daemon sharing
the store would take a release a CI run fetched first as already seen, and never announce
it. The bot never reads these keys.

diskcache keys (rows of ``rw_kv`` on PostgreSQL), a cache in ``cachekeys.py``'s sense:
losing one costs a page fetched again.
  "notes-page|URL"           {"etag", "last", "tags"}: one page of a repo's release listing
  "notes|OWNER/NAME|TAG"     the release as GitHub gave it (its tag, body, flags)
"""

from __future__ import annotations

from typing import Any

from watcher.models import Release
from watcher.store.backend import KeyValues


def notes_page_key(url: str) -> str:
    return f"notes-page|{url}"


def notes_key(repo: str, tag: str) -> str:
    return f"notes|{repo.lower()}|{tag}"


class NotesShelf:
    """Mixed into ``Store``; it provides ``_keys()`` and ``_writable_keys()``."""

    def _keys(self) -> KeyValues | None:
        raise NotImplementedError

    def _writable_keys(self) -> KeyValues:
        raise NotImplementedError

    def notes_page(self, url: str) -> dict[str, Any] | None:
        """The page kept for ``url`` (its ETag, whether it was the last, its tags)."""
        keys = self._keys()
        found = keys.get_many([notes_page_key(url)]) if keys is not None else {}
        value = next(iter(found.values()), None)
        return dict(value) if isinstance(value, dict) else None

    def kept_notes(self, repo: str, tags: list[str]) -> dict[str, Release]:
        """The releases kept of ``tags``, by tag (those never kept are missing)."""
        keys = self._keys()
        if keys is None or not tags:
            return {}
        wanted = {notes_key(repo, tag): tag for tag in tags}
        return {wanted[str(key)]: Release.model_validate(value)
                for key, value in keys.get_many(list(wanted)).items()
                if isinstance(value, dict)}

    def put_notes_page(self, repo: str, url: str, etag: str | None, last: bool,
                       releases: list[Release]) -> None:
        """One page as GitHub answered it: its releases by tag, then the page that vouches
        for them (a page whose ETag is kept always has its releases kept)."""
        values: dict[Any, Any] = {notes_key(repo, release.tag_name):
                                  release.model_dump(mode="json") for release in releases}
        keys = self._writable_keys()
        keys.set_many(values)
        if etag:
            keys.set_many({notes_page_key(url): {
                "etag": etag, "last": last,
                "tags": [release.tag_name for release in releases]}})
