"""The daemon's HTTP side: ``[server] listen`` serves Prometheus metrics, health and readiness,
and the feed notifiers' Atom feeds.

``routes`` says what an endpoint is (a function from a ``Request`` to a ``Response``);
``listener`` serves a routes table from a daemon thread; ``metrics`` records the hooks the
poller, the GitHub client and the delivery call (the core's ``watcher.metrics.Metrics``, which
records nothing, for every run without a listener): ``PrometheusMetrics`` keeps a registry of
its own, ``outbox`` reads the deliveries pending and ``repos`` the watched repos' last
successful polls from the store at scrape time, ``text`` formats the large families as
prometheus_client would; ``endpoints`` builds the daemon's routes table (the Slack request URL
among them, as the composition root hands it in) and starts and stops its listener
(``Service``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.server.endpoints import Service as Service
    from watcher.server.endpoints import daemon_routes as daemon_routes
    from watcher.server.listener import Listener as Listener
    from watcher.server.listener import dispatch as dispatch
    from watcher.server.metrics import PrometheusMetrics as PrometheusMetrics
    from watcher.server.routes import Handler as Handler
    from watcher.server.routes import Request as Request
    from watcher.server.routes import Response as Response
    from watcher.server.routes import Route as Route

_EXPORTS = {
    "daemon_routes": "endpoints",
    "dispatch": "listener",
    "Handler": "routes",
    "Listener": "listener",
    "PrometheusMetrics": "metrics",
    "Request": "routes",
    "Response": "routes",
    "Route": "routes",
    "Service": "endpoints",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
