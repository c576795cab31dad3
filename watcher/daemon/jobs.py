"""The daemon's jobs in flight, each with a deadline and a line saying what it waits for.

A job past its deadline is stuck: whatever it waits on, no timeout of its own reached it (a
DNS look-up, a wedged read). While one is, this replica is no leader to trust, so the lease
is not renewed (``leader.Leadership(stuck=...)``) and a standby takes over; on the embedded
store the log says so. Every job running longer than ``tell_every`` says in the log, that
often, what it waits for (``downloading torch-2.16.0-...whl (12 MB of 80 MB)``), so a quiet
daemon is never a mystery.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from watcher.config import format_duration

logger = logging.getLogger(__name__)


@dataclass
class Running:
    name: str
    started: float
    seconds: float  # its deadline, from ``started``
    doing: str
    told: float  # when the log last said what it waits for

    def line(self, now: float) -> str:
        ran = format_duration(max(1, round(now - self.started)))
        return f"the {self.name} job has run {ran}: {self.doing}"


class JobWatch:
    def __init__(self, *, monotonic: Callable[[], float] = time.monotonic,
                 tell_every: float = 60.0) -> None:
        self._monotonic = monotonic
        self.tell_every = tell_every
        self._running: dict[int, Running] = {}
        self._lock = threading.Lock()
        self._stuck_said: set[int] = set()

    @contextmanager
    def running(self, name: str, seconds: float, doing: str) -> Iterator[Callable[[str], None]]:
        """The block is a job ``name`` stuck after ``seconds``; it is handed the setter of
        what it waits for."""
        now = self._monotonic()
        job = Running(name, now, seconds, doing, now)
        key = id(job)
        with self._lock:
            self._running[key] = job

        def doing_now(what: str) -> None:
            job.doing = what

        try:
            yield doing_now
        finally:
            with self._lock:
                del self._running[key]
                self._stuck_said.discard(key)

    def stuck(self) -> str | None:
        """Why this replica must not lead: a job past its deadline, described; else None."""
        now = self._monotonic()
        with self._lock:
            late = [(key, job) for key, job in self._running.items()
                    if now - job.started > job.seconds]
            for key, job in late:
                if key not in self._stuck_said:
                    self._stuck_said.add(key)
                    logger.error("%s, past its deadline of %s: it is stuck", job.line(now),
                                 format_duration(job.seconds))
        if not late:
            return None
        return f"{late[0][1].line(now)} (its deadline {format_duration(late[0][1].seconds)})"

    def tell(self) -> None:
        """Log what each long job waits for, once per ``tell_every``."""
        now = self._monotonic()
        with self._lock:
            due = [job for job in self._running.values() if now - job.told >= self.tell_every]
            for job in due:
                job.told = now
        for job in due:
            logger.info("%s", job.line(now))
