"""The daemon against a wall clock stepped back or forward (APScheduler 3 schedules by it), with
an injected clock and monotonic clock: nothing here sleeps or changes the system clock."""

from __future__ import annotations

import io
import logging
from datetime import timedelta

import pytest
from conftest import TOKEN

from watcher.app import Dependencies, build_daemon
from watcher.config import Secrets, load_config
from watcher.daemon.clock import ClockWatch
from watcher.daemon.loop import Daemon

DIGEST = ('[[notifiers]]\nname = "weekly"\ntype = "jsonl"\npath = "weekly.jsonl"\n'
          'mode = "digest"\ndigest_schedule = "0 9 * * MON"\n')


class Monotonic:
    """A monotonic clock the test moves: unlike the wall clock, it never steps."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def scheduled(write_config, clock):
    config = load_config(write_config('[poll]\ninterval = "10m"\nretry_interval = "1m"\n'
                                      'jitter = "0s"\n', notifiers=DIGEST))
    deps = Dependencies(stdout=io.StringIO(), sleep=clock.sleep, clock=clock, epoch=clock.epoch,
                        secrets=Secrets.model_validate({"GITHUB_TOKEN": TOKEN}), environ={})
    monotonic = Monotonic()
    daemon = build_daemon(config, deps, monotonic=monotonic)
    daemon.start(paused=True)  # scheduled as for real, but only this test moves time
    try:
        yield daemon, monotonic
    finally:
        daemon.stop()


def next_runs(daemon: Daemon) -> dict[str, object]:
    assert daemon.scheduler is not None
    return {job.id: job.next_run_time for job in daemon.scheduler.get_jobs()}


def test_a_clock_stepped_back_an_hour_does_not_hold_the_jobs_for_an_hour(scheduled, clock,
                                                                          caplog):
    daemon, monotonic = scheduled
    before = next_runs(daemon)
    assert before["deliver"] - clock.now == timedelta(minutes=1)
    clock.now += timedelta(seconds=20)
    monotonic.now += 20
    daemon.watch_clock()  # time passing as it should: nothing to do
    assert next_runs(daemon) == before
    clock.now -= timedelta(hours=1)  # NTP, a restored VM, `date -s`
    with caplog.at_level(logging.WARNING, logger="watcher.daemon.loop"):
        daemon.watch_clock()
    after = next_runs(daemon)
    # The retry job had 40 s left and still has; APScheduler alone would wait 1 h 40 s.
    assert after["deliver"] - clock.now == timedelta(seconds=40)
    assert after["poll"] - clock.now <= timedelta(minutes=10)
    assert after["digest:weekly"] == before["digest:weekly"]  # a wall-clock schedule: kept
    lines = [r.getMessage() for r in caplog.records if "clock" in r.getMessage()]
    assert len(lines) == 1 and "stepped back by 1h" in lines[0], lines
    daemon.watch_clock()  # once: the next look sees no step
    assert next_runs(daemon) == after


def test_a_clock_stepped_forward_runs_what_fell_due_now(scheduled, clock):
    daemon, _ = scheduled
    before = next_runs(daemon)
    clock.now += timedelta(days=8)  # past the weekly digest too, with no time really passed
    daemon.watch_clock()
    after = next_runs(daemon)
    # Due now (one catch-up each), not skipped as runs missed by more than their grace time.
    assert after["deliver"] == after["poll"] == after["digest:weekly"] == clock.now
    assert before["digest:weekly"] < clock.now


def test_clock_watch_tells_a_step_from_time_passing(clock):
    monotonic = Monotonic()
    watch = ClockWatch(clock, monotonic)
    clock.now += timedelta(hours=2)
    monotonic.now += 7200.5
    assert not watch.step()
    clock.now -= timedelta(minutes=30)
    monotonic.now += 1
    assert watch.step() == -timedelta(minutes=30, seconds=1)
    clock.now += timedelta(seconds=3)  # within the tolerance: NTP-sized, not a step
    assert not watch.step()
