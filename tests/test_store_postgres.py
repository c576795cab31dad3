"""The store on a real PostgreSQL server: its versioned schema, its errors (never the password),
the leader's lease and its fencing token, and deliveries claimed row by row."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime

import psycopg
import pytest

from watcher.delivery.events import make_event
from watcher.errors import StoreError
from watcher.models import Release
from watcher.store import Deposed, Store
from watcher.store.pg_schema import SCHEMA_VERSION, TABLES

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def an_event(n: int = 1):
    return make_event("published", "o/r", Release(id=n, tag_name=f"v{n}", body="- a"),
                      f"{n:064x}", [], NOW)


def sql(url: str, statement: str, params: tuple = ()) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as connection:
        cursor = connection.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def lapse(url: str) -> None:
    """The lease's expiry moved into the past: what a lease's worth of time does."""
    sql(url, "UPDATE rw_lease SET expires = clock_timestamp() - interval '1 second'")


# ---- the schema -------------------------------------------------------------------------------

def test_a_new_database_gets_every_table_and_the_schema_version(postgres_url):
    Store.connect(postgres_url).close()
    assert sql(postgres_url, "SELECT value FROM rw_meta WHERE key = 'schema'") == [
        (str(SCHEMA_VERSION),)]
    names = {row[0] for row in sql(postgres_url, "SELECT tablename FROM pg_tables "
                                                 "WHERE schemaname = 'public'")}
    assert names >= TABLES and {"rw_kv", "rw_lease"} <= names


def test_replicas_opening_a_new_database_at_once_create_it_once(postgres_url):
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            Store.connect(postgres_url).close()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sql(postgres_url, "SELECT count(*) FROM rw_meta") == [(1,)]


def test_a_newer_schema_is_refused_clearly(postgres_url):
    Store.connect(postgres_url).close()
    sql(postgres_url, "UPDATE rw_meta SET value = %s WHERE key = 'schema'",
        (str(SCHEMA_VERSION + 1),))
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}; this "):
        Store.connect(postgres_url)


def test_read_only_finds_no_store_in_an_empty_database(postgres_url):
    with pytest.raises(StoreError, match="holds no store yet"):
        Store.connect(postgres_url, read_only=True)


def test_an_unreachable_server_is_one_line_without_the_password(tmp_path):
    url = f"postgresql://rw:s3cr3t-pass@/db?host={tmp_path}&port=1"
    with pytest.raises(StoreError) as caught:
        Store.connect(url)
    message = str(caught.value)
    assert "s3cr3t-pass" not in message and "cannot reach the store" in message
    assert "\n" not in message and "***" in message


# ---- the lease and its fencing token ------------------------------------------------------------

def test_one_holder_at_a_time_and_a_new_term_takes_the_next_token(postgres_url):
    store = Store.connect(postgres_url)
    first, second = store.lease("a", 15), store.lease("b", 15)
    assert first is not None and second is not None
    assert first.acquire() == 1 and second.acquire() is None
    assert first.acquire() == 1  # renewed: the same term
    first.release()
    assert second.acquire() == 2 and first.acquire() is None
    lapse(postgres_url)
    assert second.acquire() == 3  # its own lease lapsed: a new term, even for the same holder
    for lease in (first, second):
        lease.close()
    store.close()


def test_a_deposed_leaders_late_write_is_refused_and_rolled_back(postgres_url):
    store = Store.connect(postgres_url)
    lease, other = store.lease("a", 15), store.lease("b", 15)
    assert lease is not None and other is not None
    token = lease.acquire()
    store.fenced_by(lambda: token)
    assert store.add_event(an_event(1), ["slack"], NOW)  # under the current token
    delivery = store.pending_deliveries()[0]
    lapse(postgres_url)
    assert other.acquire() == 2  # a standby took over
    with pytest.raises(Deposed, match="no longer leads"):
        store.delivered(delivery)
    with pytest.raises(Deposed):
        store.add_event(an_event(2), ["slack"], NOW)
    assert [d.id for d in store.pending_deliveries()] == [delivery.id]
    assert not store.has_event(an_event(2).id)
    store.fenced_by(lambda: 2)  # the new leader's writes go through
    store.delivered(delivery)
    assert store.pending_count() == 0
    lease.close()
    other.close()
    store.close()


def test_a_lapsed_lease_fences_writes_even_before_another_replica_takes_it(postgres_url):
    """Its token is still the newest, but the server's clock says it expired: a leader that
    believes it still leads (a stalled process waking up) writes nothing."""
    store = Store.connect(postgres_url)
    lease = store.lease("a", 15)
    assert lease is not None
    token = lease.acquire()
    store.fenced_by(lambda: token)
    lapse(postgres_url)
    with pytest.raises(Deposed):
        store.add_event(an_event(1), ["slack"], NOW)
    assert not store.has_event(an_event(1).id)
    lease.close()
    store.close()


# ---- delivery claims -------------------------------------------------------------------------

AT_ONCE = 5.0  # seconds: a claim skips a held row in milliseconds, even on a loaded machine


def claims_at_once(store: Store, deliveries: list, holder: psycopg.Connection) -> list[bool]:
    """``store``'s claims of ``deliveries``, made on a thread that must be done within
    ``AT_ONCE`` while ``holder`` keeps its row locks. A claim that waits for a held row (its
    query lost ``SKIP LOCKED``) fails the test then, by name, instead of hanging on it: the
    holder lets go, so the thread ends."""
    answers: list[bool] = []
    thread = threading.Thread(target=lambda: answers.extend(store.claim(d) for d in deliveries),
                              name="claimer", daemon=True)
    thread.start()
    thread.join(AT_ONCE)
    waited = thread.is_alive()
    if waited:
        holder.rollback()
        thread.join()
    assert not waited, f"a claim waited {AT_ONCE:.0f}s for a row another process holds"
    return answers


def test_a_delivery_another_process_holds_is_skipped_without_waiting(postgres_url):
    """Two claimers never wait on one another: while another process holds one delivery's row
    (``FOR UPDATE``, as its claim does), this one's claim of that delivery is False at once,
    and the other deliveries are its to claim."""
    store = Store.connect(postgres_url)
    store.add_event(an_event(1), ["slack"], NOW)
    store.add_event(an_event(2), ["slack"], NOW)
    held, free = store.pending_deliveries()
    with psycopg.connect(postgres_url) as other:
        other.execute("SELECT 1 FROM rw_delivery WHERE id = %s FOR UPDATE", (held.id,))
        assert claims_at_once(store, [held, free], other) == [False, True]
    assert store.claim(held) is True  # let go: now this process's
    store.delivered(held)
    assert store.claim(held) is False  # gone: sent meanwhile
    store.close()


def test_a_claim_left_by_an_earlier_term_is_taken_over_and_said(postgres_url, caplog):
    store = Store.connect(postgres_url)
    store.add_event(an_event(1), ["slack"], NOW)
    delivery = store.pending_deliveries()[0]
    lease = store.lease("a", 15)
    assert lease is not None and lease.acquire() == 1
    store.fenced_by(lambda: 1)
    assert store.claim(delivery)
    lapse(postgres_url)
    assert lease.acquire() == 2
    store.fenced_by(lambda: 2)
    with caplog.at_level(logging.WARNING):
        assert store.claim(delivery)
    assert "claimed by an earlier leader (term 1)" in caplog.text
    assert sql(postgres_url, "SELECT claim FROM rw_delivery") == [(2,)]
    lease.close()
    store.close()


def test_a_lease_whose_connection_the_server_dropped_says_so_then_renews_on_a_new_one(
        postgres_url):
    """What a pool recycling the connection, or a server restart, does to the holder: its next
    renewal fails in one line (the leader then runs on what is left of its lease), the one
    after reconnects and finds the lease still its own, in the same term."""
    store = Store.connect(postgres_url)
    lease = store.lease("a", 15)
    assert lease is not None and lease.acquire() == 1
    pid = lease.db.connection.info.backend_pid
    sql(postgres_url, "SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(StoreError, match="the store postgresql://") as caught:
        lease.acquire()
    assert "\n" not in str(caught.value)
    assert lease.acquire() == 1
    assert lease.db.connection.info.backend_pid != pid
    lease.close()
    store.close()
