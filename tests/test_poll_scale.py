"""A poll at scale: one store transaction when nothing changed, one repo's releases in memory at
a time, and `status` reading per repo and per pending delivery, never the whole history."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import TOKEN

from watcher.app import Dependencies, Runtime, build_runtime
from watcher.config import Secrets, load_config
from watcher.health import collect
from watcher.poller import Poller


def runtime_for(config_path: Path, clock) -> Runtime:
    deps = Dependencies(stdout=io.StringIO(), sleep=clock.sleep, clock=clock, epoch=clock.epoch,
                        secrets=Secrets(GITHUB_TOKEN=TOKEN))
    return build_runtime(load_config(config_path), deps)


def statements(runtime: Runtime) -> list[str]:
    seen: list[str] = []
    runtime.store.db.connection.set_trace_callback(seen.append)
    return seen


def test_a_no_change_poll_is_one_transaction_moving_only_timestamps(fake_github, write_config,
                                                                      clock):
    names = tuple(f"org/repo-{n}" for n in range(12))
    for name in names:
        fake_github.add_release(name, tag="v1", body="- a (#1)")
    runtime = runtime_for(write_config(repos=names), clock)
    try:
        poller = runtime.poller
        poller.poll(poller.watched()[0])
        seen = statements(runtime)
        report = poller.poll(poller.watched()[0])
        assert all(outcome.not_modified for outcome in report.outcomes)
        writes = [s for s in seen if not s.startswith(("SELECT", "PRAGMA"))]
        assert writes[0] == "BEGIN IMMEDIATE" and writes[-1] == "COMMIT"
        assert "BEGIN IMMEDIATE" not in writes[1:]  # one transaction
        # One prepared statement moves every repo's timestamps; nothing else is written.
        assert {w.split(" = ")[0] for w in writes[1:-1]} == {"UPDATE rw_repo SET last_poll"}
    finally:
        runtime.close()


def test_a_no_change_poll_leaves_diskcache_closed(fake_github, write_config, clock):
    """Only PR labels and notifiers' memory live in diskcache; a poll that finds nothing new
    needs neither, so it pays neither diskcache's import nor its opening writes."""
    fake_github.add_release("org/repo-0", tag="v1", body="- a (#1)")
    config = write_config(repos=("org/repo-0",))
    first = runtime_for(config, clock)
    try:
        first.poller.poll(first.poller.watched()[0])
        assert first.store.keys is not None and first.store.keys.opened  # labels looked up
    finally:
        first.close()
    again = runtime_for(config, clock)
    try:
        report = again.poller.poll(again.poller.watched()[0])
        assert all(outcome.not_modified for outcome in report.outcomes)
        assert again.store.keys is not None and not again.store.keys.opened
    finally:
        again.close()


def test_a_poll_fetches_only_a_bounded_window_ahead_of_what_it_records(fake_github,
                                                                       write_config, clock):
    names = tuple(f"org/repo-{n}" for n in range(40))
    for name in names:
        fake_github.add_release(name, tag="v1", body="- a (#1)")
    runtime = runtime_for(write_config(repos=names, github="concurrency = 3"), clock)
    fetched: list[str] = []
    ahead: list[int] = []
    original = Poller._fetch

    def counting_fetch(self, repo, etags):
        fetched.append(repo.name)
        return original(self, repo, etags)

    try:
        runtime.poller._fetch = counting_fetch.__get__(runtime.poller)  # type: ignore[method-assign]
        done: list[str] = []

        def seen(outcome, events):
            done.append(outcome.repo)
            ahead.append(len(fetched) - len(done))

        runtime.poller.poll(runtime.poller.watched()[0], on_events=seen)
    finally:
        runtime.close()
    assert len(done) == 40 and max(ahead) <= 2 * 3  # never more than 2 x concurrency ahead


@pytest.mark.parametrize("stored", [10, 1000])
def test_status_reads_do_not_grow_with_stored_events(tmp_path, write_config, clock, stored):
    from datetime import UTC, datetime

    from watcher.delivery.events import make_event
    from watcher.models import Release

    runtime = runtime_for(write_config(), clock)
    store = runtime.store
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with store.transaction():
        for n in range(stored):
            event = make_event("published", "o/r", Release(id=n, tag_name="v"), f"{n:064x}",
                               [], now)
            store.add_event(event, [], now)
    seen = statements(runtime)
    try:
        collect(runtime.config, store)
    finally:
        runtime.close()
    assert not any("rw_event" in statement for statement in seen)
    assert len(seen) < 30  # a few per repo (2 here) and per queue, whatever is stored
