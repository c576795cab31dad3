"""``/metrics`` over HTTP while the daemon polls the fake GitHub and delivers to the fake Slack:
each figure moves when what it counts happens, labels come from bounded sets only, and a run
without a listener never loads prometheus_client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SLACK_TOKEN, release_notes
from fakes.github import Scripted
from fakes.slack import Scripted as SlackScripted
from prometheus_client import generate_latest
from server_support import LISTEN, Served, value

from watcher.config import load_config
from watcher.metrics import Metrics
from watcher.server import PrometheusMetrics

SLACK = (
    '[[notifiers]]\nname = "releases"\ntype = "slack"\nchannel = "#releases"\n'
    'min_interval = "0s"\nretries = 0\n'
)
JSONL = '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'
LABELS = {"repo", "outcome", "endpoint", "status", "event", "kind", "notifier", "root", "le"}


@pytest.fixture
def served(write_config, clock, fake_github, fake_slack):
    made: list[Served] = []

    def serve(
        notifiers: str = JSONL, extra: str = "", repos=("pytorch/xla",), github: str = ""
    ) -> Served:
        config = write_config(
            LISTEN + extra,
            repos=repos,
            notifiers=notifiers,
            slack_url=fake_slack.api_url,
            github=github,
        )
        made.append(Served(config, clock, {"SLACK_BOT_TOKEN": SLACK_TOKEN}))
        return made[-1]

    yield serve
    for server in made:
        server.close()


def test_polls_requests_rate_limit_and_events_are_counted(served, fake_github, clock):
    fake_github.set_token(None)
    body = release_notes("xla/v2.0.0.md")
    fake_github.add_release("pytorch/xla", tag="v2.0.0", body=body)
    server = served()
    before = server.metrics()
    assert (
        value(before, "release_watch_polls_total", repo="pytorch/xla", outcome="changed") is None
    )  # nothing polled yet
    server.poll()
    first = server.metrics()
    assert value(first, "release_watch_polls_total", repo="pytorch/xla", outcome="changed") == 1
    assert (
        value(first, "release_watch_last_successful_poll_timestamp_seconds", repo="pytorch/xla")
        == clock.now.timestamp()
    )
    assert value(first, "release_watch_github_requests_total", endpoint="rest", status="200") >= 1
    assert value(first, "release_watch_github_rate_limit_remaining") == fake_github.rate_remaining
    assert value(first, "release_watch_github_rate_limit") == fake_github.rate_limit
    assert value(first, "release_watch_events_total", event="published") == 1
    (event,) = [
        json.loads(line)
        for line in (server.daemon.config.base_dir / "events.jsonl").read_text().splitlines()
    ]
    by_kind = {
        dict(labels)["kind"]: v
        for (name, labels), v in first.items()
        if name == "release_watch_event_items_total"
    }
    assert by_kind == event["summary"]["by_kind"] and sum(by_kind.values()) == len(event["items"])
    assert value(first, "release_watch_poll_duration_seconds_count") == 1

    clock.sleep(600)
    server.poll()  # nothing changed: a 304
    second = server.metrics()
    assert value(second, "release_watch_polls_total", repo="pytorch/xla", outcome="unchanged") == 1
    assert value(second, "release_watch_github_requests_total", endpoint="rest", status="304") == 1
    assert (
        value(second, "release_watch_last_successful_poll_timestamp_seconds", repo="pytorch/xla")
        == clock.now.timestamp()
    )
    assert value(second, "release_watch_events_total", event="published") == 1
    assert value(second, "release_watch_poll_duration_seconds_count") == 2


def test_a_failing_repo_is_counted_and_keeps_its_last_success(served, fake_github, clock):
    fake_github.set_token(None)
    fake_github.add_release("pytorch/xla", tag="v1", body="- Fix (#1)")
    server = served(github="retries = 1")
    server.poll()
    succeeded = clock.now.timestamp()
    clock.sleep(600)
    fake_github.script("/repos/pytorch/xla/releases", *[Scripted.server_error(502)] * 2)
    server.poll()
    samples = server.metrics()
    assert value(samples, "release_watch_polls_total", repo="pytorch/xla", outcome="failed") == 1
    assert value(samples, "release_watch_github_requests_total", endpoint="rest", status="502") == 2
    assert (
        value(samples, "release_watch_last_successful_poll_timestamp_seconds", repo="pytorch/xla")
        == succeeded
    )


@pytest.mark.slow
def test_a_restart_into_an_outage_still_shows_the_stored_last_success(served, fake_github, clock):
    """The gauge is the store's: after a restart, before any poll and after a failing one,
    it says when the repo last succeeded, so "no successful poll for 30 minutes" can fire."""
    fake_github.set_token(None)
    fake_github.add_release("pytorch/xla", tag="v1", body="- Fix (#1)")
    first = served(github="retries = 1")
    first.poll()
    succeeded = clock.now.timestamp()
    first.close()
    clock.sleep(3600)
    restarted = served(github="retries = 1")
    name = "release_watch_last_successful_poll_timestamp_seconds"
    assert value(restarted.metrics(), name, repo="pytorch/xla") == succeeded
    fake_github.script("/repos/pytorch/xla/releases", *[Scripted.server_error(502)] * 2)
    restarted.poll()
    samples = restarted.metrics()
    assert value(samples, "release_watch_polls_total", repo="pytorch/xla", outcome="failed") == 1
    assert value(samples, name, repo="pytorch/xla") == succeeded


def test_a_repo_a_reload_removes_stops_being_exported(served, fake_github, clock, write_config):
    fake_github.set_token(None)
    for repo in ("pytorch/xla", "pytorch/vision"):
        fake_github.add_release(repo, tag="v1", body="- Fix (#1)")
    server = served(repos=("pytorch/xla", "pytorch/vision"))
    server.poll()
    before = server.metrics()
    for repo in ("pytorch/xla", "pytorch/vision"):
        assert value(before, "release_watch_polls_total", repo=repo, outcome="changed") == 1
        assert (
            value(before, "release_watch_last_successful_poll_timestamp_seconds", repo=repo)
            == clock.now.timestamp()
        )
    path = write_config(LISTEN, repos=("pytorch/xla",), notifiers=JSONL)
    assert server.daemon.reload(lambda: load_config(path))  # SIGHUP
    after = server.metrics()
    assert {dict(labels).get("repo") for _, labels in after} - {None} == {"pytorch/xla"}
    assert value(after, "release_watch_polls_total", repo="pytorch/xla", outcome="changed") == 1
    metrics = server.daemon.service.metrics
    assert isinstance(metrics, PrometheusMetrics)
    assert metrics.render() == generate_latest(metrics.registry)
    clock.sleep(600)
    server.poll()
    again = server.metrics()
    assert value(again, "release_watch_polls_total", repo="pytorch/xla", outcome="unchanged") == 1
    assert (
        value(again, "release_watch_polls_total", repo="pytorch/vision", outcome="changed") is None
    )


def test_deliveries_sent_failed_and_pending_follow_the_outbox(
    served, fake_github, fake_slack, clock
):
    fake_github.set_token(None)
    fake_github.add_release("pytorch/xla", tag="v1", body="- Fix a crash (#1)")
    server = served(notifiers=SLACK)
    fake_slack.script("/api/chat.postMessage", SlackScripted.server_error())
    server.poll()
    failed = server.metrics()
    assert (
        value(failed, "release_watch_deliveries_total", notifier="releases", outcome="failed") == 1
    )
    assert (
        value(failed, "release_watch_deliveries_total", notifier="releases", outcome="sent") is None
    )
    assert value(failed, "release_watch_deliveries_pending", notifier="releases") == 1
    assert (
        value(
            failed, "release_watch_delivery_oldest_pending_timestamp_seconds", notifier="releases"
        )
        == clock.now.timestamp()
    )
    server.job("deliver")  # the retry job: Slack answers now
    sent = server.metrics()
    assert value(sent, "release_watch_deliveries_total", notifier="releases", outcome="sent") == 1
    assert value(sent, "release_watch_deliveries_pending", notifier="releases") == 0
    assert (
        value(sent, "release_watch_delivery_oldest_pending_timestamp_seconds", notifier="releases")
        is None
    )
    assert value(sent, "release_watch_delivery_duration_seconds_count", notifier="releases") == 2
    assert len(fake_slack.messages) == 1


def test_a_digest_notifier_s_queue_is_a_gauge_read_from_the_store(served, fake_github, clock):
    """What a digest notifier holds for its next digest is pending work too: counted from the
    store's queue, and back to 0 once the digest went out."""
    fake_github.set_token(None)
    fake_github.add_repo("pytorch/xla")
    server = served(notifiers=JSONL + '\n[[notifiers]]\nname = "weekly"\ntype = "jsonl"\n'
                    'path = "weekly.jsonl"\nmode = "digest"\n'
                    'digest_schedule = "0 9 * * MON"\n')
    server.poll()  # the baseline: nothing announced, nothing queued
    assert value(server.metrics(), "release_watch_digest_queued_events", notifier="weekly") == 0
    fake_github.add_release("pytorch/xla", tag="v1", body="- Fix a crash (#1)")
    fake_github.add_release("pytorch/xla", tag="v2", body="- Fix a hang (#2)")
    clock.sleep(600)
    server.poll()
    queued = server.metrics()
    assert value(queued, "release_watch_digest_queued_events", notifier="weekly") == 2
    assert value(queued, "release_watch_digest_queued_events", notifier="log") is None
    server.job("digest:weekly")
    assert value(server.metrics(), "release_watch_digest_queued_events", notifier="weekly") == 0


def test_the_impact_scan_reports_its_files_and_seconds(served, fake_github, tmp_path):
    fake_github.set_token(None)
    code = tmp_path / "trainer"
    code.mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (code / name).write_text("import torch\nstate = torch.load('x')\n")
    fake_github.add_release(
        "pytorch/pytorch", tag="v2.7.0", body=release_notes("pytorch/v2.7.0.md")
    )
    server = served(extra=f'[impact]\ncode = ["{code}"]\n', repos=("pytorch/pytorch",))
    server.poll()
    samples = server.metrics()
    assert value(samples, "release_watch_impact_scan_files", root=str(code)) == 3
    assert value(samples, "release_watch_impact_scan_duration_seconds", root=str(code)) >= 0


def test_labels_come_from_bounded_sets_never_from_release_text(served, fake_github):
    fake_github.set_token(None)
    fake_github.add_release(
        "pytorch/xla",
        tag="v9.9.9-secret-tag",
        name="Name <b>x</b>",
        body="- Fix the thing everyone hated (#1)",
    )
    server = served()
    server.poll()
    samples = server.metrics()
    names = {name for name, labels in samples for name, _ in labels}
    assert names <= LABELS
    values = {v for _, labels in samples for _, v in labels}
    assert not any("9.9.9" in v or "hated" in v or "<b>" in v for v in values)
    assert all(name.startswith("release_watch_") for name, _ in samples)


def test_the_cached_text_is_what_the_registry_renders(served, fake_github, clock):
    """Each family's text is kept until a hook changes it: it must never lag behind."""
    fake_github.set_token(None)
    fake_github.add_release("pytorch/xla", tag="v1", body="- Fix (#1)")
    server = served()
    metrics = server.daemon.service.metrics
    assert isinstance(metrics, PrometheusMetrics)
    for step in range(3):
        server.poll()
        assert metrics.render() == generate_latest(metrics.registry), step
        fake_github.add_release("pytorch/xla", tag=f"v2.{step}", body=f"- Fix {step} (#{step})")
        clock.sleep(600)


@pytest.mark.slow
def test_without_a_listener_nothing_is_counted_and_prometheus_is_not_loaded(tmp_path):
    from test_lazy_imports import CONSOLE_POLL, run_python

    assert type(Metrics()) is Metrics  # what Dependencies holds by default: a no-op
    result, _ = run_python(
        CONSOLE_POLL,
        tmp_path,
        str(Path(__file__).parent),
        str(tmp_path / "result.json"),
        "prometheus_client",
    )
    assert result["codes"] == [0, 0]
    assert result["loaded"] == []


def test_the_own_formatters_write_what_prometheus_client_writes():
    """``Counts`` and the last-success family format their text themselves: byte for byte
    what ``generate_latest`` makes of the same figures, awkward label values included."""
    from datetime import UTC, datetime

    from watcher.server.repos import LastSuccessCollector
    from watcher.server.text import Counts

    odd = ["pytorch/xla", 'a"quoted"/b', "back\\slash/x", "new\nline/y", "ünï/cödé", ""]
    counts = Counts("release_watch_polls", 'Help with "quotes", \\ and\nlines', ("repo", "outcome"))
    assert counts.render() == generate_latest(counts)  # no sample yet: the head alone
    for index, repo in enumerate(odd):
        counts.inc((repo, "changed"), [1, 999_999, 1_000_000, 123_456_789_012, 0, 7][index])
        counts.inc((repo, "failed"))
    assert counts.render() == generate_latest(counts)
    counts.inc(("pytorch/xla", "changed"))
    assert b'outcome="changed",repo="pytorch/xla"} 2.0\n' in counts.render()
    assert counts.render() == generate_latest(counts)
    assert counts.remove(lambda labels: labels[0] != "pytorch/xla")
    assert counts.render() == generate_latest(counts)

    stamps = [0.0, 1.5, 1764626927.0, 1764626927.123456, 99.0, 1e-7]
    when = {
        repo: datetime.fromtimestamp(stamp, UTC) for repo, stamp in zip(odd, stamps, strict=True)
    }
    config = object()
    collector = LastSuccessCollector(lambda: (config, lambda: odd), lambda repos: when)
    assert collector.render() == generate_latest(collector)
