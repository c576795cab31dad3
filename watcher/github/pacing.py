"""Keeps requests under a per-minute ceiling: GitHub's secondary rate limits allow at most 900
points a minute per REST endpoint (a GET is one point) and 2,000 for GraphQL
(docs.github.com, "Rate limits for the REST API", "Secondary rate limits").

A sliding window over the send times of the last ``per_minute`` requests: a request waits only
when that many went out in the last 60 seconds, and then until the oldest of them is a minute
old. So no minute, wherever it starts, sees more than ``per_minute`` requests, and a poll that
stays under the ceiling is never slowed (a token bucket would slow a 500-request burst that
GitHub allows). Clock and sleep are injected, so tests never wait.

GitHub counts what every process sends with one token, so the window is kept in the store
(``shared``, ``Store.reserve_sends``) when there is one: two one-shot polls run back to back, or
a poll run by hand beside the daemon, pace together instead of each starting from an empty
minute. A process reserves moments ``BATCH`` at a time in one short store transaction (one
per request cost a 500-repo poll a second), and each request sleeps until its moment outside
it. A reserved moment not used within ``STALE`` seconds is dropped: its request would go out
later than the window recorded, so the window would under-count that later minute; what is
reserved and never used only over-counts, which is safe. Without a store the window is this
process's own.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Protocol

WINDOW = 60.0
BATCH = 20  # moments reserved at once in the shared window (``github.concurrency``'s default)
STALE = 2.0  # seconds a reserved moment stays usable


class SendLog(Protocol):
    """Send times shared by every process on one store (``watcher.store.Store``)."""

    def reserve_sends(self, key: str, now: float, per_minute: int, window: float,
                      count: int = 1) -> list[float]:
        """Record up to ``count`` more sends under ``key``, each at the first moment from
        ``now`` at which no ``window`` seconds hold more than ``per_minute`` sends, stopping
        after the first that lies ahead of ``now``; their moments."""
        ...


class Pacer:
    def __init__(self, per_minute: int, *, clock: Callable[[], float],
                 sleep: Callable[[float], None], window: float = WINDOW,
                 shared: SendLog | None = None, key: str = "rest") -> None:
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1")
        self.per_minute = per_minute
        self.window = window
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
                if waited:
                    self.sleep(waited)
                return waited
            waited = 0.0
            self._forget(now)
            if len(self._sent) >= self.per_minute:
                # Bounded by the window: a wall clock set back must not stall us for longer.
                waited = min(self.window, max(0.0, self._sent[0] + self.window - now))
                self.sleep(waited)
                now = max(self.clock(), now + waited)
                self._forget(now)
            self._sent.append(now)
            return waited

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
