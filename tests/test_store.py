"""The store: schema versions, the upgrade from schema 1, transactions, the outbox, digest
queues, retention, and constant cost per event; what is not about the embedded store's file runs
over both backends (the ``store`` fixture: embedded and PostgreSQL)."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import diskcache
import pytest

from watcher.delivery.events import make_event
from watcher.errors import StoreError
from watcher.models import Release
from watcher.store.records import DigestDelivery
from watcher.store.store import SCHEMA_VERSION, Store

NOW = datetime(2026, 11, 29, tzinfo=UTC)
V1 = Path(__file__).parent / "fixtures" / "store_v1" / "store"


def an_event(n: int = 1, when: datetime = NOW):
    release = Release(id=n, tag_name=f"v{n}", body="- a")
    return make_event("published", "o/r", release, f"{n:064x}", [], when)


def schema_of(path: Path) -> str:
    with sqlite3.connect(path / "cache.db") as db:
        return db.execute("SELECT value FROM rw_meta WHERE key = 'schema'").fetchone()[0]


def test_new_store_gets_the_schema_version(tmp_path):
    Store.open(tmp_path / "s").close()
    assert schema_of(tmp_path / "s") == str(SCHEMA_VERSION)


def test_other_schema_version_is_refused_clearly(tmp_path):
    Store.open(tmp_path / "s").close()
    with sqlite3.connect(tmp_path / "s" / "cache.db") as db:
        db.execute("UPDATE rw_meta SET value = ? WHERE key = 'schema'", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}"):
        Store.open(tmp_path / "s")


def test_foreign_cache_is_refused(tmp_path):
    with diskcache.Cache(str(tmp_path / "s")) as cache:
        cache["something"] = 1
    with pytest.raises(StoreError, match="no release-watch schema"):
        Store.open(tmp_path / "s")


def test_foreign_sqlite_database_is_refused(tmp_path):
    (tmp_path / "s").mkdir()
    with sqlite3.connect(tmp_path / "s" / "cache.db") as db:
        db.execute("CREATE TABLE accounts (id INTEGER)")
    with pytest.raises(StoreError, match="not a release-watch store"):
        Store.open(tmp_path / "s")


def test_unopenable_path_is_a_store_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="cannot open the store"):
        Store.open(tmp_path / "file" / "store")


# ---- the upgrade from schema 1 --------------------------------------------------------------

@pytest.fixture
def v1_store(tmp_path) -> Path:
    """A copy of a store written by the schema-1 code (tests/fixtures/store_v1/make.py)."""
    shutil.copytree(V1, tmp_path / "v1")
    return tmp_path / "v1"


def test_a_schema_1_store_is_upgraded_on_open_with_everything_kept(v1_store):
    value_files = list(v1_store.rglob("*.val"))
    assert value_files  # the big release record lived in a diskcache value file
    store = Store.open(v1_store)
    assert schema_of(v1_store) == str(SCHEMA_VERSION)
    assert store.repos() == ["pytorch/pytorch", "pytorch/xla"]
    pytorch, xla = store.repo_state("pytorch/pytorch"), store.repo_state("pytorch/xla")
    assert (pytorch.releases_known, pytorch.last_success) == (2, datetime(2026, 11, 1, 12,
                                                                          tzinfo=UTC))
    assert (xla.consecutive_failures, xla.last_error) == (2, "pytorch/xla: GitHub answered "
                                                             "HTTP 502")
    records = store.release_records("pytorch/pytorch")
    assert sorted(records) == [1, 2] and len(records[2].release.body or "") > 32_000
    assert store.etag("https://api.github.com/repos/pytorch/pytorch/releases?per_page=30&page=1"
                      ) == 'W/"abc"'
    pending = store.pending_deliveries()
    assert [(d.notifier, d.event_id.split(":")[0]) for d in pending] == [
        ("slack", "pytorch/pytorch"), ("log", "pytorch/pytorch"), ("log", "pytorch/xla")]
    assert pending[0].progress == {"sent": 2, "parent_ts": "1700000000.000100"}
    assert (pending[2].attempts, pending[2].last_error) == (1, "log: disk full")
    event = store.event(pending[0].event_id)
    assert event is not None and [i.text for i in event.items] == ["Fix FSDP (#1)",
                                                                   "Faster compile (#2)"]
    assert store.digest_sizes() == {"monthly": 0, "weekly": 3}
    in_flight = store.digest_delivery("weekly")
    assert in_flight is not None and in_flight.progress == {"sent": 1}
    assert in_flight.event_ids == store.digest_queue("weekly")[:2]
    assert store.org_state("pytorch") == {"repos": ["pytorch/vision"],
                                          "refreshed_at": "2026-11-01T12:00:00+00:00",
                                          "etags": {}}
    assert store.pr_labels("pytorch/pytorch", [1, 2]) == {1: ["release notes: distributed "
                                                              "(fsdp)"]}
    assert store.daemon_state()["pid"] == 42
    store.close()
    assert not any(path.exists() for path in value_files)  # nothing refers to them any more
    # Still a diskcache directory: the ledger's keys left it, the PR labels stayed as they were.
    with diskcache.Cache(str(v1_store)) as cache:
        assert list(cache) == ["pr-labels|pytorch/pytorch|1"]  # in schema 3's key format
    assert not (v1_store / "16").exists()  # the value file's folders went with it


def test_an_upgraded_store_goes_on_working(v1_store):
    store = Store.open(v1_store)
    weekly = store.start_digest("weekly", NOW)
    assert len(weekly.event_ids) == 2  # the digest in flight resumes with the events it had
    store.digest_delivered(weekly)
    assert len(store.digest_queue("weekly")) == 1
    for delivery in store.pending_deliveries():
        store.delivered(delivery)
    assert store.add_event(an_event(9), ["log"], NOW)
    assert not store.add_event(an_event(9), ["log"], NOW)
    store.close()
    Store.open(v1_store).close()  # opening again does not upgrade twice


def test_a_failed_upgrade_leaves_the_schema_1_store_as_it_was(v1_store, monkeypatch):
    import watcher.store.migrate_v1

    before = (v1_store / "cache.db").read_bytes()

    def broken(db, key, value, held):
        raise RuntimeError("crash half-way")

    monkeypatch.setattr(watcher.store.migrate_v1, "_copy", broken)
    with pytest.raises(RuntimeError):
        Store.open(v1_store)
    with diskcache.Cache(str(v1_store)) as cache:
        assert cache[("schema",)] == 1 and cache[("outbox",)]
    assert list(v1_store.rglob("*.val")) and before  # the value files are still there


# ---- transactions, outbox, digests ----------------------------------------------------------

def test_outbox_keeps_order_and_never_queues_an_event_twice(store):
    assert store.add_event(an_event(1), ["a", "b"], NOW)
    assert store.add_event(an_event(2), ["a"], NOW)
    assert not store.add_event(an_event(1), ["a", "b"], NOW)
    pending = store.pending_deliveries()
    assert [(d.notifier, d.event_id[-1]) for d in pending] == [("a", "1"), ("b", "1"), ("a", "2")]
    store.delivered(pending[0])
    failed = store.delivery_failed(pending[1], "boom", permanent=True)
    assert failed.attempts == 1
    assert [(d.notifier, d.attempts) for d in store.pending_deliveries()] == [("b", 1), ("a", 0)]
    assert store.add_event(an_event(3), ["a"], NOW)  # queued after what was there, whatever
    assert [d.event_id[-1] for d in store.pending_deliveries()] == ["1", "2", "3"]


def test_a_failed_transaction_writes_nothing(store):
    with pytest.raises(RuntimeError), store.transaction():
        store.add_event(an_event(1), ["a"], NOW)
        store.put_etags({"u": '"e"'})
        raise RuntimeError("crash in the middle")
    assert store.pending_deliveries() == [] and store.etag("u") is None
    assert not store.has_event(an_event(1).id)


def test_a_digest_takes_the_queue_as_it_was_and_leaves_later_events_queued(store):
    for n in (1, 2):
        store.add_event(an_event(n), [], NOW, ["weekly"])
    digest = store.start_digest("weekly", NOW)
    store.add_event(an_event(3), [], NOW, ["weekly"])
    assert store.start_digest("weekly", NOW).event_ids == digest.event_ids  # resumed, not new
    store.put_digest_delivery(DigestDelivery.model_validate(
        {**digest.model_dump(), "progress": {"sent": 1}}))
    assert store.digest_delivery("weekly").progress == {"sent": 1}
    store.digest_delivered(digest)
    assert store.digest_queue("weekly") == [an_event(3).id]
    assert store.digest_since("weekly") == NOW and store.digest_delivery("weekly") is None


# ---- retention ------------------------------------------------------------------------------

def test_retention_drops_old_bodies_but_keeps_ids_and_anything_still_waiting(store):
    old = NOW - timedelta(days=400)
    sent = an_event(1, old)
    waiting = an_event(2, old)
    queued = an_event(3, old)
    recent = an_event(4, NOW - timedelta(days=10))
    store.add_event(sent, ["log"], old)
    store.add_event(waiting, ["log"], old)
    store.add_event(queued, [], old, ["weekly"])
    store.add_event(recent, [], NOW)
    store.delivered(store.pending_deliveries()[0])
    assert store.prune(NOW - timedelta(days=365)) == 1
    assert store.event(sent.id) is None and store.has_event(sent.id)
    assert not store.add_event(sent, ["log"], NOW)  # still recognised: never announced twice
    assert all(store.event(e.id) is not None for e in (waiting, queued, recent))
    assert store.prune(NOW - timedelta(days=365)) == 0


def test_store_retention_is_a_duration_with_days(tmp_path):
    from watcher.config import config_from_dict

    config = config_from_dict({"store": {"retention": "30d"}}, base_dir=tmp_path, source="t")
    assert config.store.retention == 30 * 86400
    assert config_from_dict({}, base_dir=tmp_path, source="t").store.retention == 365 * 86400


# ---- constant cost per event ----------------------------------------------------------------
# Counted in work the database does, not timed: a timing compares two moments of a machine
# that may be busy (speed is measured in bench/).

def add_work(store: Store, first: int, count: int) -> float | None:
    """SQLite virtual-machine steps per event added (the embedded store); None on a server,
    whose work is not counted from here."""
    connection = getattr(store.db, "connection", None)
    steps = 0

    def step() -> int:
        nonlocal steps
        steps += 1
        return 0  # go on

    counted = isinstance(connection, sqlite3.Connection)
    if counted:
        connection.set_progress_handler(step, 1)
    try:
        for n in range(first, first + count):
            store.add_event(an_event(n), ["slack", "log"], NOW, ["weekly"])
    finally:
        if counted:
            connection.set_progress_handler(None, 1)
    return steps / count if counted else None


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_adding_an_event_does_not_get_dearer_as_events_pile_up(store, monkeypatch):
    """Schema 1 rewrote a queue per event, 3x dearer with a few thousand queued. Now an event
    is a few row inserts (B-tree seeks: depth, not size), on either backend."""
    statements: list[str] = []
    for name in ("execute", "executemany"):
        run = getattr(store.db, name)
        monkeypatch.setattr(store.db, name, lambda sql, *rest, run=run: (
            statements.append(" ".join(sql.split()[:2]).upper()), run(sql, *rest))[1])
    small = add_work(store, 1000, 100)
    add_work(store, 10_000, 3000)
    large = add_work(store, 20_000, 100)
    assert set(statements) <= {"INSERT INTO"}, set(statements)
    if small is not None:
        assert large is not None and large < 1.25 * small, (small, large)
