"""Issue 29's rows about what a slash command carries, each through the daemon's real listener
on loopback: ids of no Slack shape, controls and bidi overrides, text past Slack's limit, a
thousand unknown words, a store held by someone else; and what any output shows: secrets of
nothing but whitespace, credentials inside URLs."""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from datetime import UTC, datetime

import httpx
import pytest
from conftest import SLACK_TOKEN
from subscribe_support import CHANNEL, SIGNING_SECRET, form, served_request_url, signed

from watcher.store import Subscription, writer_lock
from watcher.subscribe.service import ANOTHER_COMMAND, busy


@pytest.fixture
def served(fake_github, fake_slack, write_config, clock):
    with served_request_url(fake_github, fake_slack, write_config, clock) as both:
        yield both


# ---- 2. blank secrets are refused by config check and run -----------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "GITHUB_TOKEN",
     "SLACK_WEBHOOK_URL", "TEAM_WEBHOOK"],
)
@pytest.mark.parametrize("value", [" ", "\t\n  "], ids=["space", "whitespace"])
def test_a_secret_of_nothing_but_whitespace_is_refused(write_config, run_cli, name, value):
    config = write_config(
        notifiers='[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'
        '[[notifiers]]\nname = "team"\ntype = "slack"\nwebhook_url = { env = "TEAM_WEBHOOK" }\n'
    )
    env = {"SLACK_BOT_TOKEN": SLACK_TOKEN, "TEAM_WEBHOOK": "https://hooks.slack.com/services/T/B/x",
           "SLACK_SIGNING_SECRET": SIGNING_SECRET, name: value}
    checked = run_cli("--config", str(config), "config", "check", env=env)
    assert checked.code == 2
    lines = [line for line in checked.stderr.splitlines() if "nothing but whitespace" in line]
    assert lines == [f"release-watch: {name} is set to nothing but whitespace: set it to the "
                     "real value, or unset it"]
    ran = run_cli("--config", str(config), "run", env=env)
    assert ran.code == 2 and lines[0] in ran.stderr


# ---- 5. slash-command input ------------------------------------------------------------------


def _command(http, clock, text: str, **fields: str) -> httpx.Response:
    body = form(text, fields.pop("channel"), **fields)
    return http.post("/slack/commands", content=body, headers=signed(body, clock.epoch()))


@pytest.mark.slow
@pytest.mark.parametrize(
    "channel", ["C123\nrelease-watch: forged line", "#general", "c0lower", "X0123", "C" * 40, ""],
    ids=["newline", "name", "lower-case", "wrong-letter", "too-long", "empty"])
def test_a_channel_id_of_no_slack_shape_is_refused_in_one_line(served, clock, channel):
    daemon, http = served
    answer = _command(http, clock, "subscribe distributed", channel=channel)
    text = answer.json()["text"]
    assert answer.status_code == 200 and "\n" not in text
    assert text.startswith("The command came with a channel_id that is not a Slack id")
    assert daemon.runtime.store.subscriptions() == []


def test_a_user_id_of_no_slack_shape_is_refused(served, fake_slack, clock):
    daemon, http = served
    answer = _command(http, clock, "subscribe", channel=fake_slack.channel_id(CHANNEL),
                      user="U1\x1b[2J")
    assert "user_id that is not a Slack id (U1\\x1b[2J)" in answer.json()["text"]
    assert daemon.runtime.store.subscriptions() == []


def test_answers_show_controls_and_bidi_overrides_as_escapes(served, fake_slack, clock):
    _, http = served
    text = _command(http, clock, "subscribe \x1b[31mred\x07 \u202eexe.txt",
                    channel=fake_slack.channel_id(CHANNEL)).json()["text"]
    assert "\\x1b[31mred\\x07" in text and "\\u202eexe.txt" in text
    assert not any(char in text for char in "\x1b\x07\u202e")


def test_status_shows_a_stored_channel_name_escaped(served, run_cli, clock):
    daemon, _ = served


    daemon.runtime.store.add_subscription(Subscription(
        channel="C0DIST", channel_name="dist\nhealth: ok\x1b[2J", created_at=datetime.now(UTC)))
    shown = run_cli("--config", daemon.config.source, "status").stdout
    (line,) = [line for line in shown.splitlines() if "subscription-1" in line]
    assert "#dist\\nhealth: ok\\x1b[2J (C0DIST)" in line and "\x1b" not in shown


def test_text_past_slacks_limit_is_refused_at_once(served, fake_slack, clock):
    daemon, http = served
    holder = sqlite3.connect(daemon.config.store_path() / "cache.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # a command that waited for the store would show it
    try:
        start = time.monotonic()
        answer = _command(http, clock, "subscribe " + "x" * 100_000,
                          channel=fake_slack.channel_id(CHANNEL))
        took = time.monotonic() - start
        whole = _command(http, clock, "subscribe " + "x" * (1 << 20),
                         channel=fake_slack.channel_id(CHANNEL))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    text = answer.json()["text"]
    assert text.startswith("That command is 100,010 characters long; Slack sends at most 4,000")
    assert "\n" not in text and took < 1.0
    assert whole.status_code == 413  # past what the listener reads at all
    assert daemon.runtime.store.subscriptions() == []


@pytest.mark.slow
def test_an_answer_names_the_first_unknown_words_and_counts_the_rest(served, fake_slack, clock):
    _, http = served
    words = " ".join(f"w{index}" for index in range(600))
    start = time.monotonic()
    text = _command(http, clock, f"subscribe {words}",
                    channel=fake_slack.channel_id(CHANNEL)).json()["text"]
    assert time.monotonic() - start < 2.0
    assert "I don't know these words: `w0`, `w1`, `w2` and 597 more" in text
    assert len(text) < 400


@pytest.mark.slow
def test_busy_says_another_command_is_being_answered(served, fake_slack, clock):
    daemon, http = served
    daemon.slack.commands.budget = 0.2
    with daemon.slack.commands._one_at_a_time:  # a command being answered
        answer = _command(http, clock, "subscribe", channel=fake_slack.channel_id(CHANNEL))
    assert answer.json()["text"] == busy(ANOTHER_COMMAND)
    assert daemon.runtime.store.subscriptions() == []


def test_busy_names_the_job_holding_the_store(served, fake_slack, clock):
    daemon, http = served
    daemon.slack.commands.budget = 0.2
    path = daemon.config.store_path()
    with writer_lock(path, wait=0, doing="the daemon's poll job"):
        holder = sqlite3.connect(path / "cache.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # the poll recording what it found
        try:
            answer = _command(http, clock, "subscribe", channel=fake_slack.channel_id(CHANNEL))
        finally:
            holder.execute("ROLLBACK")
            holder.close()

    assert answer.json()["text"] == busy(
        f"the daemon's poll job (pid {os.getpid()}) held its write lock")
    assert daemon.runtime.store.subscriptions() == []


# ---- 6. credentials inside URLs are masked everywhere ---------------------------------------


def test_config_check_masks_credentials_inside_urls(tmp_path, fake_github, run_cli):
    url = fake_github.url.replace("http://", "http://octo:hunter22pass@")
    config = tmp_path / "release-watch.toml"
    config.write_text(f'[github]\napi_url = "{url}?access_token=ghp_querysecret1"\n'
                      '[store]\npath = "store"\n[[repos]]\nname = "pytorch/pytorch"\n'
                      '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "e.jsonl"\n')
    checked = run_cli("--config", str(config), "config", "check")
    shown = checked.stdout + checked.stderr
    assert checked.code == 0, checked.stderr
    assert "hunter22pass" not in shown and "octo" not in shown
    assert "ghp_querysecret1" not in shown
    assert '"api_url": "http://***@127.0.0.1' in shown and "?access_token=***" in shown


def test_logs_errors_and_status_mask_credentials_inside_urls(caplog):
    from watcher.logs import RedactSecrets, mask_url_credentials, redact

    text = "GET https://bot:s3cretpw@ghe.example/api?token=abc123&page=2 failed"
    masked = "GET https://***@ghe.example/api?token=***&page=2 failed"
    assert mask_url_credentials(text) == masked
    assert redact(text) == masked  # an error on stderr
    assert RedactSecrets().redact(text) == masked  # what status and /readyz quote
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "%s", (text,), None)
    RedactSecrets().filter(record)
    assert record.getMessage() == masked


def test_status_masks_credentials_inside_a_recorded_url(served, run_cli):
    daemon, _ = served
    from watcher.store import RepoState

    daemon.runtime.store.put_repo_state(RepoState(
        repo="pytorch/pytorch", consecutive_failures=1,
        last_error="GET https://bot:s3cretpw@ghe.example/api?token=abc123 answered 502"))
    shown = run_cli("--config", daemon.config.source, "status").stdout
    assert "s3cretpw" not in shown and "abc123" not in shown
    assert "https://***@ghe.example/api?token=***" in shown
