"""The composition root: builds the store, client, analyzer and notifiers from a Config, and
the daemon from them.

Everything with I/O is created here and handed in; sleep, clock and transport can be replaced
(tests use a loopback fake GitHub and never sleep). It is the one module of the core that knows
the adapters: notifiers are found through their entry-point group and built here, and Slack's
adapters for ``/release-watch`` (Socket Mode, the request URL) and for ``config check
--online`` (``auth.test``) are handed from here to the daemon and the command line, which
know them only by the core's ports (``watcher.delivery.Notifier``,
``watcher.subscribe.CommandTransports``). The root is on top: the daemon is handed what it
builds from a configuration (``DaemonParts``: a runtime, the notifiers ``run`` validates, the
configuration read again on SIGHUP), and neither it nor the server imports this module; the
values they share (``Runtime``, ``Dependencies``) live below all three, in ``watcher.deps``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from watcher.config import Config, load_config
from watcher.deps import Dependencies, Runtime, utcnow
from watcher.errors import ConfigError
from watcher.metrics import Metrics

# What a command builds is imported where it is built: a command loads no HTTP client, poller
# or store it does not run.
if TYPE_CHECKING:
    from datetime import datetime

    from pydantic import SecretStr

    from watcher.daemon import Daemon, DaemonParts
    from watcher.delivery import ImpactOf, Notifier, ReleaseImpact
    from watcher.github import GitHubClient
    from watcher.impact import CodeIndex, ImpactAnalyzer, Suppressor
    from watcher.impact.atlas import AtlasSource, PackageStep
    from watcher.models import Release
    from watcher.notes import LabelSource, Taxonomy
    from watcher.store import Store
    from watcher.subscribe import CommandTransports

__all__ = ["Dependencies", "Runtime", "build_daemon", "build_notifiers", "build_runtime",
           "daemon_parts", "quiet_channels", "slack_auth_test", "slack_command_transports",
           "subscribed_notifiers", "with_subscriptions"]

logger = logging.getLogger(__name__)


def _taxonomy(config: Config) -> Taxonomy:
    from watcher.notes import taxonomy_for  # only when something is parsed

    return taxonomy_for(config)


def build_notifiers(config: Config, deps: Dependencies) -> dict[str, Notifier]:
    from watcher.validate import handler_context, notifier_configs

    context = handler_context(config, deps)
    return {cfg.name: cls(cfg, context) for cls, cfg in notifier_configs(config, deps.environ)}


def subscribed_notifiers(config: Config, deps: Dependencies, store: Store,
                         configured: Mapping[str, Notifier]) -> dict[str, Notifier]:
    """A Slack notifier per subscription in the store (``/release-watch subscribe``), read
    now: what a channel subscribed to since the last call is routed from the next poll on."""
    subscriptions = store.subscriptions()
    if not subscriptions:
        return {}
    from watcher.delivery import notifier_config
    from watcher.subscribe import notifier_table  # only where a channel subscribed
    from watcher.validate import handler_context

    context = handler_context(config, deps)
    notifiers: dict[str, Notifier] = {}
    for sub in subscriptions:
        if sub.notifier_name in configured:
            logger.warning("the subscription of channel %s is not used: a configured notifier "
                           "is named %r too", sub.channel, sub.notifier_name)
            continue
        try:
            cls, cfg = notifier_config(notifier_table(sub), f"subscription {sub.id}",
                                       deps.environ)
        except ConfigError as error:  # a subsystem a later taxonomy no longer knows
            logger.warning("the subscription of channel %s is not used: %s", sub.channel,
                           "; ".join(str(error).splitlines()))
            continue
        notifiers[cfg.name] = cls(cfg, context)
    return notifiers


def quiet_channels(notifiers: Mapping[str, Notifier], store: Store) -> None:
    """Every notifier posting to a Slack channel routes with what that channel muted and
    snoozed with a button, as the store holds it now (``watcher.subscribe.quiet``)."""
    from watcher.subscribe import quiet_notifiers

    quiet_notifiers(notifiers, store.quiet_entries())


def _label_source(config: Config, client: GitHubClient, store: Store,
                  deps: Dependencies) -> LabelSource | None:
    wanted = config.classify.use_pr_labels
    has_token = deps.get_secrets().github_token is not None
    if wanted is False or (wanted is None and not has_token):
        return None  # unset and no token: text only, and nothing to warn about
    from watcher.notes import LabelSource, label_map

    mapping = label_map(config.classify.label_map)
    if not has_token:
        logger.warning("classify.use_pr_labels needs GITHUB_TOKEN (GitHub's GraphQL API "
                       "requires one); classifying by text")
        return None
    return LabelSource(client, store, mapping)


def impact_step(config: Config, store: Store, metrics: Metrics | None = None, *,
                clock: Callable[[], datetime] = utcnow,
                packages: PackageStep | None = None,
                ) -> Callable[[bool], ImpactOf]:
    """The impact step for one poll: the ``[impact]`` codebases scanned on first use, their
    per-file index kept in the store (not written back by a dry run); each scan's files and
    seconds told to ``metrics``. Atlases are the bundled and stored ones only: one missing is
    handed to ``packages``, the package step, and its release announced as pending."""
    from watcher.impact import CodeRoot, ImpactAnalyzer

    roots = [CodeRoot(codebase.label, codebase.path, name=codebase.name, link=codebase.link)
             for codebase in config.impact_codebases()]
    # The daemon keeps each codebase's index in memory between polls too: a re-scan of an
    # unchanged codebase then costs its stat calls, not a read of the whole index from disk.
    kept: dict[str, dict[str, str]] = {}
    indexes: dict[str, CodeIndex] = {}  # and its last index: an unchanged tree is not decoded

    def load(label: str) -> dict[str, str]:
        if label not in kept:
            kept[label] = store.code_index(label)
        return dict(kept[label])

    # The atlases' source and the taxonomy (owners of API modules), made when a release is
    # first read and kept for the daemon's life: a poll that announces nothing builds neither.
    # The source never fetches: announcing never waits on the package index.
    @cache
    def atlases() -> AtlasSource:
        from watcher.impact.atlas import AtlasSource

        return AtlasSource(store=store, index=None, clock=clock,
                           wanted=packages.want if packages is not None else None)

    @cache
    def taxonomy() -> Taxonomy:
        return _taxonomy(config)

    def for_poll(dry_run: bool) -> ImpactOf:
        def save(label: str, files: dict[str, str]) -> None:
            if not dry_run:
                store.put_code_index(label, files)
                kept[label] = files

        on_scan = (metrics or Metrics()).impact_scanned
        analyzer = ImpactAnalyzer(roots, load_cache=load, save_cache=save, on_scan=on_scan,
                                  kept=indexes)
        return release_impact(analyzer, atlases, taxonomy, lambda: store_suppressor(store))

    return for_poll


def store_suppressor(store: Store) -> Suppressor:
    """The uses a team said are "not us" (a Slack button), as the store holds them now: the
    bot's own analysis leaves them out of the tiers, counted, as ``--suppressions store``."""
    from watcher.impact import Suppressor

    return Suppressor.of(store=store.suppressions())


def release_impact(analyzer: ImpactAnalyzer, atlases: Callable[[], AtlasSource] | None,
                   taxonomy: Callable[[], Taxonomy],
                   suppressor: Callable[[], Suppressor] | None = None) -> ImpactOf:
    """The impact step of one poll: per release, its notes' subjects joined with its
    package's API changes (its atlas and the one before, compared once per release); an API
    change no item speaks of is filed under the subsystem owning its module; the uses
    ``suppressor`` names (read per release) are counted, not claimed."""
    from watcher.impact import ReleaseAnalysis, package_changes, package_expected

    def owner(api: str) -> str | None:
        return taxonomy().apis.owner(api)

    def for_release(repo: str, release: Release) -> ReleaseImpact:
        package = (package_changes(atlases(), repo, release.tag_name, release.prerelease)
                   if atlases is not None else None)
        pending = package is None and atlases is not None and package_expected(
            repo, release.tag_name, release.prerelease)
        analysis = ReleaseAnalysis(analyzer, release.tag_name, package, owner=owner,
                                   pending=pending)
        if suppressor is not None:
            analysis.suppressor = suppressor()
        return analysis

    return for_release


def with_subscriptions(runtime: Runtime, notifiers: Mapping[str, Notifier], deps: Dependencies
                       ) -> dict[str, Notifier]:
    """``notifiers`` and the subscriptions' own; the runtime's poller routes to all of them
    from now on."""
    everyone = {**notifiers, **subscribed_notifiers(runtime.config, deps, runtime.store,
                                                    notifiers)}
    quiet_channels(everyone, runtime.store)
    runtime.poller.notifiers = [notifier.config for notifier in everyone.values()]
    return everyone


def build_runtime(config: Config, deps: Dependencies) -> Runtime:
    from watcher.github import GitHubClient, Pacer, RetryPolicy
    from watcher.notes import Analyzer
    from watcher.poller import Poller
    from watcher.store import open_store
    from watcher.validate import notifier_configs

    github = config.github
    http = GitHubClient.make_http(github.api_url, deps.get_secrets().github_token,
                                  github.timeout, transport=deps.transport,
                                  max_connections=github.concurrency)
    policy = RetryPolicy(retries=github.retries, backoff=github.backoff,
                         max_rate_limit_wait=github.max_rate_limit_wait)
    store = open_store(config.store_path(), config.store_url())

    def pacer(endpoint: str) -> Pacer:
        # Paced with every process on this store (GitHub counts per token, not per process),
        # by wall-clock time, which they share.
        return Pacer(github.max_requests_per_minute, clock=deps.epoch, sleep=deps.sleep,
                     shared=store, key=f"{endpoint} {github.api_url}")

    client = GitHubClient(http, api_url=github.api_url, policy=policy, sleep=deps.sleep,
                          clock=deps.epoch, pacer=pacer("rest"), graphql_pacer=pacer("graphql"),
                          metrics=deps.metrics)
    analyzer = Analyzer(lambda: _taxonomy(config), max_body_chars=config.poll.max_body_chars,
                        labels=_label_source(config, client, store, deps),
                        max_items=config.poll.max_items_per_release)
    notifiers = [cfg for _, cfg in notifier_configs(config, deps.environ)]
    packages = None
    if config.impact_codebases():
        from watcher.impact.atlas import PackageStep, configured_source

        packages = PackageStep(configured_source(config.impact, store, deps.clock,
                                                 deps.transport))
    poller = Poller(config, store, client, analyzer, notifiers, clock=deps.clock,
                    impact=impact_step(config, store, deps.metrics, clock=deps.clock,
                                       packages=packages) if packages is not None else None,
                    metrics=deps.metrics)
    return Runtime(config, store, client, analyzer, poller, http, packages)


def config_reader(config: Config) -> Callable[[], Config]:
    """How SIGHUP reads the configuration again: the file `run` started from (its
    ``source``), or the built-in defaults when it started from none."""
    path = None if config.source == "built-in defaults" else Path(config.source)
    return lambda: load_config(path)


def daemon_parts(config: Config) -> DaemonParts:
    """What the daemon is handed to build and rebuild itself from ``config`` and each
    configuration SIGHUP reads after it."""
    from watcher.daemon import DaemonParts
    from watcher.validate import validated_notifiers

    return DaemonParts(runtime=build_runtime, notifiers=validated_notifiers,
                       subscribed=with_subscriptions, transports=slack_command_transports(),
                       read_config=config_reader(config))


def build_daemon(config: Config, deps: Dependencies, *,
                 monotonic: Callable[[], float] = time.monotonic) -> Daemon:
    """``release-watch run``'s daemon, not started: no I/O yet."""
    from watcher.daemon import Daemon

    return Daemon(config, deps, daemon_parts(config), monotonic=monotonic)


def slack_command_transports() -> CommandTransports:
    """Slack's adapters for ``/release-watch``, for the daemon (imported only when it starts,
    so no other command loads slack_sdk for them)."""
    from handlers.slack import (
        SlackActions,
        SocketModeCommands,
        interactive_endpoint,
        slash_command_endpoint,
    )
    from watcher.subscribe import ClickSettings, CommandTransports

    def clicks(settings: ClickSettings) -> SlackActions:
        # The buttons' Web API client: no pacing of its own, slack-sdk's 429 handling.
        from slack_sdk import WebClient
        from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

        web = WebClient(token=settings.bot_token, base_url=settings.api_url, timeout=10,
                        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)])
        return SlackActions(settings.store, web, api_url=settings.api_url,
                            clock=settings.clock, epoch=settings.epoch,
                            code_links=settings.code_links)

    return CommandTransports(
        socket_mode=lambda token, api_url, respond, wait, on_click: SocketModeCommands(
            token, api_url, respond, wait=wait, on_click=on_click),
        request_url=slash_command_endpoint, clicks=clicks,
        interactive_url=interactive_endpoint)


def slack_auth_test(api_url: str, token: SecretStr) -> tuple[bool, str]:
    """Slack's ``auth.test`` with the bot token, for ``config check --online``."""
    from handlers.slack import auth_test

    return auth_test(api_url, token)
