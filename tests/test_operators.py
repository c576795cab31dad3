"""What an operator meets around the pipeline: a repo that fails every poll turns the health
probe red, ``poll | head`` ends quietly and re-queues nothing, ``status`` knows a stopped
daemon from a running one, and no internet is one line naming the fix."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from conftest import release_notes
from daemon_support import Daemon, daemon_config, environment, wait_for

from watcher.store import Store, daemon_lock

XLA = release_notes("xla/v2.0.0.md")
MISSING = ("pytorch/xlaa: no such repository, or it is private and GITHUB_TOKEN cannot see it")


# -- 9: a repo that fails every poll ------------------------------------------------------------

def test_status_check_goes_red_when_one_repo_fails_its_polls(fake_github, write_config, run_cli,
                                                             clock):
    """A typo'd repo answers 404 for ever while the other keeps the last success fresh: after
    poll.max_failed_polls (3) polls in a row the probe fails, naming the repo and why."""
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = write_config('[poll]\ninterval = "10m"\n', repos=("pytorch/xla", "pytorch/xlaa"))
    for polls in (1, 2, 3):
        assert run_cli("--config", str(config), "poll").code == 1
        probe = run_cli("--config", str(config), "status", "--check")
        assert probe.code == (1 if polls == 3 else 0), (polls, probe.stdout)
        clock.now += timedelta(minutes=1)
    assert ("health: UNHEALTHY: pytorch/xlaa failed 3 polls in a row (poll.max_failed_polls = "
            f"3): {MISSING.split(': ', 1)[1]}\n") in probe.stdout
    data = json.loads(run_cli("--config", str(config), "status", "--json", "--check").stdout)
    assert data["healthy"] is False
    assert data["failing_repos"] == [{"repo": "pytorch/xlaa", "consecutive_failures": 3,
                                      "last_error": MISSING}]
    fake_github.add_repo("pytorch/xlaa")  # the repo is fixed (or the config): green again
    assert run_cli("--config", str(config), "poll").code == 0
    assert run_cli("--config", str(config), "status", "--check").code == 0


def test_max_failed_polls_is_read_from_the_config(fake_github, write_config, run_cli):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    config = write_config('[poll]\nmax_failed_polls = 5\n', repos=("pytorch/xla", "nobody/x"))
    for _ in range(4):
        run_cli("--config", str(config), "poll")
    assert run_cli("--config", str(config), "status", "--check").code == 0
    run_cli("--config", str(config), "poll")
    red = run_cli("--config", str(config), "status", "--check")
    assert red.code == 1 and "nobody/x failed 5 polls in a row" in red.stdout


# -- 10: a pipe closed early, a daemon that stopped ----------------------------------------------

@pytest.mark.slow
def test_poll_into_a_pipe_closed_early_is_quiet_and_requeues_nothing(fake_github, tmp_path,
                                                                     run_cli):
    """`release-watch poll | head -1`: three long releases for the console (far more than a
    pipe holds), the reader gone after one line. No traceback, no "Exception ignored", exit
    0; the console's deliveries are done with (nothing retried on the next run) and the jsonl
    notifier got all three."""
    tags = ("v2.5.0", "v2.10.0", "v2.11.0")
    for tag in tags:
        fake_github.add_release("pytorch/pytorch", tag=tag,
                                body=release_notes(f"pytorch/{tag}.md"))
    config = tmp_path / "rw.toml"
    config.write_text(f'[github]\napi_url = "{fake_github.url}"\n[store]\npath = "store"\n'
                      '[poll]\nfirst_run_announce = 3\n[[repos]]\nname = "pytorch/pytorch"\n'
                      '[[notifiers]]\nname = "console"\ntype = "console"\n'
                      '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n')
    poll = subprocess.Popen([sys.executable, "-m", "watcher", "--config", str(config), "poll"],
                            env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert poll.stdout is not None and poll.stderr is not None
    first = poll.stdout.readline()
    poll.stdout.close()  # as `head -1` does
    code = poll.wait(timeout=60)
    stderr = poll.stderr.read().decode()
    assert first.strip()
    assert (code, stderr) == (0, "")
    assert (tmp_path / "events.jsonl").read_text().count("\n") == 3
    store = Store.open(tmp_path / "store", read_only=True)
    try:
        assert store.pending_by_notifier() == {} and store.failing_deliveries() == []
    finally:
        store.close()
    again = run_cli("--config", str(config), "poll")
    assert again.code == 0  # and nothing was queued again for the console:
    assert not [tag for tag in tags if tag in again.stdout], again.stdout


def _dead_pid() -> int:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
    return int(finished.stdout)


def test_status_tells_a_stale_pid_from_a_running_daemon(write_config, run_cli, tmp_path):
    config = write_config()
    store_path = tmp_path / "store"
    store = Store.open(store_path)
    dead = _dead_pid()
    store.put_daemon_state({"pid": dead, "heartbeat": "2026-11-29T11:00:00+00:00",
                            "next_runs": {"poll": "2026-11-29T11:10:00+00:00"}})
    store.close()
    (store_path / "daemon.lock").write_text(f"{dead}\n")  # what the killed daemon left
    text = run_cli("--config", str(config), "status").stdout
    assert ("daemon: not running (last seen: pid "
            f"{dead}, heartbeat 2026-11-29T11:00:00+00:00)\n") in text
    assert "next poll" not in text
    assert json.loads(run_cli("--config", str(config), "status", "--json").stdout)[
        "daemon"]["running"] is False
    lock = daemon_lock(store_path)  # a daemon of this pid holds the store now
    try:
        running = run_cli("--config", str(config), "status", "--json").stdout
        assert json.loads(running)["daemon"] == {"pid": os.getpid(), "running": True}
        assert "running, no job finished yet" in run_cli("--config", str(config),
                                                         "status").stdout
    finally:
        lock.release()
    # The pid is alive (this process) but holds no lock: not the daemon, a pid reused.
    assert "daemon: not running" in run_cli("--config", str(config), "status").stdout


@pytest.mark.slow
def test_status_says_not_running_once_the_real_daemon_stopped(fake_github, fake_slack,
                                                              tmp_path, run_cli):
    fake_github.add_repo("pytorch/xla")
    config = daemon_config(tmp_path / "rw.toml", fake_github.url, fake_slack.api_url,
                           repos=("pytorch/xla",))
    daemon = Daemon(config)

    def status() -> dict:
        return json.loads(run_cli("--config", str(config), "status", "--json").stdout)

    try:
        wait_for(lambda: status()["daemon"].get("heartbeat"), what="a heartbeat")
        assert status()["daemon"]["running"] is True
        assert status()["daemon"]["pid"] == daemon.process.pid
        assert daemon.terminate() == 0
    finally:
        daemon.kill()
    assert status()["daemon"]["running"] is False
    text = run_cli("--config", str(config), "status").stdout
    assert f"daemon: not running (last seen: pid {daemon.process.pid}, heartbeat " in text


# -- 13: no internet ----------------------------------------------------------------------------

def test_no_internet_is_one_line_naming_the_fix_in_poll_and_status(tmp_path, run_cli):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = tmp_path / "rw.toml"
    config.write_text(f'[github]\napi_url = "http://127.0.0.1:{port}"\nretries = 0\n'
                      '[store]\npath = "store"\n[[repos]]\nname = "pytorch/xla"\n')
    result = run_cli("--config", str(config), "poll")
    assert result.code == 1
    [line] = [line for line in result.stderr.splitlines() if "unreachable" in line]
    fix = (f"pytorch/xla: GitHub unreachable after 1 try: 127.0.0.1:{port} refused the "
           "connection: nothing listens there, or a firewall rejects it; behind a proxy, set "
           "HTTPS_PROXY (and NO_PROXY for hosts reached directly); else check github.api_url")
    assert line.endswith(fix), line
    assert "Traceback" not in result.stderr
    assert fix.split(": ", 1)[1] in run_cli("--config", str(config), "status").stdout
