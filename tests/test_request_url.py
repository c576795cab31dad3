"""``/release-watch`` at the HTTP request URL ``/slack/commands``: served by the daemon's own
listener (``[server] listen`` on loopback), posted to with httpx as Slack posts (a form, signed with
the signing secret). A valid request subscribes and the next poll posts exactly that; a bad,
stale or replayed signature is 401 and a log line, and nothing is done."""

from __future__ import annotations

import json
import logging
import time

import httpx
import pytest
from conftest import SLACK_TOKEN
from subscribe_support import (
    CHANNEL,
    COMPILE_BREAKING,
    DIST_BREAKING,
    DIST_FIX,
    NEW_RELEASE,
    SIGNING_SECRET,
    channel_text,
    form,
    running_daemon,
    signed,
    store_locked,
)

from handlers.slack import SignatureCheck
from watcher.subscribe.service import OTHER_PROGRAM, busy


@pytest.fixture
def served(fake_github, fake_slack, write_config, clock):
    """The daemon (its jobs run by the test) serving its routes on ``[server] listen``."""
    fake_slack.add_token(SLACK_TOKEN, channels=[CHANNEL])
    fake_github.add_release("pytorch/pytorch", tag="v2.5.0", body="## CUDA\n- Fix (#1)\n")
    with running_daemon(
        write_config,
        fake_slack.api_url,
        clock,
        {"SLACK_SIGNING_SECRET": SIGNING_SECRET},
        extra='[server]\nlisten = "127.0.0.1:0"\n',
    ) as daemon:
        assert daemon.service.listener is not None
        with httpx.Client(base_url=daemon.service.listener.url) as http:
            yield daemon, http


def test_a_signed_command_subscribes_and_the_next_poll_posts_only_that(
    served, fake_github, fake_slack, clock
):
    daemon, http = served
    channel = fake_slack.channel_id(CHANNEL)
    daemon._poll_job()  # the baseline
    body = form("subscribe distributed bc_breaking", channel)
    answer = http.post("/slack/commands", content=body, headers=signed(body, clock.epoch()))
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["response_type"] == "ephemeral"
    assert answer.json()["text"].startswith(
        f"Subscribed <#{channel}> to every watched "
        "repository (pytorch/pytorch): BC-breaking items "
        "in Distributed, as they appear."
    )
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body=NEW_RELEASE)
    daemon._poll_job()
    posted = channel_text(fake_slack, channel)
    assert DIST_BREAKING.split("`")[1] in posted
    assert COMPILE_BREAKING.split("`")[1] not in posted and DIST_FIX.split("`")[1] not in posted


def _refused(daemon, http, headers: dict[str, str], body: bytes, caplog) -> str:
    with caplog.at_level(logging.WARNING, logger="handlers.slack.request_url"):
        answer = http.post("/slack/commands", content=body, headers=headers)
    assert answer.status_code == 401
    assert daemon.runtime.store.subscriptions() == []
    (line,) = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    caplog.clear()
    return line


def test_a_bad_stale_or_missing_signature_is_401_a_log_line_and_nothing_done(
    served, fake_github, fake_slack, clock, caplog
):
    daemon, http = served
    channel = fake_slack.channel_id(CHANNEL)
    daemon._poll_job()  # the baseline
    body = form("subscribe distributed", channel)
    now = clock.epoch()
    assert "does not match" in _refused(
        daemon, http, signed(body, now, "wrong-secret"), body, caplog
    )
    tampered = body.replace(b"distributed", b"compile")
    assert "does not match" in _refused(daemon, http, signed(body, now), tampered, caplog)
    assert "301s off" in _refused(daemon, http, signed(body, now - 301), body, caplog)
    assert "-400s off" in _refused(daemon, http, signed(body, now + 400), body, caplog)
    assert "no X-Slack" in _refused(daemon, http, {}, body, caplog)
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body=NEW_RELEASE)
    daemon._poll_job()  # a release a subscription to distributed would have posted
    events = (daemon.config.base_dir / "events.jsonl").read_text().splitlines()
    assert [json.loads(line)["tag"] for line in events] == ["v2.7.0"]  # the poll found it
    assert fake_slack.channel_messages(channel) == []


@pytest.mark.slow
def test_a_command_while_the_store_is_locked_is_answered_busy_in_time_and_does_nothing(
    served, fake_github, fake_slack, clock
):
    daemon, http = served
    channel = fake_slack.channel_id(CHANNEL)
    daemon._poll_job()  # the baseline
    body = form("subscribe distributed bc_breaking", channel)
    with store_locked(daemon, budget=0.3):
        start = time.monotonic()
        answer = http.post("/slack/commands", content=body, headers=signed(body, clock.epoch()))
        took = time.monotonic() - start
    assert answer.status_code == 200
    assert answer.json() == {"response_type": "ephemeral", "text": busy(OTHER_PROGRAM)}
    assert 0.3 <= took < 0.3 + 0.5  # BUDGET (2 s) + 0.5 < Slack's 3 s: test_socket_mode
    assert daemon.runtime.store.subscriptions() == []
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body=NEW_RELEASE)
    daemon._poll_job()
    assert fake_slack.channel_messages(channel) == []
    retried = form("subscribe distributed bc_breaking", channel, user="U222")  # a new signature
    again = http.post("/slack/commands", content=retried, headers=signed(retried, clock.epoch()))
    assert again.json()["text"].startswith(f"Subscribed <#{channel}>")


def test_a_replayed_request_is_refused_once_it_was_answered(served, fake_slack, clock, caplog):
    daemon, http = served
    body = form("subscribe distributed", fake_slack.channel_id(CHANNEL))
    headers = signed(body, clock.epoch() - 10)
    assert http.post("/slack/commands", content=body, headers=headers).status_code == 200
    with caplog.at_level(logging.WARNING):
        again = http.post("/slack/commands", content=body, headers=headers)
    assert again.status_code == 401
    assert len(daemon.runtime.store.subscriptions()) == 1
    assert "replayed" in caplog.text and SIGNING_SECRET not in caplog.text


def test_only_post_is_taken(served):
    _, http = served
    assert http.get("/slack/commands").status_code == 405


def test_the_signing_secret_shows_nowhere(served, fake_slack, clock, caplog):
    daemon, http = served
    caplog.set_level(logging.DEBUG)
    body = form("help", fake_slack.channel_id(CHANNEL))
    answer = http.post("/slack/commands", content=body, headers=signed(body, clock.epoch()))
    http.post("/slack/commands", content=body, headers=signed(body, clock.epoch(), "nope"))
    check = SignatureCheck(SIGNING_SECRET, clock.epoch)
    shown = (
        caplog.text
        + answer.text
        + repr(check)
        + str(check)
        + repr(daemon.deps.get_secrets())
        + repr(daemon.slack.routes())
    )
    assert SIGNING_SECRET not in shown and SLACK_TOKEN not in shown
