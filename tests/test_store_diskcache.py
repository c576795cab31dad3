"""The store is a diskcache directory: PR labels and notifiers' memory are diskcache keys beside
the ledger's tables in the same cache.db, diskcache opens only when they are used, and a
schema-2 store (tables only) is upgraded to that layout in one transaction."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import diskcache
import pytest

from watcher.errors import StoreReadOnly
from watcher.store.schema import SCHEMA_VERSION
from watcher.store.store import Store

V2 = Path(__file__).parent / "fixtures" / "store_v2" / "store"
OURS = {"release-watch-store", "daemon.lock", "writer.lock"}  # files diskcache does not know
BIG = {"channel": "C1", "ts": "1.2", "text": "x" * 40_000, "blocks": [], "edits": 0}


def diskcache_problems(path: Path) -> list[str]:
    """What diskcache's own check finds (counts, sizes, value files), but our own files."""
    with diskcache.Cache(str(path)) as cache:
        found = [str(warning.message) for warning in cache.check()]
    return [line for line in found
            if not (line.startswith("unknown file: ") and Path(line[14:]).name in OURS)]


def tables_of(path: Path) -> set[str]:
    with sqlite3.connect(path / "cache.db") as db:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master "
                                             "WHERE type = 'table'")}


# ---- a schema-3 store -----------------------------------------------------------------------

def test_a_new_store_is_a_diskcache_directory_with_the_ledger_beside(tmp_path):
    Store.open(tmp_path / "s").close()
    assert {"Settings", "Cache", "rw_event", "rw_delivery", "rw_meta"} <= tables_of(tmp_path / "s")
    assert "rw_pr_labels" not in tables_of(tmp_path / "s")
    with diskcache.Cache(str(tmp_path / "s")) as cache:  # with no arguments: what we stored
        assert cache.eviction_policy == "none"
        assert cache.sqlite_auto_vacuum == 2  # as the ledger's connection sets it


def test_pr_labels_are_diskcache_keys_both_ways(tmp_path):
    store = Store.open(tmp_path / "s")
    store.put_pr_labels("o/r", {1: ["release notes: fx"], 2: []})
    with diskcache.Cache(str(tmp_path / "s")) as cache:
        assert cache["pr-labels|o/r|1"] == ["release notes: fx"]
        assert cache["pr-labels|o/r|2"] == []  # a PR without labels is known too
        cache["pr-labels|o/r|3"] = ["topic: docs"]
    assert store.pr_labels("o/r", [1, 2, 3, 4]) == {1: ["release notes: fx"], 2: [],
                                                    3: ["topic: docs"]}
    store.close()


def test_a_notifiers_memory_is_a_diskcache_key_and_a_big_one_a_value_file(tmp_path):
    store = Store.open(tmp_path / "s")
    store.remember("slack", "thread:o/r:1", {"channel": "C1", "ts": "1.1"})
    store.remember("slack", "thread:o/r:2", BIG)
    assert store.recall("slack", "thread:o/r:2") == BIG
    assert store.recall("slack", "thread:o/r:3") is None
    assert store.recall("other", "thread:o/r:1") is None  # per notifier
    store.close()
    with diskcache.Cache(str(tmp_path / "s")) as cache:
        assert cache[("memory", "slack", "thread:o/r:1")] == {"channel": "C1", "ts": "1.1"}
    assert list((tmp_path / "s").rglob("*.val"))  # diskcache's own file for a big value
    assert diskcache_problems(tmp_path / "s") == []


def test_diskcache_opens_only_when_a_cached_key_is_used(tmp_path):
    Store.open(tmp_path / "s").close()
    store = Store.open(tmp_path / "s")
    assert store.keys is not None and not store.keys.opened
    store.put_meta("rate_limit", {"remaining": 1})  # ledger reads and writes leave it closed
    assert store.repos() == [] and store.daemon_state() is None
    assert not store.keys.opened
    store.pr_labels("o/r", [1])
    assert store.keys.opened
    store.close()


def test_cached_keys_inside_a_ledger_transaction_are_refused_at_once(tmp_path):
    """diskcache's connection would wait a minute for the lock this thread holds."""
    store = Store.open(tmp_path / "s")
    with store.transaction(), pytest.raises(RuntimeError, match="outside its transactions"):
        store.put_pr_labels("o/r", {1: []})
    with store.transaction(), pytest.raises(RuntimeError):
        store.recall("slack", "k")
    store.close()


def test_another_threads_transaction_only_makes_a_cache_write_wait(tmp_path):
    store = Store.open(tmp_path / "s")
    store.pr_labels("o/r", [1])  # opened
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.transaction():
            entered.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    entered.wait(10)
    writer = threading.Thread(target=store.put_pr_labels, args=("o/r", {1: ["a"]}))
    writer.start()
    writer.join(0.2)
    assert writer.is_alive()  # waiting for the write lock, as another process's write would
    release.set()
    holder.join(10)
    writer.join(10)
    assert store.pr_labels("o/r", [1]) == {1: ["a"]}
    store.close()


def test_a_read_only_store_never_opens_diskcache(tmp_path):
    writer = Store.open(tmp_path / "s")
    writer.put_pr_labels("o/r", {1: ["a"]})
    writer.close()
    reader = Store.open(tmp_path / "s", read_only=True)
    assert reader.keys is None
    assert reader.pr_labels("o/r", [1]) == {} and reader.recall("slack", "k") is None
    with pytest.raises(StoreReadOnly):
        reader.remember("slack", "k", {})
    reader.close()


# ---- store check ----------------------------------------------------------------------------

def test_store_check_counts_diskcache_keys_and_misses_a_lost_value_file(tmp_path):
    store = Store.open(tmp_path / "s")
    store.put_pr_labels("o/r", {1: ["a"]})
    store.remember("slack", "big", BIG)
    store.close()
    reader = Store.open(tmp_path / "s", read_only=True)
    assert reader.integrity() == [] and reader.totals()["diskcache keys"] == 2
    reader.close()
    next((tmp_path / "s").rglob("*.val")).unlink()
    reader = Store.open(tmp_path / "s", read_only=True)
    assert [p.split(" (")[0].split(" ")[-1] for p in reader.integrity()] == ["missing"]
    reader.close()


# ---- the upgrade from schema 2 --------------------------------------------------------------

@pytest.fixture
def v2_store(tmp_path) -> Path:
    """A copy of a store written by the schema-2 code (tests/fixtures/store_v2/make.py)."""
    shutil.copytree(V2, tmp_path / "v2")
    return tmp_path / "v2"


def ledger(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(path / "cache.db") as db:
        names = sorted(name for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'rw_*'"))
        return {name: sorted(db.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
                for name in names}


def test_a_schema_2_store_is_upgraded_with_its_caches_moved_into_diskcache(v2_store):
    before = ledger(v2_store)
    store = Store.open(v2_store)
    assert store.pr_labels("pytorch/pytorch", [1, 2, 3]) == {
        1: ["release notes: distributed (fsdp)"], 2: []}
    assert store.pr_labels("pytorch/xla", [5]) == {5: ["release notes: xla"]}
    assert store.recall("slack", "thread:pytorch/pytorch:2")["ts"] == "1700000000.000100"
    assert store.recall("slack", "thread:pytorch/xla:3")["text"] == "x" * 40_000
    assert [d.notifier for d in store.pending_deliveries()] == ["slack", "log", "log"]
    assert store.pending_deliveries()[0].progress == {"sent": 1,
                                                      "parent_ts": "1700000000.000100"}
    assert store.digest_delivery("weekly").event_ids == store.digest_queue("weekly")
    assert store.repo_state("pytorch/xla").consecutive_failures == 2
    assert store.daemon_state()["pid"] == 42 and store.meta("rate_limit")["remaining"] == 4990
    assert store.org_state("pytorch")["repos"] == ["pytorch/vision"]
    store.close()
    after = ledger(v2_store)
    assert "rw_pr_labels" not in after  # moved, and the table dropped
    assert [row[0] for row in after["rw_meta"]] == ["daemon", "rate_limit", "schema"]
    assert ("schema", str(SCHEMA_VERSION)) in after["rw_meta"]
    for name in ("rw_repo", "rw_release", "rw_etag", "rw_event", "rw_delivery",
                 "rw_digest_queue", "rw_digest", "rw_org"):
        assert after[name] == before[name], name  # the ledger itself is as it was
    with diskcache.Cache(str(v2_store)) as cache:
        assert len(cache) == 5 and cache["pr-labels|pytorch/pytorch|2"] == []
    assert len(list(v2_store.rglob("*.val"))) == 1  # the big memory, as diskcache keeps it
    assert diskcache_problems(v2_store) == []


def test_a_failed_schema_2_upgrade_leaves_the_store_as_it_was(v2_store, monkeypatch):
    import watcher.store.migrate_v2

    before = ledger(v2_store)
    put = watcher.store.migrate_v2.CacheRows.put

    def broken(self, key, value):
        if key[0] == "memory":  # the PR labels are in diskcache's table by now
            raise RuntimeError("crash half-way")
        return put(self, key, value)

    monkeypatch.setattr(watcher.store.migrate_v2.CacheRows, "put", broken)
    with pytest.raises(RuntimeError):
        Store.open(v2_store)
    assert ledger(v2_store) == before  # every schema-2 table and row, for the schema-2 code
    with diskcache.Cache(str(v2_store)) as cache:
        assert len(cache) == 0  # diskcache's tables were made; what moved in, rolled back
    monkeypatch.undo()
    store = Store.open(v2_store)  # and the next open upgrades it
    assert store.pr_labels("pytorch/xla", [5]) == {5: ["release notes: xla"]}
    store.close()


def test_a_schema_2_store_is_read_as_it_is_by_a_read_only_open(v2_store):
    before = (v2_store / "cache.db").read_bytes()
    store = Store.open(v2_store, read_only=True)
    assert store.repos() == ["pytorch/pytorch", "pytorch/xla"]
    assert store.pending_count() == 3 and store.integrity() == []
    assert "diskcache keys" not in store.totals()
    store.close()
    assert (v2_store / "cache.db").read_bytes() == before  # not upgraded: status only reads


def test_the_schema_1_upgrade_leaves_diskcache_sound(tmp_path):
    shutil.copytree(V2.parent.parent / "store_v1" / "store", tmp_path / "v1")
    Store.open(tmp_path / "v1").close()
    assert diskcache_problems(tmp_path / "v1") == []


def test_a_store_that_lost_cache_db_is_known_by_diskcaches_value_folders(tmp_path):
    from watcher.errors import StoreError

    store = Store.open(tmp_path / "s")
    store.remember("slack", "big", BIG)
    store.close()
    (tmp_path / "s" / "cache.db").unlink()
    (tmp_path / "s" / "release-watch-store").unlink()  # only diskcache's files are left
    with pytest.raises(StoreError, match="lost its database"):
        Store.open(tmp_path / "s")
    assert not (tmp_path / "s" / "cache.db").exists()
