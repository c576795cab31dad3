"""The GitHub REST client: a repo's releases (paginated, conditional on the ETags kept), an
org's repositories, one release, and PR labels over GraphQL; each request made by
``Exchange`` (``watcher.github.exchange``), which keeps GitHub's rules.
"""

from __future__ import annotations

import logging
from typing import Any

from watcher.errors import MalformedResponse
from watcher.github.answers import (
    GRAPHQL,
    ORG_REPOS,
    RELEASE,
    RELEASES,
    Listing,
    OrgRepo,
    Page,
    RetryPolicy,
    parse_link_header,
)
from watcher.github.exchange import Exchange
from watcher.models import Release

logger = logging.getLogger(__name__)

__all__ = ["GitHubClient", "Listing", "OrgRepo", "Page", "RetryPolicy", "parse_link_header"]


class GitHubClient(Exchange):
    def releases_url(self, repo: str, per_page: int, page: int = 1) -> str:
        return f"{self.api_url}/repos/{repo}/releases?per_page={per_page}&page={page}"

    def list_releases(self, repo: str, *, etags: dict[str, str], per_page: int,
                      max_pages: int) -> Listing:
        """Newest first. ``etags`` maps page URLs to the ETags kept from the last poll."""
        return self._list(repo, self.releases_url(repo, per_page), etags, max_pages, RELEASES)

    def list_org_repos(self, org: str, *, etags: dict[str, str], max_pages: int = 20) -> Listing:
        """An organisation's repositories (``releases`` holds ``OrgRepo`` values here)."""
        url = f"{self.api_url}/orgs/{org}/repos?per_page=100&page=1"
        return self._list(f"org {org}", url, etags, max_pages, ORG_REPOS)

    def _list(self, repo: str, first_url: str, etags: dict[str, str], max_pages: int,
              shape: Any) -> Listing:
        listing = Listing(not_modified=False)
        url: str | None = first_url
        for page in range(1, max_pages + 1):
            assert url is not None
            response, releases = self._fetch(repo, url, etags.get(url), shape)
            listing.requests += 1
            if response.status_code == 304:
                listing.not_modified = page == 1
                listing.complete = False
                return listing
            listing.releases.extend(releases)
            if response.headers.get("etag"):
                listing.etags[url] = response.headers["etag"]
            page_url, url = url, parse_link_header(response.headers.get("link")).get("next")
            if url is None:
                listing.last_pages.add(page_url)
                return listing
            if not self._same_origin(url):
                logger.warning("%s: ignoring a next-page link to another host", repo)
                listing.complete = False
                return listing
        listing.complete = False
        return listing

    def releases_page(self, repo: str, url: str, etag: str | None) -> Page:
        """One page of releases, conditional on ``etag`` when given."""
        response, releases = self._fetch(repo, url, etag, RELEASES)
        if response.status_code == 304:
            return Page(not_modified=True)
        links = parse_link_header(response.headers.get("link"))
        return Page(False, releases, response.headers.get("etag"), last="next" not in links)

    def graphql_url(self) -> str:
        """GitHub.com: /graphql beside the REST root; GitHub Enterprise: /api/graphql."""
        if self.api_url.endswith("/api/v3"):
            return self.api_url.removesuffix("/v3") + "/graphql"
        return self.api_url + "/graphql"

    def graphql(self, label: str, query: str,
                variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """One GraphQL query, with the REST rules for retries and rate limits; the answer's
        ``data`` (GitHub answers errors beside partial data, e.g. null for a missing node)."""
        body = {"query": query, "variables": variables or {}}
        _, answer = self._fetch(label, self.graphql_url(), None, GRAPHQL, post=body)
        data = answer.get("data")
        if not isinstance(data, dict):
            errors = self.masked("; ".join(str(e.get("message"))
                                           for e in answer.get("errors") or []))
            raise MalformedResponse(f"{label}: GraphQL gave no data ({errors or 'no data'})",
                                    repo=label, url=self.graphql_url(), status=200)
        return data

    def pr_labels(self, repo: str, numbers: list[int]) -> dict[int, list[str]]:
        """Labels of up to 100 PRs in one GraphQL query. Numbers that are issues, not PRs,
        come back with no labels (GitHub answers them with a NOT_FOUND error and null)."""
        if len(numbers) > 100:
            raise ValueError("at most 100 PRs per query")
        owner, name = repo.split("/", 1)
        fields = " ".join(f"p{n}: pullRequest(number: {n}) {{ labels(first: 50) "
                          f"{{ nodes {{ name }} }} }}" for n in numbers)
        query = (f"query($owner: String!, $name: String!) {{ repository(owner: $owner, "
                 f"name: $name) {{ {fields} }} }}")
        repository = self.graphql(repo, query, {"owner": owner, "name": name}).get("repository")
        if repository is None:
            raise MalformedResponse(f"{repo}: GraphQL gave no repository", repo=repo,
                                    url=self.graphql_url(), status=200)
        labels: dict[int, list[str]] = {}
        for number in numbers:
            node = repository.get(f"p{number}") or {}
            labels[number] = [str(label.get("name", "")) for label in
                              ((node.get("labels") or {}).get("nodes") or [])]
        return labels

    def get_release(self, repo: str, release_id: int) -> Release | None:
        """The release by id, or None when GitHub says 404 (deleted, or never existed)."""
        url = f"{self.api_url}/repos/{repo}/releases/{release_id}"
        response, release = self._fetch(repo, url, None, RELEASE, allow_404=True)
        return None if response.status_code == 404 else release

