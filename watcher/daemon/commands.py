"""The daemon's side of ``/release-watch``: answering commands over Socket Mode (when
``SLACK_APP_TOKEN`` is set) or at the request URL ``/slack/commands`` (when
``SLACK_SIGNING_SECRET`` is), and clicks on the buttons of a release's message the same two
ways (``/slack/interactive``), and the channels' subscriptions as notifiers, read from the store
for every job, so a new one takes effect from the next poll without a restart; their digests
are scheduled beside the configured ones.

Commands are answered on threads of their own (slack-sdk's, the listener's), through a store
connection of their own, which waits at most 2 seconds for a poll's write lock before the
answer says the store is busy and nothing changed (``watcher.subscribe.service``: Slack gives
an answer 3), and which a SIGHUP reload, replacing the jobs' store, never pulls from under a
command.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from apscheduler.schedulers.base import BaseScheduler

from watcher.config import Config, digest_trigger
from watcher.daemon.parts import Subscribed
from watcher.delivery import Notifier
from watcher.deps import Dependencies, Runtime
from watcher.server import Route
from watcher.store import NOTIFIER_PREFIX, Store, open_store
from watcher.subscribe import (
    Answer,
    Clicks,
    ClickSettings,
    CommandSettings,
    CommandTransports,
    SlashCommands,
    SocketConnection,
    secret_value,
    settings_from,
)

logger = logging.getLogger(__name__)

COMMANDS_PATH = "/slack/commands"
INTERACTIVE_PATH = "/slack/interactive"  # clicks on the buttons of a release's message
# How long an envelope's id is kept: Slack retries an unacknowledged envelope within minutes.
ENVELOPE_KEPT = 3600.0
AGAIN = ("This /release-watch command reached release-watch before and was done then; it was "
         "not done twice. `/release-watch list` shows this channel's subscriptions.")
SUBSCRIPTION_JOBS = f"digest:{NOTIFIER_PREFIX}"  # the scheduler's jobs for subscriptions' digests


class SlackCommands:
    def __init__(
        self, config: Callable[[], Config], deps: Dependencies, stopping: threading.Event,
        transports: CommandTransports, subscribed: Subscribed,
    ) -> None:
        """``config``: the daemon's configuration as it is now (a SIGHUP replaces it);
        ``subscribed``: the configured notifiers and the subscriptions' (``DaemonParts``)."""
        self._config = config
        self.deps = deps
        self.stopping = stopping
        self.transports = transports
        self.subscribed = subscribed
        self.commands: SlashCommands | None = None
        self.clicks: Clicks | None = None
        self._store: Store | None = None
        self._socket: SocketConnection | None = None

    def start(self, store_path: Path, url: str | None = None) -> None:
        """Answer commands from now on, if a transport is configured."""
        secrets = self.deps.get_secrets()
        app_token = secret_value(secrets.slack_app_token)
        signing = secret_value(secrets.slack_signing_secret) is not None
        if app_token is None and not signing:
            return
        if signing and self._config().server.address is None:
            logger.warning(
                "SLACK_SIGNING_SECRET is set but [server] listen is not, so nothing "
                "serves /slack/commands: set [server] listen (behind an HTTPS proxy "
                "Slack can reach), or use Socket Mode (SLACK_APP_TOKEN)"
            )
        self._store = open_store(store_path, url)
        self.commands = SlashCommands(self._store, self._settings, self.deps.clock)
        self.clicks = self._clicks(self._store)
        if app_token is not None:
            self._socket = self.transports.socket_mode(
                app_token, self._config().slack.api_url, self._respond_envelope,
                self.stopping.wait, self._on_click if self.clicks is not None else None)
            self._socket.start()

    def _clicks(self, store: Store) -> Clicks | None:
        """The buttons' side, with the bot token (no token: no buttons were posted)."""
        token = secret_value(self.deps.get_secrets().slack_bot_token)
        if token is None or self.transports.clicks is None:
            return None
        config = self._config()
        links = {codebase.name: codebase.link for codebase in config.impact_codebases()
                 if codebase.link}
        if not links and config.impact.link:
            links = {"": config.impact.link}  # one template for every codebase
        return self.transports.clicks(ClickSettings(
            store=store, bot_token=token, api_url=config.slack.api_url, clock=self.deps.clock,
            epoch=self.deps.epoch, code_links=links))

    def _on_click(self, payload: Mapping[str, Any], envelope_id: str) -> None:
        """A click over Socket Mode, acknowledged: done once per envelope."""
        assert self.clicks is not None
        self.clicks.click(payload, f"socket-mode envelope {envelope_id}",
                          self.deps.epoch() + ENVELOPE_KEPT)

    def _take_click(self, payload: Mapping[str, Any], signature: str, until: float
                    ) -> bool | None:
        """A signed click; None once the store saw its signature (a replay)."""
        if self.clicks is None:  # the listener may be up before the daemon's store
            logger.warning("slack: a click came before release-watch was ready; not done")
            return False
        return self.clicks.click(payload, signature, until)

    def _respond_envelope(self, payload: Mapping[str, Any], envelope_id: str) -> dict[str, Any]:
        """A Socket Mode envelope's answer; one Slack delivers again (its acknowledgement was
        late, or lost with a connection) is answered without doing it twice."""
        assert self.commands is not None  # the connection opens after the commands' store
        answered = self.commands.respond_once(payload, f"socket-mode envelope {envelope_id}",
                                              self.deps.epoch() + ENVELOPE_KEPT,
                                              changes_only=True)
        if answered is None:
            logger.info("slack: a /release-watch envelope was delivered again (%s); answered "
                        "without doing it twice", envelope_id[:64])
            return Answer(AGAIN).payload()
        return answered

    def _settings(self) -> CommandSettings:
        return settings_from(self._config(), self.deps.get_secrets(), self.deps.environ)

    def routes(self) -> dict[str, Route]:
        """The request URL, ``/slack/commands``, when SLACK_SIGNING_SECRET is set, for the
        daemon's listener (``[server] listen``) to serve; else none."""
        secret = secret_value(self.deps.get_secrets().slack_signing_secret)
        if secret is None:
            return {}
        endpoint = self.transports.request_url(secret, self._respond_once, self.deps.epoch)
        routes = {COMMANDS_PATH: Route(endpoint, frozenset({"POST"}))}
        if self.transports.interactive_url is not None:
            clicked = self.transports.interactive_url(secret, self._take_click, self.deps.epoch)
            routes[INTERACTIVE_PATH] = Route(clicked, frozenset({"POST"}))
        return routes

    def _respond_once(
        self, payload: Mapping[str, Any], signature: str, until: float
    ) -> dict[str, Any] | None:
        """A signed request's answer, None once the store saw its signature (a replay)."""
        if self.commands is None:  # the listener may be up before the daemon's store
            return Answer("release-watch is starting; try again in a moment.").payload()
        return self.commands.respond_once(payload, signature, until)

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
        if self.clicks is not None:
            self.clicks.close()  # the clicks taken are done before the store closes
        if self._store is not None:
            self._store.close()

    def notifiers(
        self, runtime: Runtime, configured: Mapping[str, Notifier]
    ) -> dict[str, Notifier]:
        """The configured notifiers and one per subscription, as the store holds them now;
        the subscriptions' stop, like the configured ones, between posts after SIGTERM."""
        everyone = self.subscribed(runtime, configured, self.deps)
        for name, notifier in everyone.items():
            if name not in configured:
                notifier.context = replace(notifier.context, stopping=self.stopping.is_set)
        return everyone


def schedule_subscription_digests(
    scheduler: BaseScheduler,
    notifiers: Mapping[str, Notifier],
    job: Callable[[str], None],
    now: datetime,
    grace: int,
) -> None:
    """One digest job per subscription with ``--digest``, kept in line with the store: a new
    subscription's job is added, a removed one's dropped. A subscription never changes its
    schedule (a new schedule is a new subscription), so a job that exists is left alone."""
    wanted = {
        f"digest:{name}": notifier
        for name, notifier in notifiers.items()
        if name.startswith(NOTIFIER_PREFIX)
        and notifier.config.mode == "digest"
        and notifier.config.digest_schedule
    }
    scheduled = {job.id for job in scheduler.get_jobs() if job.id.startswith(SUBSCRIPTION_JOBS)}
    for job_id in scheduled - set(wanted):
        scheduler.remove_job(job_id)
    for job_id, notifier in wanted.items():
        if job_id in scheduled:
            continue
        config = notifier.config
        assert config.digest_schedule is not None
        trigger = digest_trigger(config.digest_schedule, config.digest_timezone)
        scheduler.add_job(
            job,
            trigger,
            args=[notifier.name],
            id=job_id,
            name=f"digest {notifier.name}",
            misfire_grace_time=grace,
            replace_existing=True,
            next_run_time=trigger.get_next_fire_time(None, now),
        )
