"""`release-watch run` as a real process and the signals it gets: SIGTERM in the middle of a
long Slack thread (no new post starts), SIGHUP (the configuration is read again)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter

import pytest
from conftest import release_notes
from daemon_support import CEILING, Daemon, daemon_config, environment, wait_for
from fakes.slack import Scripted as SlackScripted
from test_daemon import daemon_idle, expected, parents  # noqa: F401 - `expected`: a fixture

# Real daemon processes, end to end: slow, and waiting on them (daemon_support.CEILING)
# may take a loaded machine longer than the usual deadline.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

XLA = release_notes("xla/v2.0.0.md")
V28 = release_notes("pytorch/v2.8.0.md")
POSTS = "/api/chat.postMessage"


def pending_deliveries(config) -> int:
    result = subprocess.run([sys.executable, "-m", "watcher", "--config", str(config), "status",
                             "--json"], capture_output=True, text=True, env=environment(),
                            timeout=CEILING)
    return int(json.loads(result.stdout)["pending_deliveries"])


def test_after_sigterm_no_new_post_starts_and_a_restart_sends_the_rest_once(
        fake_github, fake_slack, tmp_path, expected):  # noqa: F811 - the fixture imported
    """Slack answers each post after 1 s and a release's thread is many posts. SIGTERM while
    the first is under way: that one finishes, no other starts, the process exits 0 (not when
    the thread is done, nor at the 20 s shutdown_timeout, which exits 1 with a warning), and
    the delivery stays queued with its progress, so a restart posts the rest with nothing
    twice. Every check is a condition, not a duration: a loaded machine only makes it slower."""
    fake_github.add_release("pytorch/pytorch", tag="v2.8.0", name="PyTorch 2.8.0", body=V28)
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = daemon_config(tmp_path / "rw.toml", fake_github.url, fake_slack.api_url,
                           repos=("pytorch/pytorch", "pytorch/xla"), shutdown_timeout="20s")
    fake_slack.script(POSTS, *[SlackScripted(delay=1.0)] * 200)
    slow = Daemon(config)
    try:
        wait_for(lambda: fake_slack.requests_to(POSTS), what="the first post to be under way")
        slow.process.send_signal(signal.SIGTERM)
        started = len(fake_slack.requests_to(POSTS))
        code = slow.wait()
    finally:
        slow.kill()
    assert code == 0, slow.log  # the post in flight finished: no shutdown_timeout reached
    assert "poll.shutdown_timeout" not in slow.log
    assert len(fake_slack.requests_to(POSTS)) == started  # none began after the signal
    assert started < sum(expected.values())  # the thread was not done
    assert "stays queued and resumes on the next run" in slow.log
    assert "attempt" not in slow.log and "Traceback" not in slow.log  # not counted a failure
    assert pending_deliveries(config) >= 1
    fake_slack.unscript(POSTS)
    daemon = Daemon(config)
    try:
        wait_for(lambda: len(parents(fake_slack)) >= 2 and daemon_idle(config),
                 what="every delivery after the restart")
    finally:
        assert daemon.terminate() == 0
    delivered = Counter(json.dumps(m.blocks, sort_keys=True) for m in fake_slack.messages)
    assert delivered == expected  # every message, and none twice


def test_sighup_reloads_a_sound_config_and_keeps_the_running_one_on_a_broken_one(
        fake_github, fake_slack, tmp_path):
    fake_github.add_repo("pytorch/xla")
    fake_github.add_repo("pytorch/pytorch")
    path = tmp_path / "rw.toml"
    urls = (fake_github.url, fake_slack.api_url)
    config = daemon_config(path, *urls, repos=("pytorch/xla",))
    daemon = Daemon(config)
    try:
        wait_for(lambda: fake_github.requests_to("/repos/pytorch/xla/releases"),
                 what="the first poll")
        daemon_config(path, *urls, repos=("pytorch/xla", "pytorch/pytorch"))
        daemon.process.send_signal(signal.SIGHUP)
        wait_for(lambda: "configuration reloaded" in daemon.log, what="the reload")
        wait_for(lambda: fake_github.requests_to("/repos/pytorch/pytorch/releases"),
                 what="the repo the reload added to be polled")
        path.write_text(path.read_text() + 'mode = "digest"\ndigest_schedule = "61 9 * * MON"\n')
        daemon.process.send_signal(signal.SIGHUP)
        wait_for(lambda: "configuration not reloaded" in daemon.log, what="the refusal")
        polled = len(fake_github.requests_to("/repos/pytorch/pytorch/releases"))
        wait_for(lambda: len(fake_github.requests_to("/repos/pytorch/pytorch/releases")) > polled,
                 what="polls going on with the running configuration")
        assert daemon.process.poll() is None
    finally:
        code = daemon.terminate()
    assert code == 0
    errors = [line for line in daemon.lines if " error " in line]
    assert len(errors) == 1 and "not valid cron" in errors[0], errors
    assert "reloaded from " in daemon.log and "2 repos every 1s" in daemon.log
