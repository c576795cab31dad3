"""Costs that must not grow with the work: a digest of a long queue (a parent message per
repository, at most ``digest_max_repos`` of them, the queue read a page at a time), a large
release in Slack (messages packed to Slack's limits, at
most ``max_messages_per_event``), GitHub pacing across processes on one store, and ``status``
with a long outbox (counted in SQL)."""

from __future__ import annotations

import json
import math
import re
import sqlite3
import weakref
from datetime import UTC, datetime

import pytest
from conftest import SLACK_TOKEN, release_notes
from readable import message_text, missing_items, slack_words
from test_pacing import busiest_minute

from watcher.config import load_config
from watcher.delivery.events import make_event
from watcher.health import collect
from watcher.models import EventItem, Release
from watcher.notes.analyze import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy
from watcher.store.records import Delivery
from watcher.store.store import Store

ENV = {"SLACK_BOT_TOKEN": SLACK_TOKEN}
NOW = datetime(2026, 11, 29, tzinfo=UTC)
REPOS = ("pytorch/pytorch", "org/alpha", "org/beta")


def slack_notifier(extra: str = "") -> str:
    return ('[[notifiers]]\nname = "releases"\ntype = "slack"\nchannel = "#releases"\n'
            f'min_interval = "0s"\n{extra}\n')


# ---- 1. a digest of a long queue ----------------------------------------------------------------
def queued_event(n: int):
    repo = REPOS[n % len(REPOS)]
    items = [EventItem(subsystem="distributed" if k % 2 else "cuda",
                       kind="bc_breaking" if n % 10 == 0 and k == 0 else "bug_fix",
                       text=f"Fix case {n}-{k} of the kernel path (#{n * 10 + k})",
                       section=["Bug fixes"], prs=[n * 10 + k]) for k in range(10)]
    release = Release(id=n, tag_name=f"v{n}", html_url=f"https://github.com/{repo}/releases/tag/v{n}")
    return make_event("published", repo, release, f"{n:064x}", items, NOW)


def test_a_long_digest_queue_is_a_parent_per_repo_read_a_page_at_a_time(
        fake_github, fake_slack, write_config, run_cli, tmp_path, monkeypatch):
    import watcher.delivery.deliver as deliver

    config = write_config(notifiers=slack_notifier('mode = "digest"'),
                          slack_url=fake_slack.api_url)
    store = Store.open(tmp_path / "store")
    with store.transaction():
        for n in range(600):
            store.add_event(queued_event(n), [], NOW, ["releases"])
    store.close()
    # Routed events are watched: at no moment may more than a page or two of them be alive.
    monkeypatch.setattr(deliver, "DIGEST_PAGE", 25, raising=False)
    alive, most = [0], [0]
    route = deliver.route

    def gone() -> None:
        alive[0] -= 1

    def watched(event, notifier_config):
        view = route(event, notifier_config)
        if view is not None:
            alive[0] += 1
            most[0] = max(most[0], alive[0])
            weakref.finalize(view, gone)
        return view

    monkeypatch.setattr(deliver, "route", watched)
    result = run_cli("--config", str(config), "digest", env=ENV)
    assert result.code == 0, result.stderr
    assert most[0] <= 50, f"{most[0]} events in memory at once"
    assert all(r.error is None for r in fake_slack.requests)
    parents = [m for m in fake_slack.messages if m.thread_ts is None]
    # one parent per repository however long the queue: the watched one first, then by name
    assert [m.blocks[0]["text"]["text"].split(":")[0] for m in parents] == [
        "pytorch/pytorch", "org/alpha", "org/beta"]
    for parent in parents:
        assert "*200 release events, 2000 changes (20 BC-breaking changes)*" in parent.all_text()
    threads = [fake_slack.thread(parent.ts) for parent in parents]
    assert sum(map(len, threads)) + len(parents) == len(fake_slack.messages)
    shown = [message_text(replies) for replies in threads]
    cases = [set(re.findall(r"Fix case (\d+)-(\d+)", text)) for text in shown]
    assert sum(map(len, cases)) == len(set().union(*cases)) == 200  # digest_max_items in all
    for n, (repo, found) in enumerate(zip(REPOS, cases, strict=True)):
        assert {int(case) % len(REPOS) for case, _ in found} == {n}  # each in its own thread
        # the most important first: every BC-breaking item of each repository is shown
        assert {(str(k), "0") for k in range(n, 600, len(REPOS)) if k % 10 == 0} <= found
        assert f"more changes in {repo}: see the release notes" in shown[n]
        assert f"https://github.com/{repo}/releases|all releases" in shown[n]
    assert sum(map(len, threads)) <= 15


@pytest.mark.slow
def test_a_digest_of_many_repos_stays_a_page_at_a_time_and_bounded_in_posts(
        fake_github, fake_slack, write_config, run_cli, tmp_path, monkeypatch):
    """60 repositories: 20 parents and threads (``digest_max_repos``) and one last message
    for the other 40; the second read, of those 20 repositories' events, pages too."""
    import watcher.delivery.deliver as deliver

    config = write_config(notifiers=slack_notifier('mode = "digest"'),
                          slack_url=fake_slack.api_url)
    store = Store.open(tmp_path / "store")
    with store.transaction():
        for n in range(600):
            repo = f"org/r{n % 60:02d}"
            event = queued_event(n).model_copy(update={
                "repo": repo, "url": f"https://github.com/{repo}/releases/tag/v{n}"})
            store.add_event(event, [], NOW, ["releases"])
    store.close()
    monkeypatch.setattr(deliver, "DIGEST_PAGE", 25, raising=False)
    alive, most, reads = [0], [0], [0]
    route = deliver.route

    def gone() -> None:
        alive[0] -= 1

    def watched(event, notifier_config):
        reads[0] += 1
        view = route(event, notifier_config)
        alive[0] += 1
        most[0] = max(most[0], alive[0])
        weakref.finalize(view, gone)
        return view

    monkeypatch.setattr(deliver, "route", watched)
    assert run_cli("--config", str(config), "digest", env=ENV).code == 0
    assert most[0] <= 50, f"{most[0]} events in memory at once"
    assert reads[0] == 600 + 200  # the queue, then the 20 threaded repositories' events
    assert all(r.error is None for r in fake_slack.requests)
    parents = [m for m in fake_slack.messages if m.thread_ts is None]
    assert len(parents) == 21
    assert parents[-1].blocks[0]["text"]["text"].endswith(": 40 more repositories")
    threads = [message_text(fake_slack.thread(p.ts)) for p in parents[:20]]
    assert len(set(re.findall(r"Fix case (\d+)-(\d+)", "\n".join(threads)))) == 200
    assert len(fake_slack.messages) <= 21 + 30


def test_the_digest_cap_is_the_notifier_s_digest_max_items(fake_github, fake_slack, write_config,
                                                           run_cli, tmp_path):
    config = write_config(notifiers=slack_notifier('mode = "digest"\ndigest_max_items = 15'),
                          slack_url=fake_slack.api_url)
    store = Store.open(tmp_path / "store")
    with store.transaction():
        for n in range(30):
            store.add_event(queued_event(n), [], NOW, ["releases"])
    store.close()
    assert run_cli("--config", str(config), "digest", env=ENV).code == 0
    assert len([m for m in fake_slack.messages if m.thread_ts is None]) == 3  # one per repo
    shown = message_text(m for m in fake_slack.messages if m.thread_ts is not None)
    assert len(set(re.findall(r"Fix case (\d+)-(\d+)", shown))) == 15  # in all, not per repo
    assert "more changes in pytorch/pytorch: see the release notes" in shown


def test_parents_past_digest_max_repos_share_one_last_message(fake_github, fake_slack,
                                                               write_config, run_cli, tmp_path):
    """A digest of many repositories is not a post per repository: the ``digest_max_repos``
    most important get a parent and thread each, in the digest's order; one last message
    names the others with their counts and a link to their releases."""
    config = write_config(notifiers=slack_notifier('mode = "digest"\ndigest_max_repos = 2\n'
                                                   'digest_max_items = 15'),
                          slack_url=fake_slack.api_url)
    store = Store.open(tmp_path / "store")
    with store.transaction():
        for n in range(1, 8):  # org/r1 … org/r7; only r5's events hold a BC-breaking item
            for k in range(n):
                event = queued_event(100 * n + k + (0 if n == 5 else 1))
                event = event.model_copy(update={
                    "repo": f"org/r{n}", "url": f"https://github.com/org/r{n}/releases/tag/v{k}"})
                store.add_event(event, [], NOW, ["releases"])
    # a second read of some repositories' events only: SQLite picks them from the bodies
    upto = store.digest_upto("releases")
    bodies = [json.loads(b) for page in store.digest_pages("releases", upto, 2, {"org/r5"})
              for b in page]
    assert [(b["repo"], b["tag"]) for b in bodies] == [("org/r5", f"v{n}") for n in
                                                       range(500, 505)]
    assert list(store.digest_pages("releases", upto, 2, set())) == []
    store.close()
    assert run_cli("--config", str(config), "digest", env=ENV).code == 0
    assert all(r.error is None for r in fake_slack.requests)
    parents = [m for m in fake_slack.messages if m.thread_ts is None]
    # the item cap is spent on the two threads alone, shared between them
    cases = [set(re.findall(r"Fix case (\d+)-(\d+)", message_text(fake_slack.thread(p.ts))))
             for p in parents[:2]]
    assert sum(map(len, cases)) == 15 and min(map(len, cases)) >= 7
    assert [{int(n) // 100 for n, _ in found} for found in cases] == [{5}, {7}]
    headers = [m.blocks[0]["text"]["text"] for m in parents]
    # the most important: r5 (a BC-breaking change), then the most changes (r7); name order
    assert [h.split(":")[0] for h in headers[:2]] == ["org/r5", "org/r7"]
    assert headers[2].endswith(": 5 more repositories") and len(parents) == 3
    last = parents[2].all_text()
    for n in (1, 2, 3, 4, 6):
        assert (f"• *org/r{n}*: {n} release event{'s' * (n > 1)}, {10 * n} changes: "
                f"<https://github.com/org/r{n}/releases|all releases>") in last
    assert last.index("org/r1") < last.index("org/r6")  # the digest's order
    assert fake_slack.thread(parents[2].ts) == []  # five lines fit in the one message


# ---- 2. a large release in Slack ----------------------------------------------------------------
@pytest.mark.slow
def test_a_large_release_is_packed_to_slacks_limits(fake_github, fake_slack, write_config,
                                                    run_cli):
    body = release_notes("pytorch/v2.5.0.md")  # the most items of the shared releases: 853
    fake_github.add_release("pytorch/pytorch", tag="v2.5.0", name="PyTorch 2.5.0", body=body)
    config = write_config(repos=("pytorch/pytorch",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0
    assert all(r.error is None for r in fake_slack.requests), [r.error for r in fake_slack.requests]
    replies = fake_slack.messages[1:]
    items = Analyzer(builtin_taxonomy()).items(body)
    assert not missing_items(slack_words(message_text(replies)), [i.text for i in items])
    # No message may hold more than Slack takes (the fake's msg_blocks_too_long ceiling), so
    # the thread's block JSON over that ceiling is the fewest replies there can be.
    thread = sum(len(json.dumps(m.blocks, separators=(",", ":"))) for m in replies)
    fewest = 1 + math.ceil(thread / fake_slack.max_blocks_json)
    assert len(fake_slack.messages) <= 1.2 * fewest, (len(fake_slack.messages), fewest)
    assert all(len(m.blocks or []) <= 50 for m in fake_slack.messages)


@pytest.mark.slow
def test_a_release_too_large_for_the_message_cap_counts_the_rest(fake_github, fake_slack,
                                                                 write_config, run_cli):
    body = ("# BC-breaking changes\n## ROCm\n- Drop ROCm 5 support in the kernels (#9)\n"
            "# Bug fixes\n" + "".join(
                f"## {area}\n" + "".join(f"- Fix `{area}` case {n} in the kernel path "
                                         f"(#{n + 10000 * i})\n" for n in range(300))
                for i, area in enumerate(["Distributed", "CUDA", "MPS", "torch.compile"])))
    release = fake_github.add_release("pytorch/pytorch", tag="v9.0", body=body)
    config = write_config(repos=("pytorch/pytorch",),
                          notifiers=slack_notifier("max_messages_per_event = 4"),
                          slack_url=fake_slack.api_url)
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0
    assert all(r.error is None for r in fake_slack.requests)
    assert len(fake_slack.messages) == 4
    shown = message_text(fake_slack.messages[1:])
    assert "Drop ROCm 5 support in the kernels" in shown  # the most important kind first
    last = fake_slack.messages[-1].all_text()
    left = int(re.search(r"…(\d+) more changes not shown here", last).group(1))
    assert f"{release['html_url']}|the full release notes" in last
    fixes = len(re.findall(r"case \d+ in the kernel path", shown))
    assert fixes > 100 and left == 1201 - 1 - fixes  # every item shown whole, or counted


@pytest.mark.slow
def test_an_edit_too_large_for_the_message_cap_counts_the_rest_in_its_thread(
        fake_github, fake_slack, write_config, run_cli):
    release = fake_github.add_release("pytorch/pytorch", tag="v9.0",
                                      body="# Bug fixes\n- Fix the first thing (#1)\n")
    config = write_config(repos=("pytorch/pytorch",),
                          notifiers=slack_notifier("max_messages_per_event = 3"),
                          slack_url=fake_slack.api_url)
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0
    (parent,) = fake_slack.messages
    body = ("# Bug fixes\n- Fix the first thing (#1)\n# BC-breaking changes\n## ROCm\n"
            "- Drop ROCm 5 support in the kernels (#9)\n# Bug fixes\n" + "".join(
                f"## {area}\n" + "".join(f"- Fix `{area}` case {n} in the kernel path "
                                         f"(#{n + 10000 * i + 100})\n" for n in range(300))
                for i, area in enumerate(["Distributed", "CUDA", "MPS"])))
    fake_github.edit_release("pytorch/pytorch", release["id"], body=body)
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0
    assert all(r.error is None for r in fake_slack.requests)
    replies = fake_slack.thread(parent.ts)
    assert len(replies) == 3  # the cap holds for follow-ups too
    shown = message_text(replies)
    assert "Drop ROCm 5 support in the kernels" in shown  # the most important kind first
    left = int(re.search(r"…(\d+) more changes not shown here", shown).group(1))
    fixes = len(re.findall(r"case \d+ in the kernel path", shown))
    assert fixes > 50 and left == 900 - fixes  # every added item shown whole, or counted
    assert f"{release['html_url']}|the full release notes" in shown


# ---- 3. GitHub pacing across processes ----------------------------------------------------------
def test_back_to_back_polls_pace_together(fake_github, write_config, run_cli, clock):
    names = tuple(f"org/repo-{n}" for n in range(10))
    for name in names:
        fake_github.add_repo(name)
    fake_github.clock = clock.epoch  # requests stamped with the test's clock (one at a time)
    config = write_config(repos=names, github="max_requests_per_minute = 7\nconcurrency = 1")
    assert run_cli("--config", str(config), "poll").code == 0  # each run: a new store, pacers
    assert run_cli("--config", str(config), "poll").code == 0
    sent = [r.at for r in fake_github.requests if r.path != "/graphql"]
    assert len(sent) == 20 and busiest_minute(sent) == 7


def test_two_stores_on_one_path_share_the_window(tmp_path):
    first, second = Store.open(tmp_path / "s"), Store.open(tmp_path / "s")
    try:
        assert first.reserve_sends("rest", 100.0, 2, 60.0, 2) == [100.0, 100.0]
        assert second.reserve_sends("rest", 101.0, 2, 60.0) == [160.0]  # after the first's
        assert second.reserve_sends("graphql", 101.0, 2, 60.0) == [101.0]  # counted apart
        assert first.reserve_sends("rest", 161.0, 2, 60.0, 2) == [161.0, 220.0]
    finally:
        first.close()
        second.close()


def test_a_schema_3_store_without_the_pacing_table_gets_it(tmp_path):
    Store.open(tmp_path / "s").close()
    with sqlite3.connect(tmp_path / "s" / "cache.db") as db:
        db.execute("DROP TABLE rw_pace")
    read_only = Store.open(tmp_path / "s", read_only=True)  # reads, creates nothing
    read_only.close()
    with sqlite3.connect(tmp_path / "s" / "cache.db") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert "rw_pace" not in tables and "rw_delivery" in tables
    store = Store.open(tmp_path / "s")
    assert store.reserve_sends("rest", 1.0, 5, 60.0) == [1.0]
    store.close()
    Store.open(tmp_path / "s").close()  # and again: a no-op


# ---- 4. status with a long outbox ---------------------------------------------------------------
def test_status_counts_the_outbox_without_reading_it(write_config, tmp_path, monkeypatch):
    config = load_config(write_config())
    store = Store.open(tmp_path / "store")
    with store.transaction():
        for n in range(300):
            store.add_event(queued_event(n), ["slack", "log"] if n < 100 else ["log"], NOW)
    store.delivery_failed(store.pending_deliveries()[3], "log: disk full", permanent=False)
    parsed = [0]
    validate = Delivery.model_validate_json.__func__  # type: ignore[attr-defined]

    def counted(cls, *args, **kwargs):
        parsed[0] += 1
        return validate(cls, *args, **kwargs)

    monkeypatch.setattr(Delivery, "model_validate_json", classmethod(counted))
    try:
        data = collect(config, store)
    finally:
        store.close()
    assert data["pending_deliveries"] == 400
    assert data["pending_by_notifier"] == {"slack": 100, "log": 300}
    assert list(data["pending_by_notifier"]) == ["slack", "log"]  # outbox order
    assert data["oldest_undelivered"] == {"slack": NOW, "log": NOW}
    (failing,) = data["failing_deliveries"]
    assert failing["notifier"] == "log" and failing["attempts"] == 1
    assert parsed[0] <= 3  # each notifier's oldest and the failing one, not 400
