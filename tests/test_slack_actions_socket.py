"""The buttons clicked over Socket Mode: slack-sdk's own client in the daemon, the fake Socket
Mode server delivering Slack's ``interactive`` envelopes. Each click is acknowledged, done
once (an envelope delivered again is not done twice), refused for someone not in the
channel, and answered in Slack."""

from __future__ import annotations

import re

import pytest
from actions_support import MEMBER, STRANGER, announced, click, daemon, elements, prepared
from actions_support import first_message as first
from fakes.socket_mode import FakeSocketMode
from subscribe_support import APP_TOKEN


@pytest.fixture
def connected(fake_github, fake_slack, write_config, clock, tmp_path):
    code = prepared(fake_github, fake_slack, tmp_path / "trainer")
    with FakeSocketMode() as server:
        fake_slack.socket_url = server.url
        fake_slack.add_app_token(APP_TOKEN)
        with daemon(write_config, fake_slack, clock, code, {"SLACK_APP_TOKEN": APP_TOKEN}
                    ) as running:
            announced(running, fake_github)
            yield running, server


def test_every_action_round_trips_over_socket_mode(connected, fake_slack):
    running, server = connected
    store = running.runtime.store
    server.click(click(fake_slack, first(fake_slack), "rw_all_uses"))
    running.slack.clicks.settle()
    places = re.findall(r"loader_\d\.py:\d+", "\n".join(
        m.all_text() for m in fake_slack.thread(first(fake_slack).ts)))
    assert len(set(places)) == 48
    server.click(click(fake_slack, first(fake_slack), "rw_mute", option="distributed"))
    server.click(click(fake_slack, first(fake_slack), "rw_snooze"))
    server.click(click(fake_slack, first(fake_slack), "rw_not_us"))
    running.slack.clicks.settle()
    assert {(e.what, e.target.split("#")[0]) for e in store.quiet_entries()} == {
        ("mute", "distributed"), ("snooze", "pytorch/pytorch")}
    assert [entry.by for entry in store.suppressions()] == [MEMBER]
    assert first(fake_slack).edits == 3
    server.click(click(fake_slack, first(fake_slack), "rw_unmute"))
    server.click(click(fake_slack, first(fake_slack), "rw_snooze"))
    server.click(click(fake_slack, first(fake_slack), "rw_not_us"))
    running.slack.clicks.settle()
    assert store.quiet_entries() == [] and store.suppressions() == []
    assert elements(first(fake_slack), "rw_unmute") == []


def test_an_envelope_delivered_again_is_done_once(connected, fake_slack):
    running, server = connected
    payload = click(fake_slack, first(fake_slack), "rw_all_uses")
    envelope = server.click(payload)
    server.click(payload, again=envelope)  # its acknowledgement came late: Slack retries
    running.slack.clicks.settle()
    assert sum("All 48 uses of" in m.all_text() for m in fake_slack.thread(
        first(fake_slack).ts)) == 1


def test_a_click_from_outside_the_channel_is_refused(connected, fake_slack):
    running, server = connected
    server.click(click(fake_slack, first(fake_slack), "rw_not_us", user=STRANGER))
    running.slack.clicks.settle()
    assert running.runtime.store.suppressions() == []
    assert ["Only members" in r["text"] for r in fake_slack.responses] == [True]
    assert first(fake_slack).edits == 0
