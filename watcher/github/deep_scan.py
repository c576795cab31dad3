"""The deep scan: now and then (``github.deep_scan``, default daily) a repo's releases are
read page by page up to ``github.deep_scan_pages``, even when page 1 answers 304, so an edit
or a deletion of an older release (beyond the pages a routine poll reads) is found.

Every page is conditional on its own ETag, so a day with no change anywhere costs one free
304 per page. When a page did change, the pages that answered 304 are read again in full,
so the planner sees one whole, consistent listing (and a complete one, where the scan reached
the last page, lets it confirm deletions of releases no longer listed).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Protocol

from watcher.github.client import GitHubClient, Listing, Page


class ScanDates(Protocol):
    """What of a repo's recorded state says whether its deep scan is due (the store's
    ``RepoState`` is one): read from the values the poller hands in, never from the store."""

    @property
    def baseline_at(self) -> datetime | None: ...

    @property
    def deep_scanned_at(self) -> datetime | None: ...


def page_urls(client: GitHubClient, repo: str, per_page: int, pages: int) -> list[str]:
    return [client.releases_url(repo, per_page, number) for number in range(1, pages + 1)]


def read_every_page(client: GitHubClient, repo: str, *, etags: dict[str, str],
                    last_pages: set[str], per_page: int, pages: int) -> Listing:
    """``last_pages``: page URLs that were the last page when their ETag was taken (a 304 for
    one of them ends the scan)."""
    listing = Listing(not_modified=True, complete=False)
    read: list[tuple[str, Page]] = []
    for url in page_urls(client, repo, per_page, pages):
        page = client.releases_page(repo, url, etags.get(url))
        listing.requests += 1
        read.append((url, page))
        if page.last or (page.not_modified and url in last_pages):
            listing.complete = True
            break
    # A page that answered 200 changed, unless it is an empty page past the end that we had
    # never read (no ETag for it): that one only says where the listing ends. An empty page 1
    # is the listing itself (a repo with no releases yet, read for its baseline).
    changed = any(not page.not_modified and (page.releases or url in etags or index == 0)
                  for index, (url, page) in enumerate(read))
    for index, (url, page) in enumerate(read):
        if page.not_modified and changed:
            page = client.releases_page(repo, url, None)  # read in full after all
            listing.requests += 1
            read[index] = (url, page)
        if not page.not_modified:
            if page.etag:
                listing.etags[url] = page.etag
            if page.last:
                listing.last_pages.add(url)
    if changed:
        listing.not_modified = False
        listing.releases = [release for _, page in read for release in page.releases]
    return listing


def spread(repo: str) -> float:
    """A repo's stable place in [0, 1): deep scans of a large watch list fall on different
    polls through the day instead of all on one."""
    return int(hashlib.sha256(repo.encode()).hexdigest()[:8], 16) / 2**32


def first_deep_scan(repo: str, now: datetime, every: float) -> datetime:
    """When a repo's deep scans count from, the first time it has one."""
    return now - timedelta(seconds=every * spread(repo))


def deep_scan_due(state: ScanDates, now: datetime, every: float) -> bool:
    if every <= 0 or state.baseline_at is None or state.deep_scanned_at is None:
        return False
    return (now - state.deep_scanned_at).total_seconds() >= every
