"""Leadership (``watcher.daemon.leader``) with a scripted lease and an injected clock: when a
replica leads, when it stops starting side effects (two thirds into a lease it could not renew,
before the server can hand it to another), and that a clean stop hands the lease back."""

from __future__ import annotations

from watcher.daemon.leader import TRUSTED, Leadership
from watcher.errors import StoreError


class ScriptedLease:
    def __init__(self, *answers: int | Exception | None) -> None:
        self.answers = list(answers)
        self.released = self.closed = False

    def acquire(self) -> int | None:
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def release(self) -> None:
        self.released = True

    def close(self) -> None:
        self.closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_embedded_store_always_leads_without_a_token():
    leadership = Leadership(None, 15)
    assert leadership.leads() and leadership.role == "leader" and leadership.token() is None
    assert not leadership.shared


def test_a_replica_leads_while_its_lease_is_fresh_and_says_so_once(caplog):
    clock, changes = Clock(), []
    lease = ScriptedLease(None, 4, 4)
    leadership = Leadership(lease, 15, monotonic=clock, on_change=changes.append)
    assert not leadership.renew() and leadership.role == "standby"
    assert leadership.renew() and leadership.token() == 4 and leadership.role == "leader"
    clock.now += 5
    assert leadership.renew()
    assert changes == [True]  # told once, when it was won


def test_a_leader_that_cannot_renew_stops_two_thirds_into_its_lease():
    clock, changes = Clock(), []
    lease = ScriptedLease(7, StoreError("cannot reach the store"), StoreError("again"))
    leadership = Leadership(lease, 15, monotonic=clock, on_change=changes.append)
    assert leadership.renew()
    clock.now += 5
    assert leadership.renew() and leadership.token() == 7  # one failure: a third is left
    clock.now = 100.0 + 15 * TRUSTED - 0.01
    assert leadership.leads()
    clock.now = 100.0 + 15 * TRUSTED  # 5 s before the server could give the lease away
    assert not leadership.leads() and leadership.token() is None
    # Whatever the constant says: a leader never trusts the last third of a lease it could not
    # renew (a renewal's interval, seconds / 3, before the server may hand it to another).
    clock.now = 100.0 + 15 * 2 / 3 + 0.5
    assert not leadership.leads()
    assert not leadership.renew()
    assert changes == [True, False]


def test_another_holder_ends_the_term_at_once():
    clock = Clock()
    leadership = Leadership(ScriptedLease(3, None), 15, monotonic=clock)
    assert leadership.renew()
    assert not leadership.renew() and leadership.token() is None


def test_a_clean_stop_hands_the_lease_back_and_a_standby_keeps_it_untouched():
    leader_lease, standby_lease = ScriptedLease(1), ScriptedLease(None)
    leader = Leadership(leader_lease, 15, monotonic=Clock())
    standby = Leadership(standby_lease, 15, monotonic=Clock())
    leader.renew()
    standby.renew()
    leader.stop()
    standby.stop()
    assert leader_lease.released and leader_lease.closed and leader.token() is None
    assert not standby_lease.released and standby_lease.closed


class DigestState:
    """What ``MissedDigests`` reads of the store: when each digest last went out, and which
    one is in flight."""

    def __init__(self, since: dict, in_flight: set) -> None:
        self.since, self.in_flight = since, in_flight

    def digest_since(self, name):
        return self.since.get(name)

    def digest_delivery(self, name, *, ids=True):
        return object() if name in self.in_flight else None


def test_a_new_leader_sends_the_digests_the_dead_one_owed_and_no_other():
    from datetime import UTC, datetime, timedelta

    from watcher.daemon.leader import MissedDigests

    monday = datetime(2026, 11, 30, 9, tzinfo=UTC)
    missed = MissedDigests()
    for name in ("sent-by-leader", "leader-died-first", "weekly-never"):
        missed.missed(name, monday - timedelta(days=7))
        missed.missed(name, monday)  # the latest run counts
    store = DigestState({"sent-by-leader": monday + timedelta(seconds=2),
                         "leader-died-first": monday - timedelta(days=7),
                         "not-missed": monday - timedelta(days=7)}, in_flight={"mid-digest"})
    names = ["sent-by-leader", "leader-died-first", "weekly-never", "not-missed", "mid-digest"]
    assert missed.owed(store, names) == ["leader-died-first", "weekly-never", "mid-digest"]
    assert missed.owed(store, names) == ["mid-digest"]  # the missed runs are forgotten
