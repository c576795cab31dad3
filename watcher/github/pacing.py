"""Keeps requests under a per-minute ceiling, spread over the minute: GitHub's secondary rate
limits allow at most 900 points a minute per REST endpoint (a GET is one point) and 2,000 for
GraphQL, and GitHub asks clients not to send in bursts (docs.github.com, "Rate limits for the
REST API", "Secondary rate limits"; "Best practices for using the REST API").

A token bucket whose rate is ``per_minute / 60`` a second and whose burst is small: at most
``burst`` requests (``BURST`` or fewer, a divisor of ``per_minute``) in any ``burst * 60 /
per_minute`` seconds, kept as a sliding window over the last ``burst`` send times. So a poll of
600 requests at 800 a minute goes out at about 13 a second for 45 seconds instead of all in one
second and then a sleep, and still no minute, wherever it starts, sees more than ``per_minute``
(the window divides the minute evenly). A wait over ``NOTICE_WAIT`` seconds says so in one
info line first (how long, and why). Clock and sleep are injected, so tests never wait.

GitHub counts what every process sends with one token, so the window is kept in the store
(``shared``, ``Store.reserve_sends``) when there is one: two one-shot polls run back to back, or
a poll run by hand beside the daemon, pace together instead of each starting from an empty
window. A process reserves moments ``BATCH`` at a time in one short store transaction (one
per request cost a 500-repo poll a second), and each request sleeps until its moment outside
it. A reserved moment not used within ``STALE`` seconds is dropped: its request would go out
later than the window recorded, so the window would under-count that later moment; what is
reserved and never used only over-counts, which is safe. Without a store the window is this
process's own.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Protocol

MINUTE = 60.0
BURST = 10  # requests let out at once at most (``github.concurrency``'s default)
BATCH = 20  # moments reserved at once in the shared window
STALE = 2.0  # seconds a reserved moment stays usable
NOTICE_WAIT = 5.0  # a wait longer than this is said in an info line before it starts

logger = logging.getLogger(__name__)


def burst_for(per_minute: int) -> int:
    """The largest burst up to ``BURST`` that divides ``per_minute``: windows of that many
    requests then tile the minute exactly, so no minute sees more than ``per_minute``."""
    return max(size for size in range(1, min(BURST, per_minute) + 1) if per_minute % size == 0)


class SendLog(Protocol):
    """Send times shared by every process on one store (``watcher.store.Store``)."""

    def reserve_sends(self, key: str, now: float, per_minute: int, window: float,
                      count: int = 1) -> list[float]:
        """Record up to ``count`` more sends under ``key``, each at the first moment from
        ``now`` at which no ``window`` seconds hold more than ``per_minute`` sends, stopping
        after the first that lies ahead of ``now``; their moments."""
        ...


class Pacer:
    """``window``: the seconds ``per_minute`` requests are spread over (a minute)."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float],
                 sleep: Callable[[float], None], window: float = MINUTE,
                 shared: SendLog | None = None, key: str = "rest") -> None:
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1")
        self.per_minute = per_minute
        self.burst = burst_for(per_minute)
        self.window = window * self.burst / per_minute  # holds ``burst`` requests at most
        self.clock = clock
        self.sleep = sleep
        self.shared = shared
        self.key = key  # what GitHub counts apart: REST or GraphQL, per API host
        self._sent: deque[float] = deque()
        self._reserved: deque[float] = deque()  # moments taken in the shared window, unused
        # Held while a caller sleeps for its turn: callers leave one at a time and in order,
        # and the window never sees two callers at once.
        self._lock = threading.Lock()

    def wait(self) -> float:
        """Block until one more request may go; returns the seconds waited."""
        with self._lock:
            now = self.clock()
            if self.shared is not None:
                at = self._reservation(self.shared, now)
                waited = min(self.window, max(0.0, at - now))
                self._pause(waited, "counting every release-watch process on this store")
                return waited
            waited = 0.0
            self._forget(now)
            if len(self._sent) >= self.burst:
                # Bounded by the window: a wall clock set back must not stall us for longer.
                waited = min(self.window, max(0.0, self._sent[0] + self.window - now))
                self._pause(waited, "this process's requests")
                now = max(self.clock(), now + waited)
                self._forget(now)
            self._sent.append(now)
            return waited

    def _pause(self, seconds: float, counted: str) -> None:
        if seconds > NOTICE_WAIT:  # a person at the terminal would think it hung
            endpoint = {"rest": "REST", "graphql": "GraphQL"}.get(self.key.split(" ", 1)[0],
                                                                 self.key)
            logger.info("waiting %.0fs before the next GitHub %s request, to stay within "
                        "github.max_requests_per_minute = %d (%s)", seconds, endpoint,
                        self.per_minute, counted)
        if seconds:
            self.sleep(seconds)

    def _reservation(self, shared: SendLog, now: float) -> float:
        """The next moment this process reserved in the shared window, reserving more when
        none is left or the ones left went stale."""
        while self._reserved and now - self._reserved[0] > STALE:
            self._reserved.popleft()
        if not self._reserved:
            self._reserved.extend(shared.reserve_sends(self.key, now, self.burst,
                                                       self.window, BATCH))
        return self._reserved.popleft()

    def _forget(self, now: float) -> None:
        while self._sent and self._sent[0] <= now - self.window:
            self._sent.popleft()
