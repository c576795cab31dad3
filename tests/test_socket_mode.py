"""``/release-watch`` over Socket Mode, end to end: the daemon's slack-sdk client opens a real
websocket to the fake Socket Mode server (found through ``apps.connections.open`` on the fake
Slack), a slash command arrives as Slack's envelope, its acknowledgement carries the answer,
and the next poll posts exactly what was subscribed to the channel, through the fake Slack."""

from __future__ import annotations

import logging
import time

import pytest
from conftest import SLACK_TOKEN
from daemon_support import wait_for
from fakes.socket_mode import FakeSocketMode
from subscribe_support import (
    APP_TOKEN,
    CHANNEL,
    COMPILE_BREAKING,
    DIST_BREAKING,
    DIST_FIX,
    EARLIER_RELEASE,
    NEW_RELEASE,
    OLD_DIST_BREAKING,
    channel_text,
    running_daemon,
    store_locked,
)

from watcher.subscribe.service import BUDGET, OTHER_PROGRAM, busy


@pytest.fixture
def socket_mode(fake_slack):
    with FakeSocketMode() as server:
        fake_slack.socket_url = server.url
        fake_slack.add_app_token(APP_TOKEN)
        fake_slack.add_token(SLACK_TOKEN, channels=[CHANNEL])
        yield server


def test_a_subscription_made_in_slack_posts_only_its_items_from_the_next_poll(
    fake_github, fake_slack, socket_mode, write_config, clock, caplog
):
    channel = fake_slack.channel_id(CHANNEL)
    fake_github.add_release("pytorch/pytorch", tag="v2.5.0", body="## CUDA\n- Fix (#1)\n")
    caplog.set_level(logging.DEBUG)
    with running_daemon(
        write_config, fake_slack.api_url, clock, {"SLACK_APP_TOKEN": APP_TOKEN}
    ) as daemon:
        daemon._poll_job()  # the baseline
        fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body=EARLIER_RELEASE)
        daemon._poll_job()  # announced before the subscription: never to it
        ack = socket_mode.command(
            "subscribe distributed bc_breaking", channel_id=channel, channel_name="team-dist"
        )
        answer = ack["payload"]
        assert answer["response_type"] == "ephemeral"
        assert answer["text"].startswith(
            f"Subscribed <#{channel}> to every watched repository (pytorch/pytorch): "
            "BC-breaking items in Distributed, as they appear."
        )
        daemon._poll_job()  # nothing new: the channel is not flooded with history
        assert fake_slack.channel_messages(channel) == []
        fake_github.add_release(
            "pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0", body=NEW_RELEASE
        )
        daemon._poll_job()
        posted = channel_text(fake_slack, channel)
        assert DIST_BREAKING.split("`")[1] in posted and "PyTorch 2.7.0" in posted
        for absent in (COMPILE_BREAKING, DIST_FIX, OLD_DIST_BREAKING):
            assert absent.split("`")[1] not in posted
        assert socket_mode.paths == ["/link/?ticket=fake-ticket&app_id=A000"]
        listed = socket_mode.command("list", channel_id=channel)["payload"]["text"]
        assert "• 1: every watched repository (pytorch/pytorch): BC-breaking items" in listed
    everything = caplog.text + repr(ack) + repr(socket_mode.acks) + repr(daemon.slack._socket)
    assert APP_TOKEN not in everything and SLACK_TOKEN not in everything


def test_an_envelope_slack_delivers_again_is_answered_without_doing_it_twice(
    fake_github, fake_slack, socket_mode, write_config, clock
):
    channel = fake_slack.channel_id(CHANNEL)
    with running_daemon(
        write_config, fake_slack.api_url, clock, {"SLACK_APP_TOKEN": APP_TOKEN}
    ) as daemon:
        first = socket_mode.command("subscribe distributed bc_breaking", channel_id=channel)
        assert first["payload"]["text"].startswith(f"Subscribed <#{channel}>")
        again = socket_mode.command("subscribe distributed bc_breaking", channel_id=channel,
                                    again=first["envelope_id"])
        assert again["envelope_id"] == first["envelope_id"]
        assert "was not done twice" in again["payload"]["text"]
        listed = socket_mode.command("list", channel_id=channel)["payload"]["text"]
        assert listed.count("BC-breaking items") == 1  # one subscription, not two
        # Only the change was recorded: a list is answered again, and never waits.
        assert daemon.runtime.store.seen_requests() == 1


@pytest.mark.slow
def test_a_command_while_the_store_is_locked_is_acked_busy_in_time_and_changes_nothing(
    fake_github, fake_slack, socket_mode, write_config, clock
):
    """A poll holding the store's write lock must not keep the ack past Slack's 3 seconds,
    nor let the command commit after Slack told the person it failed."""
    assert BUDGET + 0.5 < 3  # the wait, with room for the answer's own work and the wire
    channel = fake_slack.channel_id(CHANNEL)
    fake_github.add_release("pytorch/pytorch", tag="v2.5.0", body="## CUDA\n- Fix (#1)\n")
    with running_daemon(
        write_config, fake_slack.api_url, clock, {"SLACK_APP_TOKEN": APP_TOKEN}
    ) as daemon:
        daemon._poll_job()  # the baseline
        socket_mode.command("subscribe pytorch/pytorch export", channel_id=channel)
        (kept,) = daemon.runtime.store.subscriptions()
        with store_locked(daemon, budget=0.3):
            start = time.monotonic()
            ack = socket_mode.command(
                "subscribe distributed bc_breaking", channel_id=channel, channel_name="team-dist"
            )
            took = time.monotonic() - start
            listed = socket_mode.command("list", channel_id=channel)["payload"]["text"]
            unsubscribed = socket_mode.command("unsubscribe all", channel_id=channel)
        answered_busy = {"response_type": "ephemeral", "text": busy(OTHER_PROGRAM)}
        assert ack["payload"] == answered_busy
        assert 0.3 <= took < 0.3 + 0.5
        assert unsubscribed["payload"] == answered_busy
        assert "• 1: pytorch/pytorch: every item in torch.export" in listed  # reads never wait
        assert daemon.runtime.store.subscriptions() == [kept]  # nothing done, once unlocked
        fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body=NEW_RELEASE)
        daemon._poll_job()
        assert DIST_BREAKING.split("`")[1] not in channel_text(fake_slack, channel)
        again = socket_mode.command(
            "subscribe distributed bc_breaking", channel_id=channel, channel_name="team-dist"
        )
        assert again["payload"]["text"].startswith(f"Subscribed <#{channel}>")


def test_a_digest_subscription_is_scheduled_queued_sent_and_shown_in_status(
    fake_github, fake_slack, socket_mode, write_config, clock, run_cli
):
    channel = fake_slack.channel_id(CHANNEL)
    fake_github.add_release("pytorch/pytorch", tag="v2.5.0", body="## CUDA\n- Fix (#1)\n")
    with running_daemon(
        write_config, fake_slack.api_url, clock, {"SLACK_APP_TOKEN": APP_TOKEN}
    ) as daemon:
        daemon._poll_job()
        answer = socket_mode.command(
            "subscribe pytorch/pytorch distributed --digest",
            channel_id=channel,
            channel_name="team-dist",
        )["payload"]
        assert "in a weekly digest, Mondays at 09:00 UTC" in answer["text"]
        fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body=NEW_RELEASE)
        daemon._poll_job()  # queued for the digest, not posted
        assert fake_slack.channel_messages(channel) == []
        job = daemon.scheduler.get_job("digest:subscription-1")
        assert job is not None and job.next_run_time.strftime("%a %H:%M") == "Mon 09:00"
        assert daemon.reload(lambda: daemon.config)  # SIGHUP: the subscription's job stays
        assert daemon.scheduler.get_job("digest:subscription-1") is not None
        daemon._digest_job("subscription-1")
        posted = channel_text(fake_slack, channel)
        assert DIST_BREAKING.split("`")[1] in posted and DIST_FIX.split("`")[1] in posted
        assert COMPILE_BREAKING.split("`")[1] not in posted
        socket_mode.command("unsubscribe all", channel_id=channel)
        daemon._poll_job()
        assert daemon.scheduler.get_job("digest:subscription-1") is None
        socket_mode.command(
            'subscribe pytorch/pytorch export --digest "0 9 * * MON"',
            channel_id=channel,
            channel_name="team-dist",
        )
    status = run_cli("--config", str(daemon.config.source), "status")
    assert (
        f"  subscription-2: #team-dist ({channel}): pytorch/pytorch: every item in "
        "torch.export, in a weekly digest, Mondays at 09:00 UTC"
    ) in status.stdout


def test_a_refused_app_token_is_one_error_line_and_the_daemon_goes_on(
    fake_github, fake_slack, socket_mode, write_config, clock, caplog
):
    wrong = "xapp-1-A000-9999-notthetokenslackknows"
    fake_github.add_release("pytorch/pytorch", tag="v2.5.0", body="## CUDA\n- Fix (#1)\n")
    with (
        caplog.at_level(logging.INFO),
        running_daemon(
            write_config, fake_slack.api_url, clock, {"SLACK_APP_TOKEN": wrong}
        ) as daemon,
    ):
        wait_for(lambda: "Socket Mode refused" in caplog.text, what="the refusal")
        daemon._poll_job()  # polls and delivers as ever
        assert daemon.runtime.store.repo_state("pytorch/pytorch").last_success is not None
    (line,) = [r.getMessage() for r in caplog.records if "Socket Mode" in r.getMessage()]
    assert "(invalid_auth): SLACK_APP_TOKEN is not valid" in line
    assert wrong not in caplog.text and not socket_mode.paths


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"SLACK_APP_TOKEN": "xoxb-a-bot-token-9876"}, "SLACK_APP_TOKEN is not an app-level token"),
        ({"SLACK_APP_TOKEN": APP_TOKEN, "SLACK_BOT_TOKEN": ""}, "but SLACK_BOT_TOKEN is not"),
        ({"SLACK_SIGNING_SECRET": "s3cr3t-signing"}, "but SLACK_BOT_TOKEN is not"),
    ],
    ids=["bot-token-as-app-token", "no-bot-token", "signing-secret-without-bot-token"],
)
def test_config_check_and_run_refuse_what_cannot_work(env, problem, write_config, run_cli):
    config = write_config()
    env = {"SLACK_BOT_TOKEN": "", **env}
    checked = run_cli("--config", str(config), "config", "check", env=env)
    assert checked.code == 2 and problem in checked.stderr
    ran = run_cli("--config", str(config), "run", env=env)
    assert ran.code == 2 and problem in ran.stderr
    for value in env.values():
        assert not value or value not in checked.stderr + checked.stdout + ran.stderr
