"""Where ``upgrade`` gets a repo's releases: GitHub's listing, asked conditionally on the ETags
the store's notes cache kept (``watcher/store/notes.py``), with the token of ``GITHUB_TOKEN``
(5,000 requests an hour instead of 60; a ``304`` costs none of them with a token), paced
with every release-watch process on the store, retried as the bot's polls are."""

from __future__ import annotations

import logging
from typing import Any

from watcher.config import Config
from watcher.github import GitHubClient, Pacer, RetryPolicy, every_release
from watcher.models import Release
from watcher.store import Store

__all__ = ["fetch_releases"]

logger = logging.getLogger(__name__)


def fetch_releases(config: Config, deps: Any, store: Store, repo: str) -> list[Release]:
    """Every release of ``repo`` with its notes, newest first; a ``GitHubError`` in one line
    when GitHub cannot be asked (exit 1)."""
    github = config.github
    policy = RetryPolicy(retries=github.retries, backoff=github.backoff,
                         max_rate_limit_wait=github.max_rate_limit_wait)
    pacer = Pacer(github.max_requests_per_minute, clock=deps.epoch, sleep=deps.sleep,
                  shared=store, key=f"rest {github.api_url}")
    with GitHubClient.make_http(github.api_url, deps.get_secrets().github_token,
                                github.timeout, transport=deps.transport) as http:
        client = GitHubClient(http, api_url=github.api_url, policy=policy, sleep=deps.sleep,
                              clock=deps.epoch, pacer=pacer)
        releases = every_release(client, repo, store)
        moved = client.take_move(repo)
    if moved:
        logger.warning("%s: GitHub answers for it as %s; pass --repo %s", repo, moved, moved)
    return releases
