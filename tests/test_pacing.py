"""Requests stay within GitHub's secondary limits: at most ``max_requests_per_minute`` in any
minute, whatever the watch list's size, without ever sleeping for real."""

from __future__ import annotations

import logging
import threading

import pytest

from watcher.github.pacing import BATCH, Pacer


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.now += seconds


def busiest(times: list[float], span: float) -> int:
    """The most send times in any window [t, t + span), t anywhere."""
    times = sorted(times)
    most, start = 0, 0
    for end, when in enumerate(times):
        while times[start] <= when - span:
            start += 1
        most = max(most, end - start + 1)
    return most


def busiest_minute(times: list[float]) -> int:
    return busiest(times, 60)


def busiest_second(times: list[float]) -> int:
    return busiest(times, 1)


def test_requests_under_the_ceiling_are_never_held_back():
    """GitHub documents a ceiling a minute (900 points for REST) and none a second: 500
    requests at 800 a minute all go at once, and only the 801st of a minute waits, for the
    first of that minute to leave it."""
    time = FakeTime()
    pacer = Pacer(800, clock=time.clock, sleep=time.sleep)
    sent = []
    for _ in range(500):
        assert pacer.wait() == 0.0
        sent.append(time.now)
    assert set(sent) == {1000.0}
    for _ in range(300):
        pacer.wait()
    assert time.now == 1000.0  # 800 in the minute: still no wait
    assert pacer.wait() == 60.0 and time.now == 1060.0


@pytest.mark.parametrize("per_minute", [1, 7, 25, 60, 800, 900, 901])
def test_no_minute_ever_sees_more_than_the_ceiling(per_minute):
    time = FakeTime()
    pacer = Pacer(per_minute, clock=time.clock, sleep=time.sleep)
    sent = []
    for _ in range(5_000 if per_minute > 1 else 20):
        pacer.wait()
        sent.append(time.now)
    assert busiest_minute(sent) == per_minute  # at the ceiling, never over it
    # and no slower than the ceiling: a wait only when a minute is full
    assert time.now - 1000.0 == pytest.approx((len(sent) - 1) // per_minute * 60)


def test_a_long_wait_is_said_once_before_it_starts(caplog):
    time = FakeTime()
    pacer = Pacer(7, clock=time.clock, sleep=time.sleep)
    with caplog.at_level(logging.INFO, logger="watcher.github.pacing"):
        for _ in range(8):
            pacer.wait()
    assert [r.getMessage() for r in caplog.records] == [
        "waiting 60s before the next GitHub REST request, to stay within "
        "github.max_requests_per_minute = 7 (this process's requests)"]
    caplog.clear()
    fast = Pacer(800, clock=time.clock, sleep=time.sleep)
    with caplog.at_level(logging.INFO, logger="watcher.github.pacing"):
        for _ in range(100):
            fast.wait()  # no wait: nothing said
    assert caplog.records == []


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


class CountingLog:
    """A store's shared window, counting its transactions."""

    def __init__(self, store) -> None:
        self.store = store
        self.calls = 0

    def reserve_sends(self, key, now, per_minute, window, count=1):
        self.calls += 1
        return self.store.reserve_sends(key, now, per_minute, window, count)


def test_the_shared_window_is_written_a_batch_at_a_time_and_stale_moments_dropped(tmp_path):
    from watcher.github.pacing import STALE
    from watcher.store.store import Store

    store = Store.open(tmp_path / "s")
    fake = FakeTime()
    log = CountingLog(store)
    pacer = Pacer(800, clock=fake.clock, sleep=fake.sleep, shared=log)
    requests = 5 * BATCH + 1
    sent = []
    for _ in range(requests):
        pacer.wait()
        sent.append(fake.now)
    # One store transaction per batch of moments, not one per request; none waited.
    assert log.calls == requests // BATCH + 1
    assert set(sent) == {1000.0}
    fake.now += STALE + 1  # the rest of a batch, unused this long, no longer says when we send
    calls = log.calls
    pacer.wait()
    assert log.calls == calls + 1
    # What went stale was counted, never lost: over-counting only ever slows us down.
    rows = store._pacing().scalar("SELECT count(*) FROM rw_pace")
    assert rows == requests + 1 + (BATCH - 1) * 2
    store.close()


def test_two_processes_on_one_store_share_one_ceiling(tmp_path):
    """Two pacers on one store (two processes) never let a minute hold more than the
    ceiling between them, and the one that comes second waits for the first's minute."""
    from watcher.store.store import Store

    first, second = Store.open(tmp_path / "s"), Store.open(tmp_path / "s")
    time = FakeTime()
    pacers = [Pacer(50, clock=time.clock, sleep=time.sleep, shared=store)
              for store in (first, second)]
    sent = []
    for turn in range(200):
        pacers[turn % 2].wait()
        sent.append(time.now)
    assert busiest_minute(sent) <= 50
    assert time.now - 1000.0 >= 3 * 60  # 200 at 50 a minute: at least three full minutes
    first.close()
    second.close()


def test_a_batch_stops_at_the_first_moment_ahead(tmp_path):
    from watcher.store.store import Store

    store = Store.open(tmp_path / "s")
    taken = store.reserve_sends("rest", 1000.0, 7, 60.0, 20)
    assert taken == [1000.0] * 7 + [1060.0]  # then the caller waits; the rest from there
    store.close()
