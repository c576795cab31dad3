"""Every release of a repo with its notes, for ``release-watch upgrade``: the listing read page
by page, each page conditional on the ETag a cache kept for it, so a run where nothing changed
is answered ``304`` page after page (free with a token) and the notes come from the cache.

The cache is a port (``NotesCache``; the store's ``NotesShelf`` in the command), apart from
the ETags and records the bot's polls keep: see ``watcher/store/notes.py`` for why.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from watcher.github.client import GitHubClient
from watcher.models import Release

__all__ = ["NotesCache", "every_release"]

logger = logging.getLogger(__name__)

PER_PAGE = 100  # GitHub's most: the fewest requests (docs.github.com, "Using pagination")


class NotesCache(Protocol):
    def notes_page(self, url: str) -> dict[str, Any] | None: ...

    def kept_notes(self, repo: str, tags: list[str]) -> dict[str, Release]: ...

    def put_notes_page(self, repo: str, url: str, etag: str | None, last: bool,
                       releases: list[Release]) -> None: ...


def every_release(client: GitHubClient, repo: str, cache: NotesCache, *,
                  max_pages: int = 20) -> list[Release]:
    """The repo's releases, newest first, as GitHub lists them now; a ``GitHubError`` when
    GitHub cannot be asked (the caller says it in one line)."""
    releases: list[Release] = []
    for number in range(1, max_pages + 1):
        url = client.releases_url(repo, PER_PAGE, number)
        kept = cache.notes_page(url)
        tags = [str(tag) for tag in kept.get("tags", [])] if kept else []
        known = cache.kept_notes(repo, tags)
        # Asked conditionally only when every release the page vouches for is still kept.
        etag = str(kept["etag"]) if kept and len(known) == len(set(tags)) else None
        page = client.releases_page(repo, url, etag)
        if page.not_modified and kept is not None:
            releases += [known[tag] for tag in tags]
            last = bool(kept.get("last"))
        else:
            cache.put_notes_page(repo, url, page.etag, page.last, page.releases)
            releases += page.releases
            last = page.last
        if last:
            return releases
    logger.warning("%s: more than %d pages of releases; the oldest are not read", repo,
                   max_pages)
    return releases
