"""GitHub: the one thin client that does the HTTP, and the policies around it.

``client`` lists releases with conditional, paginated requests, each made by ``exchange``
(retries, redirects, rate limits) and typed by ``answers``; ``ratelimit``
reads GitHub's rate-limit headers and says how long to wait; ``pacing`` keeps requests under
GitHub's per-minute ceiling; ``jsonbody`` decodes answers strictly, then leniently; ``batch_check``
asks many repositories for their newest releases in one GraphQL query; ``deep_scan`` reads every
page of a repo now and then; ``listing`` lists all of a repo's releases with their notes
through a cache of its own (``upgrade``); ``orgs`` expands ``[[orgs]]`` into repos;
``unreachable`` says why GitHub could not be reached and what fixes it. Nothing here decides what a
listing means (``watcher.plan`` does) or touches the store: the client returns values (an
organisation's repos with the state to keep of them among them) and the poller records them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.github.batch_check import check_many as check_many
    from watcher.github.client import GitHubClient as GitHubClient
    from watcher.github.client import Listing as Listing
    from watcher.github.client import RetryPolicy as RetryPolicy
    from watcher.github.deep_scan import deep_scan_due as deep_scan_due
    from watcher.github.deep_scan import first_deep_scan as first_deep_scan
    from watcher.github.deep_scan import page_urls as page_urls
    from watcher.github.deep_scan import read_every_page as read_every_page
    from watcher.github.listing import every_release as every_release
    from watcher.github.orgs import watched_repos as watched_repos
    from watcher.github.pacing import Pacer as Pacer
    from watcher.github.unreachable import why_unreachable as why_unreachable

_EXPORTS = {
    "check_many": "batch_check",
    "deep_scan_due": "deep_scan",
    "every_release": "listing",
    "first_deep_scan": "deep_scan",
    "GitHubClient": "client",
    "Listing": "client",
    "Pacer": "pacing",
    "page_urls": "deep_scan",
    "read_every_page": "deep_scan",
    "RetryPolicy": "client",
    "watched_repos": "orgs",
    "why_unreachable": "unreachable",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
