"""The store's contract, one suite over both backends (the ``store`` fixture: the embedded
store and PostgreSQL): repos and releases, ETags, events and the outbox, progress and failures,
digests, small keyed values, the cached keys (PR labels, notifier memory, the impact index),
the shared pacing window, signed requests seen, subscriptions, and totals."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from watcher.delivery.events import make_event
from watcher.errors import StoreError
from watcher.impact.analysis.suppress import Suppression
from watcher.models import Release
from watcher.store import ReleaseRecord, RepoState, Store, Subscription

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def an_event(n: int = 1, repo: str = "o/r", when: datetime = NOW):
    release = Release(id=n, tag_name=f"v{n}", body="- a")
    return make_event("published", repo, release, f"{n:064x}", [], when)


def test_repo_states_round_trip_with_their_timestamps(store: Store):
    state = RepoState(repo="o/r", consecutive_failures=2, last_error="HTTP 502",
                      last_poll=NOW, last_success=NOW - timedelta(hours=1))
    store.put_repo_state(state)
    store.put_repo_state(state.model_copy(update={"consecutive_failures": 3}))  # replaced
    assert store.repo_state("o/r").consecutive_failures == 3
    assert store.repo_state("x/y") == RepoState(repo="x/y")
    later = state.model_copy(update={"last_poll": NOW + timedelta(minutes=10)})
    store.touch_repos([later])
    states = store.repo_states(["o/r", "x/y"])
    assert states["o/r"].last_poll == later.last_poll and states["x/y"].last_poll is None
    assert store.repos() == ["o/r"]
    assert store.last_successes(["o/r", "x/y"]) == {"o/r": NOW - timedelta(hours=1)}


def test_release_records_are_kept_per_repo_and_id(store: Store):
    big = 3_000_000_000  # GitHub's ids outgrow 32 bits
    for rid in (1, big):
        store.put_release(ReleaseRecord(repo="o/r", release=Release(id=rid, tag_name=f"v{rid}"),
                                        body_hash="h", first_seen=NOW, last_changed=NOW))
    record = store.release_record("o/r", big)
    assert record is not None and record.release.tag_name == f"v{big}"
    assert sorted(store.release_records("o/r")) == [1, big] and store.releases_known("o/r") == 2
    store.delete_release("o/r", 1)
    assert store.release_record("o/r", 1) is None and store.releases_known("o/r") == 1


def test_etags_and_last_pages(store: Store):
    store.put_etags({"u1": '"a"', "u2": 'W/"b"'}, last_pages=["u2"])
    store.put_etags({"u1": '"c"'})
    assert store.etag("u1") == '"c"' and store.etag("nope") is None
    assert store.etags(["u1", "u2", "u3"]) == {"u1": '"c"', "u2": 'W/"b"'}
    assert store.last_pages(["u1", "u2"]) == {"u2"}


def test_the_outbox_counts_per_notifier_and_reads_the_failing_ones(store: Store):
    for n in (1, 2, 3):
        store.add_event(an_event(n), ["slack", "log"] if n < 3 else ["log"],
                        NOW + timedelta(minutes=n))
    assert store.pending_count() == 5
    counts = store.pending_by_notifier()
    assert list(counts) == ["slack", "log"]
    assert counts["slack"] == (2, NOW + timedelta(minutes=1)) and counts["log"][0] == 3
    second = store.pending_deliveries()[2]
    store.save_progress(second.id, {"sent": 1, "parent_ts": "1.2"})
    failed = store.delivery_failed(second, "slack: 500", permanent=False)
    assert failed.progress == {"sent": 1, "parent_ts": "1.2"}  # progress read back, kept
    assert [(d.id, d.attempts) for d in store.failing_deliveries()] == [(second.id, 1)]
    event = store.event(second.event_id)
    assert event is not None and event.id == second.event_id and store.event("nope") is None


def test_digest_pages_read_in_order_and_pick_repos(store: Store):
    for n in range(1, 8):
        store.add_event(an_event(n, repo="a/x" if n % 2 else "b/y"), [], NOW, ["weekly"])
    upto = store.digest_upto("weekly")
    pages = list(store.digest_pages("weekly", upto, page=3))
    assert [len(page) for page in pages] == [3, 3, 1]
    only_b = [body for page in store.digest_pages("weekly", upto, 3, repos={"b/y"})
              for body in page]
    assert len(only_b) == 3 and all('"b/y"' in body for body in only_b)
    assert list(store.digest_pages("weekly", upto, 3, repos=set())) == []
    assert store.digest_sizes() == {"weekly": 7}


def test_meta_daemon_and_organisation_state(store: Store):
    assert store.daemon_state() is None
    store.put_daemon_state({"pid": 7, "heartbeat": NOW.isoformat()})
    store.put_daemon_state({"pid": 8})
    assert store.daemon_state() == {"pid": 8}
    store.put_org_state("PyTorch", {"repos": ["pytorch/vision"]})
    assert store.org_state("pytorch") == {"repos": ["pytorch/vision"]}


def test_cached_keys_pr_labels_memory_and_code_index(store: Store):
    store.put_pr_labels("o/r", {1: ["release notes: fx"], 2: []})
    assert store.pr_labels("o/r", [1, 2, 3]) == {1: ["release notes: fx"], 2: []}
    assert store.recall("slack", "thread:o/r:1") is None
    store.remember("slack", "thread:o/r:1", {"channel": "C1", "ts": "1.2"})
    store.remember("slack | odd name", "thread:o/r:1", {"ts": "9"})  # free text, kept apart
    assert store.recall("slack", "thread:o/r:1") == {"channel": "C1", "ts": "1.2"}
    assert store.recall("slack | odd name", "thread:o/r:1") == {"ts": "9"}
    store.put_code_index("app", {"a.py": "1|2|h|torch"})
    assert store.code_index("app") == {"a.py": "1|2|h|torch"} and store.code_index("x") == {}
    with store.transaction(), pytest.raises(RuntimeError, match="outside its transactions"):
        store.recall("slack", "thread:o/r:1")


def test_the_pacing_window_is_shared_and_reserved(store: Store):
    assert store.reserve_sends("rest", 100.0, 2, 60.0, 2) == [100.0, 100.0]
    assert store.reserve_sends("rest", 101.0, 2, 60.0) == [160.0]
    assert store.reserve_sends("graphql", 101.0, 2, 60.0) == [101.0]


def test_signed_requests_are_seen_once_until_they_expire(store: Store):
    assert store.first_sighting("v0=a", now=1000.0, until=1300.0)
    assert not store.first_sighting("v0=a", now=1299.0, until=1300.0)
    assert store.first_sighting("v0=b", now=1301.0, until=1601.0)  # a is pruned here
    assert store.seen_requests() == 1


def test_of_eight_threads_seeing_one_signature_exactly_one_is_first(store: Store):
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(
        store.first_sighting("v0=same", now=1.0, until=301.0))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 7 + [True]


def test_subscriptions_get_ids_and_take_their_queues_when_removed(store: Store):
    first = store.add_subscription(Subscription(channel="C1", created_at=NOW))
    second = store.add_subscription(Subscription(channel="C2", repos=["o/r"], created_at=NOW))
    assert second.id > first.id > 0
    store.add_event(an_event(1), [second.notifier_name, "log"], NOW, [second.notifier_name])
    assert [s.id for s in store.subscriptions()] == [first.id, second.id]
    assert [s.repos for s in store.subscriptions("C2")] == [["o/r"]]
    assert [s.id for s in store.remove_subscriptions([second.id])] == [second.id]
    assert [d.notifier for d in store.pending_deliveries()] == ["log"]
    assert store.digest_sizes() == {}


def test_suppressions_are_kept_once_by_key_and_dropped_by_it(store: Store):
    entry = Suppression(item="173454", api="torch.distributed.tensor.DTensor.to_local",
                        codebase="trainer", path="tp.py", code="y = x.to_local()", by="U1",
                        at=NOW)
    assert store.suppressions() == []
    assert store.put_suppression(entry) is True
    # The same use said "not us" twice (two replicas, a click sent again) is one entry.
    assert store.put_suppression(entry.model_copy(update={"by": "U2"})) is False
    older = entry.model_copy(update={"path": "a.py", "at": NOW - timedelta(days=1)})
    store.put_suppression(older)
    assert store.suppressions() == [older, entry]
    assert store.delete_suppression(entry.key) == entry
    assert store.delete_suppression(entry.key) is None
    assert store.suppressions() == [older]


def test_totals_count_what_is_stored(store: Store):
    store.add_event(an_event(1), ["log"], NOW, ["weekly"])
    store.put_pr_labels("o/r", {1: []})
    totals = store.totals()
    assert (totals["events"], totals["pending deliveries"], totals["queued for digests"]) == (
        1, 1, 1)
    assert totals.get("diskcache keys", totals.get("stored keys")) == 1
    assert store.integrity() == []


def test_a_failed_transaction_leaves_the_keys_it_did_not_reach(store: Store):
    with pytest.raises(StoreError), store.transaction():
        store.put_etags({"u": '"e"'})
        raise StoreError("a write refused half-way")
    assert store.etag("u") is None
