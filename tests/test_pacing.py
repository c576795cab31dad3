"""Requests stay within GitHub's secondary limits: at most ``max_requests_per_minute`` in any
minute, whatever the watch list's size, without ever sleeping for real."""

from __future__ import annotations

import threading

import pytest

from watcher.github.pacing import Pacer


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.now += seconds


def busiest_minute(times: list[float]) -> int:
    """The most send times in any 60 s window [t, t + 60), t anywhere."""
    times = sorted(times)
    most, start = 0, 0
    for end, when in enumerate(times):
        while times[start] <= when - 60:
            start += 1
        most = max(most, end - start + 1)
    return most


def test_a_burst_under_the_ceiling_never_waits():
    time = FakeTime()
    pacer = Pacer(800, clock=time.clock, sleep=time.sleep)
    assert sum(pacer.wait() for _ in range(800)) == 0.0
    assert time.now == 1000.0


@pytest.mark.parametrize("per_minute", [1, 60, 800, 900])
def test_no_minute_ever_sees_more_than_the_ceiling(per_minute):
    time = FakeTime()
    pacer = Pacer(per_minute, clock=time.clock, sleep=time.sleep)
    sent = []
    for _ in range(5_000 if per_minute > 1 else 20):
        pacer.wait()
        sent.append(time.now)
    assert busiest_minute(sent) == per_minute  # at the ceiling, never over it
    minutes = (len(sent) - 1) // per_minute
    assert time.now - 1000.0 == pytest.approx(60.0 * minutes)  # and no slower than that


def test_threads_share_one_ceiling():
    time = FakeTime()
    pacer = Pacer(50, clock=time.clock, sleep=time.sleep)
    sent: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(40):
            pacer.wait()
            with lock:
                sent.append(time.now)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(sent) == 320 and busiest_minute(sent) <= 50


def test_a_clock_set_back_does_not_stall_for_more_than_a_minute():
    time = FakeTime()
    pacer = Pacer(2, clock=time.clock, sleep=time.sleep)
    pacer.wait()
    pacer.wait()
    time.now -= 3600  # the wall clock was corrected backwards
    assert pacer.wait() <= 60.0


def test_a_poll_through_the_cli_is_paced(fake_github, write_config, run_cli, clock):
    names = tuple(f"org/repo-{n}" for n in range(30))
    for name in names:
        fake_github.add_repo(name)
    # The fake stamps requests with the test's clock; one at a time, so a stamp is the moment
    # the pacer let the request go (threads sharing one ceiling: the test above).
    fake_github.clock = clock.epoch
    config = write_config(repos=names, github="max_requests_per_minute = 7\nconcurrency = 1")
    assert run_cli("--config", str(config), "poll").code == 0
    sent = [r.at for r in fake_github.requests]
    assert len(sent) == 30 and busiest_minute(sent) == 7
    assert sum(clock.slept) == pytest.approx(4 * 60.0)  # 30 requests: 4 waits for a minute
