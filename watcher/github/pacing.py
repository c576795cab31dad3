"""Keeps requests within GitHub's documented secondary rate limits: at most ``per_minute``
requests in any 60 seconds, per endpoint (REST apart from GraphQL, per API host).

What GitHub documents ("Rate limits for the REST API", "About secondary rate limits",
docs.github.com): no more than 900 points a minute for REST endpoints (a GET is 1 point; a
POST, PATCH, PUT or DELETE 5) and 2,000 for GraphQL, no more than 100 concurrent requests
(REST and GraphQL together), and no more than 90 s of GitHub's CPU time a minute. Nothing
per second: the one-second pause its best practices ask for is between *mutative* requests,
and release-watch only reads. So this is a sliding window of one minute: a poll of 500
conditional GETs goes out as fast as ``github.concurrency`` lets it (at most 100 in flight is
the connection pool's business, not this one's), and only a request that would be the
``per_minute + 1``-th of some minute waits, until the oldest of that minute has left it. The
ceiling, ``github.max_requests_per_minute`` (800 by default, 900 at most), keeps a margin under
GitHub's 900 for what else uses the same token (GitHub counts per user, not per program) and
for the gap between when we send and when GitHub counts. A wait over ``NOTICE_WAIT`` seconds
says so in one info line first (how long, and why). Clock and sleep are injected, so tests
never wait.

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
BATCH = 20  # moments reserved at once in the shared window
STALE = 2.0  # seconds a reserved moment stays usable
NOTICE_WAIT = 5.0  # a wait longer than this is said in an info line before it starts

logger = logging.getLogger(__name__)


class SendLog(Protocol):
    """Send times shared by every process on one store (``watcher.store.Store``)."""

    def reserve_sends(self, key: str, now: float, per_minute: int, window: float,
                      count: int = 1) -> list[float]:
        """Record up to ``count`` more sends under ``key``, each at the first moment from
        ``now`` at which no ``window`` seconds hold more than ``per_minute`` sends, stopping
        after the first that lies ahead of ``now``; their moments."""
        ...


class Pacer:
    """At most ``per_minute`` requests in any ``window`` seconds (a minute)."""

    def __init__(self, per_minute: int, *, clock: Callable[[], float],
                 sleep: Callable[[float], None], window: float = MINUTE,
                 shared: SendLog | None = None, key: str = "rest") -> None:
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1")
        self.per_minute = per_minute
        self.window = window
        self.clock = clock
        self.sleep = sleep
        self.shared = shared
        self.key = key  # what GitHub counts apart: REST or GraphQL, per API host
        self._sent: deque[float] = deque()  # this process's sends of the last window
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
            if len(self._sent) >= self.per_minute:
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
            self._reserved.extend(shared.reserve_sends(self.key, now, self.per_minute,
                                                       self.window, BATCH))
        return self._reserved.popleft()

    def _forget(self, now: float) -> None:
        while self._sent and self._sent[0] <= now - self.window:
            self._sent.popleft()
