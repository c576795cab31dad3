"""What the end-to-end ``/release-watch`` tests share: a daemon run in this process against the
fake GitHub and the fake Slack (its jobs run by the test, never by the clock), and release
notes whose items fall in known subsystems and kinds."""

from __future__ import annotations

import hashlib
import hmac
import io
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from conftest import SLACK_TOKEN, TOKEN, Clock

from watcher.app import Dependencies, build_daemon
from watcher.config import Secrets, load_config
from watcher.daemon.loop import Daemon

APP_TOKEN = "xapp-1-A000-1234-socketmodesecretvalue"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNEL = "#team-dist"

DIST_BREAKING = "Remove `ProcessGroup.allreduce_coalesced` from c10d (#201)"
COMPILE_BREAKING = "Remove `torch._dynamo.config.legacy_guard` (#202)"
DIST_FIX = "Fix a hang in `all_gather_object` with NCCL (#203)"
OLD_DIST_BREAKING = "Drop `torch.distributed.launch` (#101)"


def notes(breaking_dist: str, breaking_compile: str, fix_dist: str) -> str:
    return (
        f"# Backwards Incompatible Changes\n## Distributed\n- {breaking_dist}\n"
        f"## torch.compile\n- {breaking_compile}\n"
        f"# Bug fixes\n## Distributed\n- {fix_dist}\n"
    )


NEW_RELEASE = notes(DIST_BREAKING, COMPILE_BREAKING, DIST_FIX)
EARLIER_RELEASE = notes(
    OLD_DIST_BREAKING, "Remove `torch._dynamo.old` (#102)", "Fix `barrier` on gloo (#103)"
)


@contextmanager
def running_daemon(
    write_config: Callable[..., Path],
    slack_url: str,
    clock: Clock,
    secrets: dict[str, str],
    extra: str = "",
    notifiers: str = "",
) -> Iterator[Daemon]:
    """``release-watch run`` in this process, started paused: the test runs its jobs;
    ``notifiers`` beside its ``jsonl`` one."""
    config = load_config(
        write_config(
            f"[poll]\nfirst_run_announce = 0\n{extra}",
            repos=("pytorch/pytorch",),
            notifiers=notifiers
            + '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n',
            slack_url=slack_url,
        )
    )
    env = {"GITHUB_TOKEN": TOKEN, "SLACK_BOT_TOKEN": SLACK_TOKEN, **secrets}
    deps = Dependencies(
        stdout=io.StringIO(),
        sleep=clock.sleep,
        clock=clock,
        epoch=clock.epoch,
        secrets=Secrets.model_validate(env),
        environ=env,
    )
    daemon = build_daemon(config, deps)
    daemon.start(paused=True)
    try:
        yield daemon
    finally:
        daemon.stop()


@contextmanager
def store_locked(daemon: Daemon, budget: float = 0.3) -> Iterator[None]:
    """Another connection holds the store's write lock (as a poll recording its finds does)
    while the commands wait at most ``budget`` seconds for it (2 s by default: shortened so
    the test waits little for real)."""
    assert daemon.slack.commands is not None
    daemon.slack.commands.budget = budget
    holder = sqlite3.connect(daemon.config.store_path() / "cache.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def channel_text(fake_slack, channel_id: str) -> str:
    return "\n".join(m.all_text() for m in fake_slack.channel_messages(channel_id))


def form(text: str, channel: str, user: str = "U111") -> bytes:
    return urlencode(
        {
            "token": "x",
            "team_id": "T000",
            "channel_id": channel,
            "channel_name": "team-dist",
            "user_id": user,
            "command": "/release-watch",
            "text": text,
            "response_url": "https://hooks.slack.com/commands/1/2/3",
        }
    ).encode()


def signed(body: bytes, timestamp: float, secret: str = SIGNING_SECRET) -> dict[str, str]:
    """Slack's v0 signature (api.slack.com/authentication/verifying-requests-from-slack)."""
    base = f"v0:{int(timestamp)}:".encode() + body
    signature = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {
        "content-type": "application/x-www-form-urlencoded",
        "x-slack-request-timestamp": str(int(timestamp)),
        "x-slack-signature": signature,
    }


@contextmanager
def serving_request_url(fake_github, fake_slack, write_config, clock) -> Iterator[Any]:
    """Start daemons serving the request URL on loopback, on one store, one after the other
    (a restart): each ``start()`` is ``running_daemon``'s context."""
    fake_slack.add_token(SLACK_TOKEN, channels=[CHANNEL])
    fake_github.add_release("pytorch/pytorch", tag="v2.5.0", body="## CUDA\n- Fix (#1)\n")
    yield lambda: running_daemon(write_config, fake_slack.api_url, clock,
                                 {"SLACK_SIGNING_SECRET": SIGNING_SECRET},
                                 extra='[server]\nlisten = "127.0.0.1:0"\n')


@contextmanager
def served_request_url(*fakes: Any) -> Iterator[tuple[Daemon, httpx.Client]]:
    """One such daemon, and an httpx client on its listener."""
    with serving_request_url(*fakes) as start, start() as daemon:
        assert daemon.service.listener is not None
        with httpx.Client(base_url=daemon.service.listener.url) as http:
            yield daemon, http
