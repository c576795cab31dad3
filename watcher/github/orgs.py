"""Expands ``[[orgs]]`` into repos: an organisation's non-archived repositories, filtered by
include/exclude patterns. The list is refreshed only every ``refresh`` (default a day) and
conditionally, so between refreshes it costs nothing and a due refresh that finds nothing new
is a free 304."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from fnmatch import fnmatchcase

from watcher.config import Config, OrgConfig, RepoConfig
from watcher.errors import WatcherError
from watcher.github.client import GitHubClient, OrgRepo
from watcher.store import Store

logger = logging.getLogger(__name__)


def _wanted(org: OrgConfig, repo: OrgRepo) -> bool:
    name = repo.full_name.split("/", 1)[1]
    return (not repo.archived and not repo.disabled
            and any(fnmatchcase(name, pattern) for pattern in org.include)
            and not any(fnmatchcase(name, pattern) for pattern in org.exclude))


def org_repos(org: OrgConfig, client: GitHubClient, store: Store, now: datetime,
              *, dry_run: bool = False) -> list[str]:
    cached = store.org_state(org.name)
    if cached and now - datetime.fromisoformat(cached["refreshed_at"]) < timedelta(
            seconds=org.refresh):
        return list(cached["repos"])
    try:
        listing = client.list_org_repos(org.name, etags=cached["etags"] if cached else {})
    except WatcherError as error:
        if cached:
            logger.warning("org %s: keeping the last repo list (%s)", org.name, error)
            return list(cached["repos"])
        raise
    if listing.not_modified and cached:
        repos = list(cached["repos"])
    else:
        repos = sorted(repo.full_name for repo in listing.releases if _wanted(org, repo))
    if not dry_run:
        store.put_org_state(org.name, {"repos": repos, "refreshed_at": now.isoformat(),
                                       "etags": listing.etags or (cached or {}).get("etags", {})})
    return repos


def watched_repos(config: Config, client: GitHubClient, store: Store,
                  clock: Callable[[], datetime], *, dry_run: bool = False,
                  failures: list[WatcherError] | None = None) -> list[RepoConfig]:
    """``[[repos]]`` first (their settings win), then each org's repos not listed already."""
    repos = list(config.repos)
    seen = {repo.name.lower() for repo in repos}
    for org in config.orgs:
        try:
            names = org_repos(org, client, store, clock(), dry_run=dry_run)
        except WatcherError as error:
            logger.error("org %s: %s", org.name, error)
            if failures is not None:
                failures.append(error)
            continue
        for name in names:
            if name.lower() not in seen:
                seen.add(name.lower())
                # An organisation's existing releases are history: its repos start silently
                # and announce only what is released after they are first seen.
                repos.append(RepoConfig(name=name, include_prereleases=org.include_prereleases,
                                        first_run_announce=0))
    return repos
