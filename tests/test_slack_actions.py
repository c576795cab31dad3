"""The buttons of a release's first message, clicked at the daemon's own listener
(``/slack/interactive``), signed as Slack signs them: every action round-trips through the
store and back into Slack (the fake), and unsigned, replayed and foreign clicks do nothing."""

from __future__ import annotations

import logging
import re

import httpx
import pytest
from actions_support import (
    CHANNEL,
    MEMBER,
    NOTES,
    STRANGER,
    USES,
    announced,
    click,
    daemon,
    elements,
    first_message,
    form,
    prepared,
)
from subscribe_support import SIGNING_SECRET, signed

from watcher.delivery import release_ref

PLACE = re.compile(r"loader_\d\.py:\d+")


@pytest.fixture
def served(fake_github, fake_slack, write_config, clock, tmp_path):
    code = prepared(fake_github, fake_slack, tmp_path / "trainer")
    with daemon(write_config, fake_slack, clock, code, {"SLACK_SIGNING_SECRET": SIGNING_SECRET},
                listen=True) as running:
        running.release_id = announced(running, fake_github)
        assert running.service.listener is not None
        with httpx.Client(base_url=running.service.listener.url) as http:
            yield running, http


def post(http, clock, payload, headers=None):
    body = form(payload)
    return http.post("/slack/interactive", content=body,
                     headers=signed(body, clock.epoch()) if headers is None else headers)


def done(running, answer):
    assert answer.status_code == 200, answer.text
    running.slack.clicks.settle()


def test_all_uses_replies_in_the_thread_with_every_one_of_the_48(served, fake_slack, clock):
    running, http = served
    first = first_message(fake_slack)
    assert "+45 more" in first.all_text()  # the parent shows three
    done(running, post(http, clock, click(fake_slack, first, "rw_all_uses")))
    replies = fake_slack.thread(first.ts)
    listed = set(PLACE.findall("\n".join(m.all_text() for m in replies)))
    assert len(listed) == USES == 48
    assert any("All 48 uses of" in m.all_text() for m in replies)


def test_unsigned_stale_and_replayed_clicks_are_refused_and_done_once(served, fake_slack,
                                                                       clock, caplog):
    running, http = served
    first = first_message(fake_slack)
    payload = click(fake_slack, first, "rw_mute", option="python_frontend")
    body = form(payload)
    with caplog.at_level(logging.WARNING):
        assert http.post("/slack/interactive", content=body).status_code == 401
        stale = signed(body, clock.epoch() - 301)
        assert http.post("/slack/interactive", content=body, headers=stale).status_code == 401
        assert http.post("/slack/interactive", content=body,
                         headers=signed(body, clock.epoch(), "wrong")).status_code == 401
    running.slack.clicks.settle()
    assert running.runtime.store.quiet_entries() == []
    headers = signed(body, clock.epoch())
    done(running, http.post("/slack/interactive", content=body, headers=headers))
    assert http.post("/slack/interactive", content=body, headers=headers).status_code == 401
    running.slack.clicks.settle()
    assert len(running.runtime.store.quiet_entries()) == 1
    assert first_message(fake_slack).edits == 1  # updated once, not twice
    assert SIGNING_SECRET not in caplog.text


def test_a_click_by_someone_not_in_the_channel_is_refused_with_an_ephemeral_line(
        served, fake_slack, clock):
    running, http = served
    first = first_message(fake_slack)
    done(running, post(http, clock, click(fake_slack, first, "rw_snooze", user=STRANGER)))
    assert running.runtime.store.quiet_entries() == []
    (answer,) = fake_slack.responses
    assert answer["response_type"] == "ephemeral" and "Only members" in answer["text"]
    assert first_message(fake_slack).edits == 0


def test_mute_leaves_the_subsystem_out_of_the_next_release_and_unmute_brings_it_back(
        served, fake_github, fake_slack, clock):
    running, http = served
    first = first_message(fake_slack)
    done(running, post(http, clock, click(fake_slack, first, "rw_mute", option="distributed")))
    (entry,) = running.runtime.store.quiet_entries()
    assert (entry.what, entry.target, entry.by) == ("mute", "distributed", MEMBER)
    updated = first_message(fake_slack)
    assert [e["value"] for _, e in elements(updated, "rw_unmute")] == ["distributed"]
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0",
                            body="## Distributed\n- Fix c10d (#301)\n## CUDA\n- Fix a (#302)\n")
    running._poll_job()
    text = "\n".join(m.all_text() for m in fake_slack.channel_messages(CHANNEL))
    assert "Fix a" in text and "Fix c10d" not in text
    done(running, post(http, clock, click(fake_slack, updated, "rw_unmute")))
    assert running.runtime.store.quiet_entries() == []
    assert elements(first_message(fake_slack), "rw_unmute") == []


def test_snooze_stops_the_releases_edits_here(served, fake_github, fake_slack, clock):
    running, http = served
    first = first_message(fake_slack)
    done(running, post(http, clock, click(fake_slack, first, "rw_snooze")))
    (entry,) = running.runtime.store.quiet_entries()
    assert (entry.what, entry.target) == ("snooze",
                                          release_ref("pytorch/pytorch", running.release_id))
    label = elements(first_message(fake_slack), "rw_snooze")[0][1]["text"]["text"]
    assert label == "Unsnooze this release"
    replies = len(fake_slack.thread(first.ts))
    fake_github.edit_release("pytorch/pytorch", running.release_id,
                             body=NOTES + "- Fix another hang (#204)\n")
    running._poll_job()
    assert len(fake_slack.thread(first.ts)) == replies  # no reply, no redraw
    assert first_message(fake_slack).edits == 1  # the click's own update only


def test_not_us_is_kept_with_who_clicked_counted_in_the_redraw_and_undone(
        served, fake_github, fake_slack, clock):
    running, http = served
    first = first_message(fake_slack)
    done(running, post(http, clock, click(fake_slack, first, "rw_not_us")))
    (entry,) = running.runtime.store.suppressions()
    assert entry.by == MEMBER and entry.at == clock() and entry.path.startswith("loader_")
    label = elements(first_message(fake_slack), "rw_not_us")[0][1]["text"]["text"]
    assert label.startswith("Undo not us: loader_")
    fake_github.edit_release("pytorch/pytorch", running.release_id,
                             body=NOTES + "- Fix another hang (#204)\n")
    running._poll_job()  # the edit's analysis leaves the use out, counted
    redrawn = first_message(fake_slack).all_text()
    assert "1 use marked not us" in redrawn and "+44 more" in redrawn
    done(running, post(http, clock, click(fake_slack, first_message(fake_slack), "rw_not_us")))
    assert running.runtime.store.suppressions() == []  # a second click undoes it
