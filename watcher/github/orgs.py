"""Expands ``[[orgs]]`` into repos: an organisation's non-archived repositories, filtered by
include/exclude patterns. The list is refreshed only every ``refresh`` (default a day) and
conditionally, so between refreshes it costs nothing and a due refresh that finds nothing new
is a free 304. What the last refresh found is handed in (``cached``) and what this one found
handed back for the poller to record: nothing here reads or writes the store."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any

from watcher.config import Config, OrgConfig, RepoConfig
from watcher.errors import WatcherError
from watcher.github.client import GitHubClient, OrgRepo

logger = logging.getLogger(__name__)

# An organisation's last refresh as the poller keeps it: ``repos``, ``refreshed_at``, ``etags``.
OrgState = dict[str, Any]


def _wanted(org: OrgConfig, repo: OrgRepo) -> bool:
    name = repo.full_name.split("/", 1)[1]
    return (not repo.archived and not repo.disabled
            and any(fnmatchcase(name, pattern) for pattern in org.include)
            and not any(fnmatchcase(name, pattern) for pattern in org.exclude))


def org_repos(org: OrgConfig, client: GitHubClient, cached: OrgState | None, now: datetime
              ) -> tuple[list[str], OrgState | None]:
    """The organisation's repos to watch, and its state to record (None: the ``cached`` list
    is still fresh, or kept because GitHub could not be asked)."""
    if cached and now - datetime.fromisoformat(cached["refreshed_at"]) < timedelta(
            seconds=org.refresh):
        return list(cached["repos"]), None
    try:
        listing = client.list_org_repos(org.name, etags=cached["etags"] if cached else {})
    except WatcherError as error:
        if cached:
            logger.warning("org %s: keeping the last repo list (%s)", org.name, error)
            return list(cached["repos"]), None
        raise
    if listing.not_modified and cached:
        repos = list(cached["repos"])
    else:
        repos = sorted(repo.full_name for repo in listing.releases if _wanted(org, repo))
    return repos, {"repos": repos, "refreshed_at": now.isoformat(),
                   "etags": listing.etags or (cached or {}).get("etags", {})}


def watched_repos(config: Config, client: GitHubClient, cached: Mapping[str, OrgState | None],
                  clock: Callable[[], datetime], *,
                  failures: list[WatcherError] | None = None,
                  ) -> tuple[list[RepoConfig], dict[str, OrgState]]:
    """``[[repos]]`` first (their settings win), then each org's repos not listed already;
    and, by organisation name, the states to record of the lists refreshed (``cached``: the
    last ones recorded)."""
    repos = list(config.repos)
    seen = {repo.name.lower() for repo in repos}
    refreshed: dict[str, OrgState] = {}
    for org in config.orgs:
        try:
            names, state = org_repos(org, client, cached.get(org.name), clock())
        except WatcherError as error:
            logger.error("org %s: %s", org.name, error)
            if failures is not None:
                failures.append(error)
            continue
        if state is not None:
            refreshed[org.name] = state
        for name in names:
            if name.lower() not in seen:
                seen.add(name.lower())
                # An organisation's existing releases are history: its repos start silently
                # and announce only what is released after they are first seen.
                repos.append(RepoConfig(name=name, include_prereleases=org.include_prereleases,
                                        first_run_announce=0))
    return repos, refreshed
