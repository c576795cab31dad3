"""The watched repos' last successful polls as a metric, read from the store
(``Store.last_successes``) for the repos watched now, rather than set as polls end: a daemon
restarted into an outage still shows when each repo last succeeded (so "no successful poll for
30 minutes" fires), and a repo a SIGHUP took off the watch list drops out (no false alarm about
a repo nobody polls any more).

A scrape reads the store when a poll ended since the last read (the hook says so), when the
watch list changed (a reload), or when the last read is older than ``MAX_AGE`` (a
``release-watch poll`` run by hand may have written): scrapes during a poll do not take the
store from it each time. The text is formatted here, not by prometheus_client (500 repos'
lines cost it ~7 ms); ``collect`` gives the same figures as a family, for
``generate_latest(registry)``, which tests compare byte for byte.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from watcher.server.text import family_head, label_value, number

if TYPE_CHECKING:
    from prometheus_client.core import GaugeMetricFamily

logger = logging.getLogger(__name__)

MAX_AGE = 5.0  # seconds a read is used for when no poll ended and the watch list is the same
NAME = "release_watch_last_successful_poll_timestamp_seconds"
HELP = "When a repo was last polled successfully (Unix time)"
Stamps = tuple[tuple[str, float], ...]  # (repo, Unix time), in watch-list order


class LastSuccessCollector:
    """``release_watch_last_successful_poll_timestamp_seconds{repo}``, for each watched repo
    polled successfully at least once (a repo never polled successfully has no series)."""

    def __init__(
        self,
        watched: Callable[[], tuple[object, Callable[[], list[str]]]],
        read: Callable[[list[str]], Mapping[str, datetime]],
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """``watched()``: a token that changes when the watch list may have (the daemon's
        config object, replaced by a reload) and how to list the repos; ``read(repos)``: the
        store's last successes of those repos."""
        self.watched = watched
        self.read = read
        self.monotonic = monotonic
        self._stale = True
        self._read_at = 0.0
        self._token: object = None
        self._repos: frozenset[str] | None = None
        self._text: tuple[Stamps, bytes] | None = None

    def changed(self) -> None:
        """A poll ended (its repos' states committed): the next scrape reads the store."""
        self._stale = True

    def describe(self) -> list[GaugeMetricFamily]:
        from prometheus_client.core import GaugeMetricFamily

        return [GaugeMetricFamily(NAME, HELP, labels=["repo"])]

    @property
    def repos(self) -> frozenset[str] | None:
        """The repos watched as of the last read (None before one succeeded)."""
        return self._repos

    def _read(self) -> Stamps | None:
        self._stale, self._read_at = False, self.monotonic()
        try:
            token, listing = self.watched()
            repos = listing()
            found = self.read(repos)
        except Exception as error:  # a store closing under a reload: left out this once
            logger.warning("metrics: cannot read the repos' last polls: %s", error)
            self._stale = True
            return None
        self._token, self._repos = token, frozenset(repos)
        return tuple((repo, found[repo].timestamp()) for repo in repos if repo in found)

    def collect(self) -> list[GaugeMetricFamily]:
        """What ``generate_latest(registry)`` shows: always a fresh read."""
        stamps = self._read()
        if stamps is None:
            return []
        (family,) = self.describe()
        for repo, stamp in stamps:
            family.add_metric([repo], stamp)
        return [family]

    def due(self) -> bool:
        return (
            self._stale
            or self._text is None
            or self.monotonic() - self._read_at >= MAX_AGE
            or self.watched()[0] is not self._token
        )

    def render(self) -> bytes:
        """The family in the text format, as ``generate_latest`` gives it."""
        if self.due():
            stamps = self._read()
            if stamps is None:
                return b""
            if self._text is None or self._text[0] != stamps:
                self._text = (stamps, _format(stamps))
        return self._text[1] if self._text is not None else b""


def _format(stamps: Stamps) -> bytes:
    numbers: dict[float, str] = {}  # a poll gives most repos the same time: formatted once
    lines = [family_head(NAME, HELP, "gauge")]
    for repo, stamp in stamps:
        text = numbers.get(stamp)
        if text is None:
            text = numbers[stamp] = number(stamp)
        lines.append(f'{NAME}{{repo="{label_value(repo)}"}} {text}\n')
    return "".join(lines).encode("utf-8")
