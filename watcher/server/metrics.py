"""What the daemon counts for ``/metrics``: the hooks the poller, the GitHub client, the delivery
and the impact scan call, and their Prometheus families.

``Metrics`` (the core's port, ``watcher.metrics``) records nothing: it is what every run gets
unless ``[server] listen`` is set, so a hook costs one method call. ``PrometheusMetrics`` keeps
the families in a ``CollectorRegistry`` of its own (never the process-wide default one) and
renders them in the text format.

Names follow Prometheus' conventions (``release_watch_`` prefix, ``_total`` counters, seconds,
``_timestamp_seconds``); labels take values from bounded sets only: a configured repo, notifier
or code root, an HTTP status, an event type, an item kind. No tag, title or text of a release
ever becomes a label.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import TYPE_CHECKING

from watcher.metrics import Metrics
from watcher.server.outbox import OutboxCollector
from watcher.server.repos import LastSuccessCollector
from watcher.server.text import Counts

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry, Histogram
    from prometheus_client.metrics import MetricWrapperBase

    from watcher.models import Event

logger = logging.getLogger(__name__)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # Prometheus' text format
POLL_OUTCOMES = ("unchanged", "changed", "failed")
# A poll takes from tens of milliseconds (2 repos, all 304s) to minutes (5,000 repos paced).
POLL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
# One delivery: a jsonl line in microseconds, a Slack thread of several posts in seconds.
DELIVERY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class PrometheusMetrics(Metrics):
    """The hooks as Prometheus families, in a registry of this object's own.

    ``render`` keeps each family's text until a hook changes it: prometheus_client renders
    about 100,000 samples a second, and a 500-repo watch list has 1,000 per-repo samples, which
    would cost every scrape ~10 ms of the poll's interpreter time. The per-repo families change
    once per poll (at its end, when the store commits the repos' states too), so a scrape in
    the middle of a poll re-renders only the few small families that did change. Even that
    first scrape after a poll would cost ~20 ms through prometheus_client, so the per-repo
    families and the requests (which change all poll long) are formatted here instead
    (``watcher.server.text.Counts``, ``watcher.server.repos``), to the same bytes.
    """

    def __init__(self, *, monotonic: Callable[[], float] = time.perf_counter) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
        from prometheus_client.metrics import disable_created_metrics

        # The ``_created`` samples would double every counter's lines and say nothing a
        # scrape needs. (A switch of prometheus_client's, for the process: nothing else here
        # renders metrics.)
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry: CollectorRegistry = CollectorRegistry()
        self.monotonic = monotonic
        reg = self.registry
        # The per-repo and per-request families are plain integers with a formatter of
        # their own (``watcher.server.text``): prometheus_client would take ~13 ms to render
        # 1,000 per-repo samples after every poll, and the requests change all poll long.
        self._polls = Counts(
            "release_watch_polls",
            "Polls of a repo, by outcome: unchanged "
            "(304 or the batched check), changed (read and planned), failed",
            ("repo", "outcome"),
        )
        reg.register(self._polls)
        self._poll_seconds = Histogram(
            "release_watch_poll_duration_seconds",
            "How long one poll of every watched repo took",
            buckets=POLL_BUCKETS,
            registry=reg,
        )
        self._requests = Counts(
            "release_watch_github_requests",
            "GitHub API requests by "
            "answer: the HTTP status (304: unchanged, no quota spent), or "
            "error when none came",
            ("endpoint", "status"),
        )
        reg.register(self._requests)
        self._remaining = Gauge(
            "release_watch_github_rate_limit_remaining",
            "Requests left in GitHub's core rate limit",
            registry=reg,
        )
        self._limit = Gauge(
            "release_watch_github_rate_limit",
            "GitHub's core rate limit (requests an hour)",
            registry=reg,
        )
        self._events = Counter(
            "release_watch_events",
            "Events recorded, by type (published: a new release)",
            ["event"],
            registry=reg,
        )
        self._items = Counter(
            "release_watch_event_items",
            "Items of the recorded events, by kind",
            ["kind"],
            registry=reg,
        )
        self._deliveries = Counter(
            "release_watch_deliveries",
            "Deliveries of an event to a notifier, by outcome",
            ["notifier", "outcome"],
            registry=reg,
        )
        self._digests = Counter(
            "release_watch_digests",
            "Digests sent to a notifier, by outcome",
            ["notifier", "outcome"],
            registry=reg,
        )
        self._delivery_seconds = Histogram(
            "release_watch_delivery_duration_seconds",
            "How long one delivery took, failed ones included",
            ["notifier"],
            buckets=DELIVERY_BUCKETS,
            registry=reg,
        )
        self._impact_files = Gauge(
            "release_watch_impact_scan_files",
            "Files the last scan of an [impact] code root found",
            ["root"],
            registry=reg,
        )
        self._impact_seconds = Gauge(
            "release_watch_impact_scan_duration_seconds",
            "How long the last scan of an [impact] code root took",
            ["root"],
            registry=reg,
        )
        self._families: list[MetricWrapperBase | Counts] = [
            self._polls,
            self._poll_seconds,
            self._requests,
            self._remaining,
            self._limit,
            self._events,
            self._items,
            self._deliveries,
            self._digests,
            self._delivery_seconds,
            self._impact_files,
            self._impact_seconds,
        ]
        # Read from the store at scrape time, in the registry's order (the order watched).
        self._collectors: list[OutboxCollector | LastSuccessCollector] = []
        self._rate: tuple[int, int | None] | None = None
        self._dirty: set[MetricWrapperBase] = {
            family for family in self._families if not isinstance(family, Counts)
        }
        self._text: dict[MetricWrapperBase, bytes] = {}
        self._render_lock = threading.Lock()
        self._pruned_for: frozenset[str] | None = None

    def _changed(self, family: MetricWrapperBase) -> None:
        self._dirty.add(family)

    # ---- the hooks ------------------------------------------------------------------------
    def github_response(self, endpoint: str, status: int | None) -> None:
        self._requests.inc((endpoint, "error" if status is None else str(status)))

    def rate_limit(self, remaining: int, limit: int | None) -> None:
        if (remaining, limit) == self._rate:
            return  # a 304 reports what the last answer did: nothing to render again
        self._rate = (remaining, limit)
        self._remaining.set(remaining)
        self._changed(self._remaining)
        if limit is not None:
            self._limit.set(limit)
            self._changed(self._limit)

    @contextmanager
    def _observe(self, timer: Histogram, family: Histogram) -> Iterator[None]:
        start = self.monotonic()
        try:
            yield
        finally:
            timer.observe(max(0.0, self.monotonic() - start))
            self._changed(family)

    def poll_timer(self) -> AbstractContextManager[None]:
        return self._observe(self._poll_seconds, self._poll_seconds)

    def repos_polled(self, outcomes: Iterable[tuple[str, str]], now: datetime) -> None:
        for repo, outcome in outcomes:
            self._polls.inc((repo, outcome))
        for collector in self._collectors:
            if isinstance(collector, LastSuccessCollector):
                collector.changed()  # the store has the poll's last successes now

    def events_recorded(self, events: Iterable[Event]) -> None:
        for event in events:
            self._events.labels(event.event).inc()
            kinds: dict[str, int] = {}
            for item in event.items:
                kinds[item.kind] = kinds.get(item.kind, 0) + 1
            for kind, count in kinds.items():
                self._items.labels(kind).inc(count)
        self._changed(self._events)
        self._outbox_changed()  # the poll queued their deliveries
        self._changed(self._items)

    def delivery_timer(self, notifier: str) -> AbstractContextManager[None]:
        return self._observe(self._delivery_seconds.labels(notifier), self._delivery_seconds)

    def delivered(self, notifier: str, outcome: str) -> None:
        self._deliveries.labels(notifier, outcome).inc()
        self._changed(self._deliveries)
        self._outbox_changed()

    def digest_delivered(self, notifier: str, outcome: str) -> None:
        self._digests.labels(notifier, outcome).inc()
        self._changed(self._digests)
        self._outbox_changed()

    def impact_scanned(self, root: str, files: int, seconds: float) -> None:
        self._impact_files.labels(root).set(files)
        self._impact_seconds.labels(root).set(seconds)
        self._changed(self._impact_files)
        self._changed(self._impact_seconds)

    # ---- read at scrape time --------------------------------------------------------------
    def watch_outbox(
        self,
        pending: Callable[[], Mapping[str, tuple[int, datetime]]],
        notifiers: Callable[[], Iterable[str]],
        queued: Callable[[], Mapping[str, int]] = dict,
    ) -> None:
        """Deliveries pending per notifier and the events queued for each digest, read from
        the store at scrape time (counting them as they come and go would drift from the
        store after a restart)."""
        collector = OutboxCollector(pending, notifiers, queued=queued, monotonic=self.monotonic)
        self.registry.register(collector)
        self._collectors.append(collector)

    def watch_repos(
        self,
        watched: Callable[[], tuple[object, Callable[[], list[str]]]],
        read: Callable[[list[str]], Mapping[str, datetime]],
    ) -> None:
        """Each watched repo's last successful poll, read from the store at scrape time, for
        the repos watched then (``LastSuccessCollector``); the polls of a repo no longer
        watched stop being exported too."""
        collector = LastSuccessCollector(watched, read, monotonic=self.monotonic)
        self.registry.register(collector)
        self._collectors.append(collector)

    def _outbox_changed(self) -> None:
        for collector in self._collectors:
            if isinstance(collector, OutboxCollector):
                collector.changed()

    def _prune(self, watched: frozenset[str]) -> None:
        """Drop the polls' series of repos not watched any more (a reload removed them), as
        Prometheus expects of a label set that is gone."""
        self._polls.remove(lambda labels: labels[0] not in watched)

    def render(self) -> bytes:
        """The registry in the text format; a family is rendered again only once changed."""
        from prometheus_client import generate_latest

        with self._render_lock:  # one render at a time: an older text never overwrites a newer
            read = [collector.render() for collector in self._collectors]  # may read the store
            for collector in self._collectors:
                watched = collector.repos if isinstance(collector, LastSuccessCollector) else None
                if watched is not None and watched is not self._pruned_for:
                    self._prune(watched)  # once per read of the watch list
                    self._pruned_for = watched
            parts = []
            for family in self._families:
                if isinstance(family, Counts):
                    parts.append(family.render())  # keeps its own text until it changes
                    continue
                if family in self._dirty or family not in self._text:
                    self._dirty.discard(family)  # before rendering: a change from now on counts
                    self._text[family] = generate_latest(family)
                parts.append(self._text[family])
        return b"".join(parts + read)
