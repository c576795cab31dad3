"""``release-watch store copy --to URL``: an embedded store moved into PostgreSQL with all it
holds (the outbox with its progress, a digest in flight, subscriptions, cached keys), one line
per table, verified; a second run copies nothing new; another store's database is refused."""

from __future__ import annotations

from datetime import UTC, datetime

from watcher.delivery.events import make_event
from watcher.models import Release
from watcher.store import Store, Subscription

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def an_event(n: int):
    return make_event("published", "o/r", Release(id=n, tag_name=f"v{n}", body="- a"),
                      f"{n:064x}", [], NOW)


def fill(path) -> Subscription:
    store = Store.open(path)
    sub = store.add_subscription(Subscription(channel="C9", created_at=NOW))
    for n in (1, 2, 3):
        store.add_event(an_event(n), ["slack", sub.notifier_name], NOW, ["weekly"])
    first = store.pending_deliveries()[0]
    store.delivered(first)
    store.save_progress(store.pending_deliveries()[0].id, {"sent": 2, "parent_ts": "1.5"})
    store.start_digest("weekly", NOW)  # in flight: events 1-3
    store.add_event(an_event(4), [], NOW, ["weekly"])  # queued after it
    store.put_etags({"https://api/x?page=1": '"e1"'}, last_pages=["https://api/x?page=1"])
    store.put_pr_labels("o/r", {7: ["release notes: fx"]})
    store.remember("slack", "thread:o/r:1", {"channel": "C1", "ts": "1.5"})
    store.put_daemon_state({"pid": 5})
    store.close()
    return sub


def test_a_copy_moves_everything_and_a_second_copies_nothing_new(run_cli, write_config,
                                                                  tmp_path, postgres_url):
    sub = fill(tmp_path / "store")
    config = write_config()
    before = Store.open(tmp_path / "store", read_only=True)
    pending = before.pending_deliveries()
    before.close()

    first = run_cli("--config", str(config), "store", "copy", "--to", postgres_url)
    assert first.code == 0, first.stderr
    lines = first.stdout.splitlines()
    assert "rw_event: 4 rows, 4 copied, 0 there already; verified" in lines
    assert "rw_delivery: 5 rows, 5 copied, 0 there already; verified" in lines
    assert "rw_kv (diskcache keys): 2 rows, 2 copied, 0 there already; verified" in lines
    assert lines[-1].startswith("copied ") and "nothing new" not in lines[-1]

    again = run_cli("--config", str(config), "store", "copy", "--to", postgres_url)
    assert again.code == 0 and again.stdout.splitlines()[-1].endswith("(nothing new)")
    assert "rw_event: 4 rows, 0 copied, 4 there already; verified" in again.stdout

    copied = Store.connect(postgres_url)
    try:
        assert copied.pending_deliveries() == pending
        assert copied.pending_deliveries()[0].progress == {"sent": 2, "parent_ts": "1.5"}
        in_flight = copied.digest_delivery("weekly")
        assert in_flight is not None and in_flight.event_ids == [an_event(n).id
                                                                 for n in (1, 2, 3)]
        assert copied.digest_queue("weekly")[-1] == an_event(4).id
        assert [s.id for s in copied.subscriptions()] == [sub.id]
        assert copied.pr_labels("o/r", [7]) == {7: ["release notes: fx"]}
        assert copied.recall("slack", "thread:o/r:1") == {"channel": "C1", "ts": "1.5"}
        assert copied.last_pages(["https://api/x?page=1"]) == {"https://api/x?page=1"}
        assert copied.daemon_state() == {"pid": 5}
        # New rows number on after the copied ones.
        assert copied.add_event(an_event(5), ["slack"], NOW, ["weekly"])
        assert copied.pending_deliveries()[-1].event_id == an_event(5).id
        assert copied.add_subscription(Subscription(channel="C2", created_at=NOW)).id > sub.id
    finally:
        copied.close()


def test_a_database_holding_another_store_is_refused(run_cli, write_config, tmp_path,
                                                     postgres_url):
    fill(tmp_path / "store")
    other = Store.connect(postgres_url)
    other.add_event(an_event(99), ["slack"], NOW)
    other.close()
    result = run_cli("--config", str(write_config()), "store", "copy", "--to", postgres_url)
    assert result.code == 1
    assert "never had (1): it is another store" in result.stderr


def test_copy_needs_a_postgresql_url_and_never_prints_its_password(run_cli, write_config,
                                                                   tmp_path):
    fill(tmp_path / "store")
    config = write_config()
    assert run_cli("--config", str(config), "store", "copy").code == 2  # no URL at all
    result = run_cli("--config", str(config), "store", "copy", "--to",
                     f"postgresql://rw:hunter2-secret@/db?host={tmp_path}&port=1")
    assert result.code == 1 and "cannot reach the store" in result.stderr
    assert "hunter2-secret" not in result.stderr + result.stdout
