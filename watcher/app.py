"""The composition root: builds the store, client, analyzer and notifiers from a Config.

Everything with I/O is created here and handed in; sleep, clock and transport can be replaced
(tests use a loopback fake GitHub and never sleep).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx

from handlers.base import HandlerContext, Notifier, NotifierConfig, notifier_config
from watcher.config import Config
from watcher.deps import Dependencies

__all__ = ["Dependencies", "Runtime", "build_notifiers", "build_runtime", "notifier_configs",
           "taxonomy_for"]
from watcher.github import GitHubClient, RetryPolicy
from watcher.notes.analyze import Analyzer
from watcher.pacing import Pacer
from watcher.poller import Poller
from watcher.store import Store

if TYPE_CHECKING:
    from watcher.notes.labels import LabelSource
    from watcher.notes.taxonomy import Taxonomy

logger = logging.getLogger(__name__)


def taxonomy_for(config: Config) -> Taxonomy:
    from watcher.notes.taxonomy import with_overrides  # only when something is parsed

    rules = [(rule.subsystem, rule.patterns) for rule in config.classify.rules]
    return with_overrides(config.classify.headings, rules)


def notifier_configs(config: Config) -> list[tuple[type[Notifier], NotifierConfig]]:
    return [notifier_config(raw, config.source) for raw in config.notifiers]


def build_notifiers(config: Config, deps: Dependencies) -> dict[str, Notifier]:
    context = HandlerContext(secrets=deps.get_secrets(), base_dir=config.base_dir,
                             stdout=deps.stdout, slack_api_url=config.slack.api_url,
                             sleep=deps.sleep, monotonic=deps.epoch)
    return {cfg.name: cls(cfg, context) for cls, cfg in notifier_configs(config)}


def _label_source(config: Config, client: GitHubClient, store: Store,
                  deps: Dependencies) -> LabelSource | None:
    if not config.classify.use_pr_labels:
        return None
    from watcher.notes.labels import LabelSource, label_map

    mapping = label_map(config.classify.label_map)
    if deps.get_secrets().github_token is None:
        logger.warning("classify.use_pr_labels needs GITHUB_TOKEN (GitHub's GraphQL API "
                       "requires one); classifying by text")
        return None
    return LabelSource(client, store, mapping)


@dataclass
class Runtime:
    config: Config
    store: Store
    client: GitHubClient
    analyzer: Analyzer
    poller: Poller
    http: httpx.Client

    def close(self) -> None:
        self.http.close()
        self.store.close()


def build_runtime(config: Config, deps: Dependencies) -> Runtime:
    github = config.github
    http = GitHubClient.make_http(github.api_url, deps.get_secrets().github_token,
                                  github.timeout, transport=deps.transport,
                                  max_connections=github.concurrency)
    policy = RetryPolicy(retries=github.retries, backoff=github.backoff,
                         max_rate_limit_wait=github.max_rate_limit_wait)
    def pacer() -> Pacer:
        return Pacer(github.max_requests_per_minute, clock=deps.epoch, sleep=deps.sleep)

    client = GitHubClient(http, api_url=github.api_url, policy=policy, sleep=deps.sleep,
                          clock=deps.epoch, pacer=pacer(), graphql_pacer=pacer())
    store = Store.open(config.store_path())
    analyzer = Analyzer(lambda: taxonomy_for(config), max_body_chars=config.poll.max_body_chars,
                        labels=_label_source(config, client, store, deps))
    notifiers = [cfg for _, cfg in notifier_configs(config)]
    poller = Poller(config, store, client, analyzer, notifiers, clock=deps.clock)
    return Runtime(config, store, client, analyzer, poller, http)
