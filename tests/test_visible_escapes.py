"""Control characters are shown, never deleted and never obeyed: a deleted NUL would make
``v\\x001`` read as ``v1``; Slack's error strings in ``status`` and what the operator typed
(a ``--config`` path, a notifier name) echoed in an error show their escapes visibly."""

from __future__ import annotations

import pytest
from conftest import release_notes
from fakes.slack import TEXT_CT, WEBHOOK_PATH, Scripted

from handlers.slack.text import escape, plain
from watcher.untrusted import clean_line, clean_text

WEBHOOK = '[[notifiers]]\nname = "hook"\ntype = "slack"\ndelivery = "webhook"\n'


@pytest.mark.parametrize(("raw", "line", "text"), [
    ("v\x001", "v\\x001", "v\\x001"),
    ("v\x7f1\x1b", "v\\x7f1\\x1b", "v\\x7f1\\x1b"),
    ("v1\u2028forged", "v1\\u2028forged", "v1\\u2028forged"),
    ("a\u200fb", "a\\u200fb", "a\\u200fb"),
    ("one\ntwo\rthree", "one\\ntwo\\rthree", "one\ntwo\nthree"),
], ids=["nul", "del-esc", "line-separator", "rlm", "line-breaks"])
def test_a_control_character_is_shown_not_deleted(raw, line, text):
    assert clean_line(raw) == line
    assert clean_text(raw) == text
    assert clean_line("v\x001") != clean_line("v1")


def test_slack_shows_the_escapes_too():
    assert plain("PyTorch v\x001") == "PyTorch v\\x001"
    assert escape("tag v\x001 \u202eevil") == "tag v\\x001 \\u202eevil"


def test_status_shows_slack_error_strings_escaped(fake_github, fake_slack, write_config,
                                                  run_cli):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=release_notes("xla/v2.0.0.md"))
    config = write_config(repos=("pytorch/xla",), notifiers=WEBHOOK)
    fake_slack.script(WEBHOOK_PATH, Scripted(400, {"content-type": TEXT_CT},
                                             "invalid_blocks\x1b]0;pwned\x07\x1b[2J"))
    env = {"SLACK_WEBHOOK_URL": fake_slack.webhook_url}
    assert run_cli("--config", str(config), "poll", env=env).code == 1
    status = run_cli("--config", str(config), "status", env=env)
    assert "HTTP 400 invalid_blocks\\x1b]0;pwned\\x07\\x1b[2J" in status.stdout
    assert "\x1b" not in status.stdout and "\x07" not in status.stdout


def test_a_config_path_is_echoed_escaped_on_one_line(run_cli, tmp_path):
    path = tmp_path / "rw\x1b[31m\nrelease-watch: all good.toml"
    result = run_cli("--config", str(path), "poll")
    assert result.code == 2
    shown = str(tmp_path) + "/rw\\x1b[31m\\nrelease-watch: all good.toml"
    assert result.stderr == f"release-watch: config file {shown} does not exist\n"


def test_a_config_path_in_problems_and_in_config_check_is_escaped(write_config, run_cli,
                                                                  tmp_path):
    path = tmp_path / "rw\x1b[2J.toml"
    path.write_text(write_config().read_text() + '[poll]\nintervall = "1m"\n')
    result = run_cli("--config", str(path), "config", "check")
    assert result.code == 2
    assert result.stderr == (f"release-watch: {tmp_path}/rw\\x1b[2J.toml: poll.intervall: "
                             "unknown key; did you mean `interval`?\n")


def test_a_notifier_name_is_echoed_escaped(write_config, run_cli):
    config = write_config(notifiers='[[notifiers]]\nname = "weekly\\u001b[2J\\u202e"\n'
                                    'type = "console"\nmode = "digest"\n')
    result = run_cli("--config", str(config), "digest", "--notifier", "nope\x1b[2J")
    assert result.code == 2
    assert result.stderr == ("release-watch: no digest notifier named 'nope\\x1b[2J'; digest "
                             "notifiers: weekly\\x1b[2J\\u202e\n")
