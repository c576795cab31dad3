"""The store: schema versions, transactions, the outbox."""

from __future__ import annotations

from datetime import UTC, datetime

import diskcache
import pytest

from watcher.errors import StoreError
from watcher.events import make_event
from watcher.models import Release
from watcher.store import SCHEMA_VERSION, Store

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def an_event(n: int = 1):
    release = Release(id=n, tag_name=f"v{n}", body="- a")
    return make_event("published", "o/r", release, f"{n:064x}", [], NOW)


def test_new_store_gets_the_schema_version(tmp_path):
    Store.open(tmp_path / "s").close()
    with diskcache.Cache(str(tmp_path / "s")) as cache:
        assert cache[("schema",)] == SCHEMA_VERSION


def test_other_schema_version_is_refused_clearly(tmp_path):
    with diskcache.Cache(str(tmp_path / "s")) as cache:
        cache[("schema",)] = SCHEMA_VERSION + 1
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}"):
        Store.open(tmp_path / "s")


def test_foreign_cache_is_refused(tmp_path):
    with diskcache.Cache(str(tmp_path / "s")) as cache:
        cache["something"] = 1
    with pytest.raises(StoreError, match="no release-watch schema"):
        Store.open(tmp_path / "s")


def test_unopenable_path_is_a_store_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="cannot open the store"):
        Store.open(tmp_path / "file" / "store")


def test_outbox_keeps_order_and_never_queues_an_event_twice(tmp_path):
    store = Store.open(tmp_path / "s")
    assert store.add_event(an_event(1), ["a", "b"], NOW)
    assert store.add_event(an_event(2), ["a"], NOW)
    assert not store.add_event(an_event(1), ["a", "b"], NOW)
    pending = store.pending_deliveries()
    assert [(d.notifier, d.event_id[-1]) for d in pending] == [("a", "1"), ("b", "1"), ("a", "2")]
    store.delivered(pending[0])
    failed = store.delivery_failed(pending[1], "boom", permanent=True)
    assert failed.attempts == 1
    assert [(d.notifier, d.attempts) for d in store.pending_deliveries()] == [("b", 1), ("a", 0)]


def test_a_failed_transaction_writes_nothing(tmp_path):
    store = Store.open(tmp_path / "s")
    with pytest.raises(RuntimeError), store.transaction():
        store.add_event(an_event(1), ["a"], NOW)
        store.put_etags({"u": '"e"'})
        raise RuntimeError("crash in the middle")
    assert store.pending_deliveries() == [] and store.etag("u") is None
    assert not store.has_event(an_event(1).id)
