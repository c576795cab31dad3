"""`release-watch run` as a real process: scheduled polls, clean SIGTERM, one daemon per store,
a manual poll beside it, and SIGKILL at many points without losing or repeating a message."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
from conftest import SLACK_TOKEN, release_notes
from daemon_support import Daemon, daemon_config, environment, wait_for
from fakes.github import FakeGitHub
from fakes.slack import FakeSlack
from fakes.slack import Scripted as SlackScripted

# Real daemon processes, end to end: slow, and waiting on them (daemon_support.CEILING)
# may take a loaded machine longer than the usual deadline.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

XLA = release_notes("xla/v2.0.0.md")
V28 = release_notes("pytorch/v2.8.0.md")


def parents(fake_slack):
    return [m for m in fake_slack.messages if m.thread_ts is None]


def test_daemon_posts_a_new_release_and_stops_cleanly_on_sigterm(fake_github, fake_slack,
                                                                  tmp_path):
    fake_github.add_repo("pytorch/xla")
    config = daemon_config(tmp_path / "rw.toml", fake_github.url, fake_slack.api_url,
                           repos=("pytorch/xla",))
    daemon = Daemon(config)
    try:
        wait_for(lambda: fake_github.requests_to("/repos/pytorch/xla/releases"),
                 what="the first poll")
        fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
        wait_for(lambda: parents(fake_slack), what="the release to be posted")
        started = time.monotonic()
        assert daemon.terminate() == 0
        assert time.monotonic() - started < 5
    finally:
        daemon.kill()
    assert parents(fake_slack)[0].blocks[0]["text"]["text"] == "PyTorch/XLA v2.0 released"
    assert "daemon started" in daemon.log and "daemon stopped" in daemon.log
    # ISO 8601 UTC time, level, logger; the interval as it was written, not 0:00:01.
    assert re.search(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ info watcher\.daemon\.loop: daemon started "
                     r"\(pid \d+\): 1 repo every 1s, ", daemon.log, re.MULTILINE), daemon.log
    status = subprocess.run([sys.executable, "-m", "watcher", "--config", str(config),
                             "status", "--json"], capture_output=True, text=True,
                            env=environment(), timeout=60)
    data = json.loads(status.stdout)
    assert data["daemon"]["next_runs"] and data["repos"][0]["last_success"]


def test_a_second_daemon_on_the_same_store_refuses(fake_github, fake_slack, tmp_path):
    fake_github.add_repo("pytorch/xla")
    config = daemon_config(tmp_path / "rw.toml", fake_github.url, fake_slack.api_url,
                           repos=("pytorch/xla",))
    first = Daemon(config)
    try:
        wait_for(lambda: "daemon started" in first.log, what="the first daemon")
        second = Daemon(config)
        assert second.wait(timeout=30) == 1
        assert "another release-watch daemon" in second.log
        assert second.log.count("\n") == 1
        assert first.process.poll() is None
    finally:
        assert first.terminate() == 0


def test_broken_config_refuses_before_scheduling(tmp_path):
    config = tmp_path / "rw.toml"
    config.write_text('[[notifiers]]\nname = "d"\ntype = "console"\nmode = "digest"\n'
                      'digest_schedule = "61 9 * * MON"\n')
    result = subprocess.run([sys.executable, "-m", "watcher", "--config", str(config), "run"],
                            capture_output=True, text=True, env=environment(), timeout=60)
    assert result.returncode == 2 and "not valid cron" in result.stderr
    assert not (tmp_path / "store").exists()


def test_manual_polls_beside_the_daemon_post_nothing_twice(fake_github, fake_slack, tmp_path):
    fake_github.add_repo("pytorch/pytorch")
    fake_github.add_repo("pytorch/xla")
    config = daemon_config(tmp_path / "rw.toml", fake_github.url, fake_slack.api_url,
                           repos=("pytorch/pytorch", "pytorch/xla"))
    daemon = Daemon(config)
    try:
        wait_for(lambda: len(fake_github.requests) >= 2, what="the baseline poll")
        fake_github.add_release("pytorch/pytorch", tag="v2.8.0", name="PyTorch 2.8.0", body=V28)
        fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
        manual = [subprocess.Popen([sys.executable, "-m", "watcher", "--config", str(config),
                                    "poll"], env=environment(), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True) for _ in range(3)]
        for process in manual:
            assert process.wait(timeout=60) == 0, process.stderr.read()
        wait_for(lambda: len(parents(fake_slack)) >= 2, what="both releases")
        time.sleep(1.5)  # one more daemon poll + retry cycle must add nothing
    finally:
        assert daemon.terminate() == 0
    blocks = Counter(json.dumps(m.blocks, sort_keys=True) for m in fake_slack.messages)
    assert max(blocks.values()) == 1
    assert sorted(m.blocks[0]["text"]["text"] for m in parents(fake_slack)) == [
        "PyTorch 2.8.0 released", "PyTorch/XLA v2.0 released"]


# ---- crash safety -----------------------------------------------------------------------------

WINDOW = {"slack:posted", "deliver:sent"}  # crash between Slack's ok and the store's write
CRASH_POINTS = [
    "poll:fetched:1", "poll:fetched:2", "store:mid-transaction:1", "store:mid-transaction:2",
    "poll:recorded:1", "poll:recorded:2", "deliver:before-send:1", "deliver:before-send:2",
    "slack:posted:1", "slack:posted:2", "slack:posted:4", "slack:posted:7",
    "slack:posted:10", "slack:progress-saved:1", "slack:progress-saved:3",
    "slack:progress-saved:6", "slack:progress-saved:9", "deliver:sent:1", "deliver:sent:2",
    "deliver:marked:1", "deliver:marked:2",
]


def run_scenario(fake_github, fake_slack, tmp_path, crash_at: str | None) -> list[str]:
    fake_github.add_release("pytorch/pytorch", tag="v2.8.0", name="PyTorch 2.8.0", body=V28)
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = daemon_config(tmp_path / "rw.toml", fake_github.url, fake_slack.api_url,
                           repos=("pytorch/pytorch", "pytorch/xla"))
    if crash_at:
        crashed = Daemon(config, RELEASE_WATCH_CRASH_AT=crash_at)
        try:
            assert crashed.wait(timeout=60) == -9, f"{crash_at} was never reached"
        finally:
            crashed.kill()
    daemon = Daemon(config)
    try:
        wait_for(lambda: "daemon started" in daemon.log, what="the daemon to start")
        wait_for(lambda: len(parents(fake_slack)) >= 2 and daemon_idle(config),
                 timeout=60, what="every delivery")
    finally:
        assert daemon.terminate() == 0
    return [json.dumps(m.blocks, sort_keys=True) for m in fake_slack.messages]


def daemon_idle(config) -> bool:
    result = subprocess.run([sys.executable, "-m", "watcher", "--config", str(config), "status",
                             "--json"], capture_output=True, text=True, env=environment(),
                            timeout=60)
    return result.returncode == 0 and json.loads(result.stdout)["pending_deliveries"] == 0


@pytest.fixture(scope="module")
def expected(tmp_path_factory) -> Counter:
    with FakeGitHub() as github, FakeSlack() as slack:
        slack.add_token(SLACK_TOKEN, channels=["#releases"])
        messages = run_scenario(github, slack, tmp_path_factory.mktemp("reference"), None)
    assert len(messages) > 10
    return Counter(messages)


@pytest.mark.parametrize("crash_at", CRASH_POINTS)
def test_sigkill_then_restart_loses_nothing_and_repeats_nothing(fake_github, fake_slack,
                                                                tmp_path, expected, crash_at):
    delivered = Counter(run_scenario(fake_github, fake_slack, tmp_path, crash_at))
    missing = expected - delivered
    extra = delivered - expected
    assert not missing, f"lost {sum(missing.values())} messages"
    if crash_at.rsplit(":", 1)[0] in WINDOW:
        assert sum(extra.values()) <= 1  # the one message in flight at the kill
    else:
        assert not extra, f"{sum(extra.values())} duplicates"


def test_past_shutdown_timeout_the_process_ends_mid_post_and_a_restart_sends_the_rest_once(
        fake_github, fake_slack, tmp_path, expected):
    """Slack answers each post after 4 s; SIGTERM with shutdown_timeout = 2s ends the process
    within 5 s (not after the rest of the thread), exit 1; the outbox is consistent, so a
    restart posts what is left, the post in flight at most twice and nothing else twice."""
    fake_github.add_release("pytorch/pytorch", tag="v2.8.0", name="PyTorch 2.8.0", body=V28)
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = daemon_config(tmp_path / "rw.toml", fake_github.url, fake_slack.api_url,
                           repos=("pytorch/pytorch", "pytorch/xla"), shutdown_timeout="2s")
    fake_slack.script("/api/chat.postMessage", *[SlackScripted(delay=4.0)] * 200)
    slow = Daemon(config)
    try:
        wait_for(lambda: fake_slack.requests_to("/api/chat.postMessage"), timeout=60,
                 what="the first post to be under way")
        signalled = time.monotonic()
        slow.process.send_signal(signal.SIGTERM)
        code = slow.wait(timeout=15)
        gone_after = time.monotonic() - signalled
    finally:
        slow.kill()
    assert code == 1 and gone_after < 5, (code, gone_after)
    assert "exiting now" in slow.log and "Traceback" not in slow.log
    fake_slack.unscript("/api/chat.postMessage")
    daemon = Daemon(config)
    try:
        wait_for(lambda: len(parents(fake_slack)) >= 2 and daemon_idle(config), timeout=60,
                 what="every delivery after the restart")
    finally:
        assert daemon.terminate() == 0
    delivered = Counter(json.dumps(m.blocks, sort_keys=True) for m in fake_slack.messages)
    assert not expected - delivered, "lost messages"
    assert sum((delivered - expected).values()) <= 1  # the one in flight at the deadline
