"""Two replicas of `release-watch run` on one PostgreSQL store, as real processes against the
loopback fakes, for the failover test and ``bench/bench_failover.py``: each replica listens on a
port of its own (its ``/readyz`` says its role), and what Slack was sent is compared with what a
single embedded daemon sends for the same releases (lost and duplicated messages)."""

from __future__ import annotations

import io
import json
import socket
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from conftest import SLACK_TOKEN, TOKEN
from daemon_support import Daemon, daemon_config, wait_for
from fakes.github import FakeGitHub
from fakes.slack import FakeSlack

from watcher.app import Dependencies
from watcher.cli import main
from watcher.config import Secrets

REPO = "pytorch/xla"
POSTS = "/api/chat.postMessage"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Replica:
    """One daemon of the pair, in a directory of its own, listening on its own port."""

    def __init__(self, root: Path, name: str, github: str, slack: str, url: str,
                 lease: str, *, extra: str = "") -> None:
        """``extra``: more TOML after the config's own (an ``[impact]`` table)."""
        self.name = name
        self.port = free_port()
        self.directory = root / name
        self.directory.mkdir(exist_ok=True)
        self.config = daemon_config(
            self.directory / "rw.toml", github, slack, repos=(REPO,),
            store=f'lease = "{lease}"\n',
            extra=f'[server]\nlisten = "127.0.0.1:{self.port}"\n{extra}')
        self.url = url
        self.daemon: Daemon | None = None

    def start(self, **env: str) -> Replica:
        """``env``: more of its environment (``RELEASE_WATCH_HANG_AT``)."""
        self.daemon = Daemon(self.config, RELEASE_WATCH_STORE_URL=self.url, **env)
        return self

    @property
    def running(self) -> bool:
        return self.daemon is not None and self.daemon.process.poll() is None

    def role(self) -> str | None:
        """What its ``/readyz`` says it is; None while it does not answer."""
        try:
            answer = httpx.get(f"http://127.0.0.1:{self.port}/readyz", timeout=2)
        except httpx.HTTPError:
            return None
        if not answer.headers.get("content-type", "").startswith("application/json"):
            raise AssertionError(f"replica {self.name}'s /readyz answered {answer.status_code} "
                                 f"{answer.text.strip()!r}; the end of its log:\n"
                                 f"{self.log[-3000:]}")
        return str(answer.json().get("role"))

    def kill(self) -> None:
        if self.daemon is not None:
            self.daemon.kill()

    def stop(self) -> int | None:
        if self.daemon is None or not self.running:
            return None
        return self.daemon.terminate()

    @property
    def log(self) -> str:
        return self.daemon.log if self.daemon is not None else ""


@contextmanager
def killed_at_end(replicas: Iterable[Replica]) -> Iterator[None]:
    """Kills every replica when the block ends; when it ends by a failure (a wait that timed
    out), prints the end of each replica's log first, so the report shows what each was doing
    (pytest shows a failed test's captured output)."""
    try:
        yield
    except BaseException:
        for replica in replicas:
            print(f"---- replica {replica.name}: the end of its log ----\n{replica.log[-4000:]}",
                  file=sys.stderr)
        raise
    finally:
        for replica in replicas:
            replica.kill()


def wait_for_roles(replicas: Iterable[Replica], timeout: float = 60) -> Replica:
    """The leader, once the running replicas say one leader and the rest standbys."""
    running = [replica for replica in replicas if replica.running]

    def settled() -> bool:
        roles = sorted(str(replica.role()) for replica in running)
        return roles == ["leader"] + ["standby"] * (len(running) - 1)

    wait_for(settled, timeout=timeout, what="one leader and the rest standbys")
    return next(replica for replica in running if replica.role() == "leader")


def sent(slack: FakeSlack) -> Counter[str]:
    """Every message Slack was sent, by its blocks and, for a reply, its parent's (so one
    release's thread is told from another's): a message posted twice counts 2."""
    messages = list(slack.messages)
    parents = {m.ts: json.dumps(m.blocks, sort_keys=True) for m in messages
               if m.thread_ts is None}
    return Counter(json.dumps(m.blocks, sort_keys=True) if m.thread_ts is None
                   else f"{parents.get(m.thread_ts, '?')} > {json.dumps(m.blocks, sort_keys=True)}"
                   for m in messages)


def reference(releases: list[tuple[str, str]], root: Path) -> Counter[str]:
    """What one embedded store posts for ``releases`` (tag, body), in order: a baseline poll
    of the empty repo, then one poll that finds them all."""
    with FakeGitHub() as github, FakeSlack() as slack:
        slack.add_token(SLACK_TOKEN, channels=["#releases"])
        github.add_repo(REPO)
        root.mkdir(parents=True, exist_ok=True)
        config = daemon_config(root / "rw.toml", github.url, slack.api_url, repos=(REPO,))
        deps = Dependencies(stdout=io.StringIO(), secrets=Secrets.model_validate(
            {"GITHUB_TOKEN": TOKEN, "SLACK_BOT_TOKEN": SLACK_TOKEN}), environ={})
        if main(["--config", str(config), "poll"], deps) != 0:
            raise RuntimeError("the reference's baseline poll failed")
        for tag, body in releases:
            github.add_release(REPO, tag=tag, body=body)
        if main(["--config", str(config), "poll"], deps) != 0:
            raise RuntimeError("the reference poll failed")
        return sent(slack)


def compare(expected: Counter[str], delivered: Counter[str]) -> tuple[int, int]:
    """(lost, duplicated) messages."""
    return sum((expected - delivered).values()), sum((delivered - expected).values())
