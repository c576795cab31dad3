"""The batched GraphQL check for large watch lists: one query asks many repositories for their
newest releases' ids, tags, names, flags and ``updatedAt`` (aliases ``r0``…``rN``), and a
fingerprint of that answer tells which repositories changed since their last REST read. Only
those are read over REST, so 5,000 quiet repositories cost 100 queries, not 5,000 requests.

GraphQL's cost: each query here is one point of its 5,000-an-hour budget (GitHub charges a
connection per hundred parent nodes, with a minimum of one), and counts once against its
secondary limit of 2,000 points a minute. A repository GraphQL cannot see (renamed, deleted,
no access) gets no fingerprint and is read over REST, where its error is reported as usual.
"""

from __future__ import annotations

import hashlib
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from watcher.errors import WatcherError
from watcher.github.client import GitHubClient

logger = logging.getLogger(__name__)

# What a REST listing would show changing, plus updatedAt for edits of a body.
FIELDS = "databaseId tagName name isDraft isPrerelease updatedAt"


def query(repos: list[str], first: int) -> str:
    """Names go in as GraphQL string literals (OWNER/NAME is checked against
    ``[A-Za-z0-9_.-]`` when the config is read, so there is nothing to escape)."""
    parts = []
    for index, repo in enumerate(repos):
        owner, name = repo.split("/", 1)
        parts.append(f"r{index}: repository(owner: {json.dumps(owner)}, name: {json.dumps(name)})"
                     f" {{ releases(first: {first}, orderBy: {{field: CREATED_AT, "
                     f"direction: DESC}}) {{ nodes {{ {FIELDS} }} }} }}")
    return "query { " + " ".join(parts) + " }"


def fingerprint(nodes: list[Any]) -> str:
    return hashlib.sha256(json.dumps(nodes, sort_keys=True).encode()).hexdigest()


def fingerprints(repos: list[str], data: dict[str, Any]) -> dict[str, str | None]:
    """Repo → fingerprint of its newest releases; None where GraphQL had no answer."""
    found: dict[str, str | None] = {}
    for index, repo in enumerate(repos):
        node = data.get(f"r{index}")
        releases = node.get("releases") if isinstance(node, dict) else None
        nodes = releases.get("nodes") if isinstance(releases, dict) else None
        found[repo] = fingerprint(nodes) if isinstance(nodes, list) else None
    return found


def check(client: GitHubClient, repos: list[str], first: int) -> dict[str, str | None]:
    """One query for ``repos`` (GitHub: at most 100 aliases is a sensible ceiling)."""
    label = f"GraphQL check of {len(repos)} repos ({repos[0]}…)"
    return fingerprints(repos, client.graphql(label, query(repos, first)))


def check_many(client: GitHubClient, repos: list[str], *, first: int, batch: int,
               pool: ThreadPoolExecutor) -> dict[str, str | None]:
    """Fingerprints for ``repos``, ``batch`` a query, the queries run on ``pool``. A failed
    query costs nothing but the check: its repos are left out and read over REST."""
    futures = [pool.submit(check, client, repos[i:i + batch], first)
               for i in range(0, len(repos), batch)]
    found: dict[str, str | None] = {}
    for future in futures:
        try:
            found.update(future.result())
        except WatcherError as error:
            logger.warning("%s; those repos are read over REST", error)
    return found
