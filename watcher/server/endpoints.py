"""The daemon's endpoints and its listener's life: ``/metrics``, ``/healthz``, ``/readyz`` and
``/feeds/NAME.atom``, served while ``release-watch run`` runs with ``[server] listen`` set.

Nothing here holds a secret to give away: the metrics' labels are repo, notifier and code-root
names, ``/readyz`` says what ``status --check`` says (recorded errors masked as ``status``
masks them), and a feed is what its notifier was sent.
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from watcher.config import ServerConfig, is_loopback
from watcher.metrics import Metrics
from watcher.server.listener import Listener
from watcher.server.metrics import CONTENT_TYPE, PrometheusMetrics
from watcher.server.routes import Handler, Request, Response, Route

if TYPE_CHECKING:
    import threading
    from collections.abc import Mapping

    from watcher.config import Config
    from watcher.delivery import Notifier
    from watcher.deps import Dependencies, Runtime
    from watcher.errors import WatcherError

logger = logging.getLogger(__name__)

ATOM_TYPE = "application/atom+xml; charset=utf-8"
JSON_TYPE = "application/json"


class RouteSource(Protocol):
    """Routes the daemon adds to its listener's own (``watcher.daemon.commands.SlackCommands``
    gives ``/release-watch``'s request URL): named by what the endpoints use of it, since the
    daemon imports this package and not the other way round."""

    def routes(self) -> dict[str, Route]: ...


class DaemonView(Protocol):
    """What the endpoints read of the daemon (``watcher.daemon.loop.Daemon``), each time
    afresh: a SIGHUP replaces its configuration, runtime and notifiers."""

    config: Config
    deps: Dependencies
    runtime: Runtime | None
    notifiers: dict[str, Notifier]
    scheduler: Any  # APScheduler's BackgroundScheduler, once started
    stopping: threading.Event
    broken: WatcherError | None

    @property
    def slack(self) -> RouteSource:
        """/release-watch's routes (``watcher.daemon.commands``)."""

    def role(self) -> str:
        """``leader`` (the embedded store's one daemon; the lease's holder on a shared
        store) or ``standby``."""

    def readiness(self) -> tuple[bool, str]:
        """Whether ``status --check`` would pass on the daemon's store, and why (``health``):
        the daemon judges, so the listener imports nothing of what the judgement reads."""


def daemon_routes(daemon: DaemonView, metrics: PrometheusMetrics) -> dict[str, Handler | Route]:
    """The daemon's routes table. An endpoint more is one line here: a path (ending in ``/``
    for a prefix) and its handler, or a ``Route`` naming the methods it takes (as
    ``SlackCommands.routes`` gives ``/slack/commands`` with POST only)."""
    return {
        "/metrics": metrics_endpoint(metrics, daemon),
        "/healthz": healthz(daemon),
        "/readyz": readyz(daemon),
        "/feeds/": feeds(daemon),
        **daemon.slack.routes(),  # /release-watch's request URL, with SLACK_SIGNING_SECRET
    }


LEADER_GAUGE = ("# HELP release_watch_leader 1 while this replica leads (polls, runs the "
                "schedule, delivers), 0 on a standby\n# TYPE release_watch_leader gauge\n"
                "release_watch_leader {}\n")


def metrics_endpoint(metrics: PrometheusMetrics, daemon: DaemonView) -> Handler:
    def serve(request: Request) -> Response:
        leader = LEADER_GAUGE.format(int(daemon.role() == "leader")).encode()
        return Response(200, metrics.render() + leader, CONTENT_TYPE)

    return serve


def alive(daemon: DaemonView) -> bool:
    """The scheduler runs (paused counts: its jobs are kept) and nothing is stopping it."""
    scheduler = daemon.scheduler
    return (
        scheduler is not None
        and bool(scheduler.running)
        and not daemon.stopping.is_set()
        and daemon.broken is None
    )


def healthz(daemon: DaemonView) -> Handler:
    def serve(request: Request) -> Response:
        if alive(daemon):
            return Response(200, b"ok\n")
        return Response(503, b"not running: the scheduler is stopped or stopping\n")

    return serve


def readyz(daemon: DaemonView) -> Handler:
    """200 or 503 exactly as ``status --check`` exits 0 or 1, by the daemon's ``readiness``
    (the same judgement, of its own store); the body says why, as ``status`` does."""

    def serve(request: Request) -> Response:
        ready, why = daemon.readiness()
        body = json.dumps({"ready": ready, "health": why, "role": daemon.role()},
                          ensure_ascii=False) + "\n"
        return Response(200 if ready else 503, body.encode("utf-8"), JSON_TYPE)

    return serve


@runtime_checkable
class FeedSource(Protocol):
    """A notifier whose deliveries are a document to serve (the feed notifier's Atom file):
    the port the listener serves feeds through, so it never imports a notifier."""

    def document(self, now: datetime) -> bytes: ...


def feeds(daemon: DaemonView) -> Handler:
    """``/feeds/NAME.atom``: the feed notifier NAME's feed, with an ETag, so a reader polling
    it gets a 304 until it changes."""

    def serve(request: Request) -> Response:
        name = request.path.removeprefix("/feeds/")
        notifier = daemon.notifiers.get(name.removesuffix(".atom"))
        if not name.endswith(".atom") or not isinstance(notifier, FeedSource):
            return Response(404, b"no such feed\n")
        document = notifier.document(daemon.deps.clock())
        etag = '"' + hashlib.sha256(document).hexdigest()[:32] + '"'
        headers = {"etag": etag, "cache-control": "no-cache"}
        if etag in (request.header("if-none-match") or ""):
            return Response(304, b"", ATOM_TYPE, headers)
        return Response(200, document, ATOM_TYPE, headers)

    return serve


class Service:
    """``[server]``: the listener, started and stopped with the daemon. Without ``listen``
    there is none, and ``metrics`` records nothing."""

    def __init__(self, server: ServerConfig) -> None:
        self.address = server.address
        self.backlog = server.backlog
        self.metrics: Metrics = PrometheusMetrics() if self.address is not None else Metrics()
        self.listener: Listener | None = None

    def start(self, daemon: DaemonView) -> None:
        """Bind (a port in use is an error now) and serve from a daemon thread."""
        if self.address is None or not isinstance(self.metrics, PrometheusMetrics):
            return
        host, port = self.address
        self.metrics.watch_outbox(lambda: _pending(daemon), lambda: list(daemon.notifiers),
                                  lambda: _queued(daemon))
        self.metrics.watch_repos(
            lambda: (daemon.config, lambda: _watched(daemon)),
            lambda repos: _last_successes(daemon, repos),
        )
        self.listener = Listener(host, port, daemon_routes(daemon, self.metrics),
                                 backlog=self.backlog)
        self.listener.start()
        if not is_loopback(host):
            logger.warning(
                "[server] listen = %s is reachable from other machines, not only "
                "this one: /metrics, /readyz and the feeds answer anyone who can "
                "reach it (they hold no secret)",
                host,
            )
        logger.info(
            "listening on %s: /metrics, /healthz, /readyz, /feeds/NAME.atom", self.listener.url
        )

    def reloaded(self, server: ServerConfig) -> None:
        """A SIGHUP's new ``[server]``: the socket stays as it was started."""
        if server.address != self.address:
            logger.warning(
                "[server] listen changed to %s; the daemon keeps serving %s until it is restarted",
                server.listen or "nothing",
                self._where(),
            )

    def _where(self) -> str:
        return self.listener.url if self.listener is not None else "nothing"

    def stop(self) -> None:
        if self.listener is not None:
            self.listener.stop()
            self.listener = None


def _pending(daemon: DaemonView) -> Mapping[str, tuple[int, datetime]]:
    runtime = daemon.runtime
    return {} if runtime is None else runtime.store.pending_by_notifier()


def _queued(daemon: DaemonView) -> Mapping[str, int]:
    """Events queued per digest notifier: every one in digest mode (0 before its first
    event), and any other the store still holds a queue for."""
    runtime = daemon.runtime
    if runtime is None:
        return {}
    digests = {name: 0 for name, notifier in daemon.notifiers.items()
               if notifier.config.mode == "digest"}
    return digests | runtime.store.digest_sizes()


def _watched(daemon: DaemonView) -> list[str]:
    """The repos the daemon watches now: ``[[repos]]``, then each ``[[orgs]]``'s repos as its
    last listing (kept in the store) gave them, as ``status`` and the poll count them."""
    repos = [repo.name for repo in daemon.config.repos]
    runtime = daemon.runtime
    if runtime is None or not daemon.config.orgs:
        return repos
    seen = {name.lower() for name in repos}
    for org in daemon.config.orgs:
        for name in (runtime.store.org_state(org.name) or {}).get("repos", []):
            if name.lower() not in seen:
                seen.add(name.lower())
                repos.append(name)
    return repos


def _last_successes(daemon: DaemonView, repos: list[str]) -> Mapping[str, datetime]:
    runtime = daemon.runtime
    return {} if runtime is None else runtime.store.last_successes(repos)
