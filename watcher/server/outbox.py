"""The outbox as metrics: deliveries pending per notifier, when its oldest was queued, and the
events a digest notifier holds for its next digest, read from the store
(``Store.pending_by_notifier``, ``Store.digest_sizes``) rather than counted as deliveries come
and go, which would drift from the store after a restart or a ``release-watch poll`` run by
hand.

A scrape reads the store when the daemon queued or sent something since the last read (its
hooks say so), or when the last read is older than ``MAX_AGE`` (another process may have
written): a burst of scrapes during a poll does not take the store's lock from it each time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prometheus_client.core import GaugeMetricFamily

logger = logging.getLogger(__name__)

MAX_AGE = 5.0  # seconds a read is used for when the daemon itself changed nothing
Row = tuple[str, int, datetime | None, int | None]  # notifier, pending, oldest, digest queue


class OutboxCollector:
    """``release_watch_deliveries_pending``,
    ``release_watch_delivery_oldest_pending_timestamp_seconds`` and, for digest notifiers,
    ``release_watch_digest_queued_events``, per notifier."""

    def __init__(
        self,
        pending: Callable[[], Mapping[str, tuple[int, datetime]]],
        notifiers: Callable[[], Iterable[str]],
        *,
        queued: Callable[[], Mapping[str, int]] = dict,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pending = pending
        self.notifiers = notifiers
        self.queued = queued
        self.monotonic = monotonic
        self._stale = True
        self._read_at = 0.0
        self._text: tuple[list[Row], bytes] | None = None

    def changed(self) -> None:
        """The daemon queued or delivered something: the next scrape reads the store."""
        self._stale = True

    @staticmethod
    def _families() -> tuple[GaugeMetricFamily, GaugeMetricFamily, GaugeMetricFamily]:
        from prometheus_client.core import GaugeMetricFamily

        return (
            GaugeMetricFamily(
                "release_watch_deliveries_pending",
                "Deliveries queued for a notifier, waiting or failing",
                labels=["notifier"],
            ),
            GaugeMetricFamily(
                "release_watch_delivery_oldest_pending_timestamp_seconds",
                "When a notifier's oldest pending delivery was queued (Unix time)",
                labels=["notifier"],
            ),
            GaugeMetricFamily(
                "release_watch_digest_queued_events",
                "Events a digest notifier holds for its next digest",
                labels=["notifier"],
            ),
        )

    def describe(self) -> list[GaugeMetricFamily]:
        return list(self._families())  # names only: the registry refuses a clash

    def _read(self) -> list[Row] | None:
        self._stale, self._read_at = False, self.monotonic()
        try:
            pending, queued = dict(self.pending()), dict(self.queued())
        except Exception as error:  # a store closing under a reload: left out this once
            logger.warning("metrics: cannot read the outbox: %s", error)
            self._stale = True
            return None
        return [
            (name, *pending.get(name, (0, None)), queued.get(name))
            for name in sorted({*self.notifiers(), *pending, *queued})
        ]

    def _collect(self, rows: list[Row]) -> list[GaugeMetricFamily]:
        count, oldest, digest = self._families()
        for name, number, since, queued in rows:
            count.add_metric([name], number)
            if since is not None:
                oldest.add_metric([name], since.timestamp())
            if queued is not None:  # a digest notifier (one in digest mode, or one that was)
                digest.add_metric([name], queued)
        return [count, oldest, digest]

    def collect(self) -> list[GaugeMetricFamily]:
        """What ``generate_latest(registry)`` shows: always a fresh read."""
        rows = self._read()
        return [] if rows is None else self._collect(rows)

    def render(self) -> bytes:
        """The families in the text format, as ``generate_latest`` gives them."""
        from prometheus_client import generate_latest

        due = self._stale or self.monotonic() - self._read_at >= MAX_AGE
        if due or self._text is None:
            rows = self._read()
            if rows is None:
                return b""
            if self._text is None or self._text[0] != rows:
                self._text = (rows, generate_latest(_Collected(self._collect(rows))))
        return self._text[1]


class _Collected:
    """Families already collected, as a collector for ``generate_latest``."""

    def __init__(self, families: list[GaugeMetricFamily]) -> None:
        self.families = families

    def collect(self) -> list[GaugeMetricFamily]:
        return self.families
