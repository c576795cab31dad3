"""The limits one exchange with the package index is held to, whatever the server does.

httpx's timeouts are per read: a server sending a byte every few seconds never trips one, and
nothing bounds a whole response. ``Deadline`` does: it learns the socket of the request's
connection (httpcore's ``trace`` extension reports each new connection) and, when the deadline
passes or the fetch is stopped (the daemon shutting down, SIGTERM), shuts that socket down,
which ends a read blocked on it at once. ``Floor`` abandons a body slower than the budget's
throughput floor over any of its windows.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from watcher.impact.atlas.budget import Budget, megabytes
from watcher.impact.atlas.errors import OverBudget


class Deadline:
    """One request's deadline (``monotonic`` seconds); a context manager that arms it."""

    def __init__(self, seconds: float, what: str, *,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.at = monotonic() + seconds
        self.what = what  # "the JSON", "the download": for the error
        self.monotonic = monotonic
        self.cut_because: str | None = None  # "deadline" or "stopped", once cut
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self.cut)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def left(self) -> float:
        return self.at - self.monotonic()

    def check(self) -> None:
        """Raise once past the deadline (checked between reads too, not only by the timer)."""
        if self.cut_because == "stopped":
            raise OverBudget(f"{self.what} was stopped (shutting down)")
        if self.cut_because is not None or self.left() <= 0:
            raise OverBudget(f"{self.what} took longer than its {self.seconds:g}s; abandoned")

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's ``trace`` callback: keep each connection's socket, to cut it."""
        if event != "connection.connect_tcp.complete":
            return
        sock = info["return_value"].get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with self._lock:
                self._sockets.append(sock)
                late = self.cut_because is not None
            if late:
                _shut(sock)

    def cut(self, because: str = "deadline") -> None:
        with self._lock:
            self.cut_because = self.cut_because or because
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    # The base class's shutdown, also for a TLS socket: SSLSocket's own would drop its SSL
    # object under the read in flight on another thread; this only ends that read (EOF).
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class Floor:
    """The throughput floor: fewer than ``min_rate`` bytes a second over a window of
    ``slow_seconds`` abandons the body (a window with no byte at all is the read timeout's)."""

    def __init__(self, budget: Budget, what: str, now: float) -> None:
        self.budget = budget
        self.what = what
        self._start = now
        self._bytes = 0

    def add(self, count: int, now: float) -> None:
        self._bytes += count
        elapsed = now - self._start
        if elapsed < self.budget.slow_seconds:
            return
        if self._bytes < self.budget.min_rate * elapsed:
            raise OverBudget(f"{self.what} came at {megabytes(self._bytes / elapsed)}/s over "
                             f"{elapsed:.0f}s, under the floor of "
                             f"{megabytes(self.budget.min_rate)}/s "
                             "(impact.download_min_rate); abandoned")
        self._start, self._bytes = now, 0
