"""A leader counts its lease from the moment it asked for it, not from the server's answer:
the server starts the lease somewhere between the two, so a late answer (a slow network, a
loaded server) must not stretch the leader's trust past the server's expiry, where a standby
may already lead (``watcher.daemon.leader.Leadership.renew``)."""

from __future__ import annotations

from watcher.daemon.leader import TRUSTED, Leadership

LEASE = 15.0  # seconds, the default [store] lease
LATE = 5.0  # seconds the server's answer takes: a third of the lease


class Clock:
    """A monotonic clock the test moves (and the lease moves while it is being asked)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class SlowLease:
    """A lease the server grants ``late`` seconds after it was asked: the clock moves DURING
    ``acquire``, as a renewal that waits on the network does."""

    def __init__(self, clock: Clock, late: float, token: int = 3) -> None:
        self.clock, self.late, self.token = clock, late, token
        self.asked: list[float] = []

    def acquire(self) -> int:
        self.asked.append(self.clock.now)
        self.clock.now += self.late
        return self.token

    def release(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_late_answer_does_not_stretch_the_trust_past_two_thirds_from_the_asking():
    clock = Clock()
    lease = SlowLease(clock, LATE)
    leadership = Leadership(lease, LEASE, monotonic=clock)
    assert leadership.renew() and leadership.token() == 3
    (asked,) = lease.asked
    assert clock.now == asked + LATE  # answered a third of the lease after it was asked
    clock.now = asked + LEASE * TRUSTED - 0.01
    assert leadership.leads()
    # Counted from the answer, the leader would trust its lease until the very second the
    # server may hand it to a standby (asked + 15 s): two leaders at once.
    clock.now = asked + LEASE * TRUSTED
    assert not leadership.leads() and leadership.token() is None


def test_each_renewal_counts_from_its_own_asking():
    clock = Clock()
    lease = SlowLease(clock, 0.0)
    leadership = Leadership(lease, LEASE, monotonic=clock)
    assert leadership.renew()
    clock.now += LEASE / 3  # the renewal thread's interval
    lease.late = LATE
    assert leadership.renew()
    asked = lease.asked[-1]
    clock.now = asked + LEASE * TRUSTED - 0.01
    assert leadership.token() == 3
    clock.now = asked + LEASE * TRUSTED
    assert not leadership.leads()
