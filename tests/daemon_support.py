"""Runs `release-watch run` as a real subprocess against the loopback fakes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from conftest import SLACK_TOKEN, TOKEN

# How long a test waits for a real daemon process at most: a guard against a hang, never a
# measure. Far above any poll.shutdown_timeout the tests set (20 s at most) plus the start-up
# and exit of an interpreter on a loaded machine (2 cores shared with other test runs), so a
# slow machine only makes a test slower, never red. What a test asserts is a condition: an
# exit code, a log line, a request made or not.
CEILING = 120.0


def daemon_config(path: Path, github_url: str, slack_url: str, *, repos: tuple[str, ...],
                  extra: str = "", shutdown_timeout: str = "10s", store: str = "") -> Path:
    """``store``: more keys of the [store] table (``lease = "3s"``)."""
    tables = "".join(f'[[repos]]\nname = "{repo}"\n' for repo in repos)
    path.write_text(
        f'[github]\napi_url = "{github_url}"\nbackoff = "0s"\n'
        f'[store]\npath = "store"\n{store}'
        f'[poll]\ninterval = "1s"\njitter = "0s"\nretry_interval = "1s"\n'
        f'shutdown_timeout = "{shutdown_timeout}"\nlock_wait = "30s"\n'
        f'[slack]\napi_url = "{slack_url}"\n{tables}'
        f'[[notifiers]]\nname = "releases"\ntype = "slack"\nchannel = "#releases"\n'
        f'min_interval = "0s"\nretries = 0\n{extra}')
    return path


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELEASE_WATCH")}
    env.update(GITHUB_TOKEN=TOKEN, SLACK_BOT_TOKEN=SLACK_TOKEN, **extra)
    return env


class Daemon:
    """A `release-watch run` process whose stderr is collected in the background."""

    def __init__(self, config: Path, **env: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "watcher", "--config", str(config), "run"],
            cwd=config.parent, env=environment(**env), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def terminate(self, timeout: float = CEILING) -> int:
        self.process.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def wait(self, timeout: float = CEILING) -> int:
        """The exit code; a process still running after ``timeout`` is killed and the test
        fails with the end of its log (not a bare ``TimeoutExpired``)."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self._reader.join(timeout=5)
            raise AssertionError(f"the daemon was still running after {timeout:g} s; the end "
                                 f"of its log:\n{self.log[-3000:]}") from None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=CEILING)  # SIGKILL cannot be ignored


def wait_for(condition: Callable[[], bool], timeout: float = CEILING / 2,
             what: str = "") -> None:
    """Waits on a real subprocess: the one place tests wait for wall-clock time. The condition
    is checked at once, then at growing intervals (50 ms to 0.5 s): a condition that starts a
    process of its own (``status``) must not keep a loaded machine busier still."""
    deadline = time.monotonic() + timeout
    pause = 0.05
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for "
                                 f"{what or condition}")
        time.sleep(pause)
        pause = min(pause * 1.5, 0.5)
