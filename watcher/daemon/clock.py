"""Keeps the daemon's schedule right when the wall clock is stepped.

APScheduler 3 keeps next run times as wall-clock times: a clock stepped back an hour (NTP after a
long drift, a VM restored, `date -s`) would hold every job (poll, retries, heartbeat) for that
hour. The main thread compares the wall clock with the monotonic one, which is never stepped,
and re-arms the jobs when they moved apart.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from apscheduler.schedulers.base import BaseScheduler
from apscheduler.triggers.interval import IntervalTrigger

from watcher.config import format_duration

logger = logging.getLogger(__name__)

# How far the wall clock may move apart from the monotonic one between two looks before it
# counts as stepped; NTP's slewing moves it by far less.
CLOCK_STEP_TOLERANCE = 5.0


class ClockWatch:
    """Notices the wall clock being stepped (NTP after a long drift, a VM restored, `date -s`)
    by comparing how far it moved with the monotonic clock, which is never stepped."""

    def __init__(self, wall: Callable[[], datetime], monotonic: Callable[[], float],
                 tolerance: float = CLOCK_STEP_TOLERANCE) -> None:
        self.wall = wall
        self.monotonic = monotonic
        self.tolerance = tolerance
        self._last = (wall(), monotonic())

    def step(self) -> timedelta:
        """How far the wall clock was stepped since the last look (negative: back), or zero."""
        wall, monotonic = self.wall(), self.monotonic()
        last_wall, last_monotonic = self._last
        self._last = (wall, monotonic)
        step = (wall - last_wall) - timedelta(seconds=monotonic - last_monotonic)
        return step if abs(step.total_seconds()) > self.tolerance else timedelta(0)


def _signed(step: timedelta) -> str:
    seconds = round(abs(step.total_seconds()))
    return f"{'back' if step < timedelta(0) else 'forward'} by {format_duration(seconds)}"


def rearm_after_step(scheduler: BaseScheduler, step: timedelta, now: datetime) -> list[str]:
    """Interval jobs keep the time they had left; after a step forward, whatever fell due runs
    now (one catch-up), rather than being skipped as a misfire. Digests keep their wall-clock
    schedule. Logs one line and returns what moved (``poll in 9m``)."""
    moved = []
    for job in scheduler.get_jobs():
        if job.next_run_time is None:
            continue
        if step < timedelta(0) and isinstance(job.trigger, IntervalTrigger):
            when = job.next_run_time + step
        elif step > timedelta(0) and job.next_run_time <= now:
            when = now
        else:
            continue
        job.modify(next_run_time=when)
        left = max(0, round((when - now).total_seconds()))
        moved.append(f"{job.name} in {format_duration(left) if left else 'now'}")
    logger.warning("the system clock was stepped %s; %s", _signed(step),
                   "rescheduled: " + ", ".join(moved) if moved else "no job was due")
    return moved
