"""Text from GitHub is untrusted: control characters and bidi overrides never reach a terminal,
a log line or Slack raw, and a release tag cannot forge a log line."""

from __future__ import annotations

import logging

import pytest

from watcher.logs import setup_logging
from watcher.untrusted import clean_line, clean_text, escape_controls

CONSOLE = '[[notifiers]]\nname = "console"\ntype = "console"\n'


@pytest.mark.parametrize(("raw", "line", "text", "escaped"), [
    ("v1\n\x1b[31mred", "v1\\n\\x1b[31mred", "v1\n\\x1b[31mred", "v1\\n\\x1b[31mred"),
    ("bell\x07 and\r\nCRLF", "bell\\x07 and\\r\\nCRLF", "bell\\x07 and\nCRLF",
     "bell\\x07 and\\r\\nCRLF"),
    ("txt\u202eexe.pdf", "txt\\u202eexe.pdf", "txt\\u202eexe.pdf", "txt\\u202eexe.pdf"),
    ("c1\x9bcsi\x85", "c1\\x9bcsi\\x85", "c1\\x9bcsi\\x85", "c1\\x9bcsi\\x85"),
    ("tab\there", "tab here", "tab\there", "tab\\there"),
], ids=["esc-newline", "bel-crlf", "rlo", "c1", "tab"])
def test_controls_are_shown_escaped(raw, line, text, escaped):
    assert clean_line(raw) == line
    assert clean_text(raw) == text
    assert escape_controls(raw) == escaped


def test_a_hostile_tag_is_one_log_line_and_no_raw_escape(fake_github, write_config, run_cli):
    tag = "v9\n2026-11-30T13:00:00Z error watcher.delivery.deliver: forged\x1b[2J"
    fake_github.add_release("pytorch/pytorch", tag=tag, name="\x1b]0;pwned\x07PyTorch 9",
                            body="## CUDA\n" + "- Fix a thing (#1)\n" * 200)
    config = write_config('[poll]\nmax_body_chars = 1000\n', repos=("pytorch/pytorch",),
                          notifiers=CONSOLE)
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    truncation = [line for line in result.stderr.splitlines() if "max_body_chars" in line]
    assert len(truncation) == 1 and "v9\\n2026-11-30T13:00:00Z" in truncation[0]
    assert not any(line.startswith("2026-11-30T13:00:00Z error") for line in
                   result.stderr.splitlines())
    for stream in (result.stdout, result.stderr):
        assert "\x1b" not in stream and "\x07" not in stream
    assert "PyTorch 9" in result.stdout


def test_slack_sdk_errors_before_a_retry_are_not_errors_of_ours(capsys):
    setup_logging(verbose=False, log_format="text")
    try:
        logging.getLogger("slack_sdk.web.base_client").error(
            "Failed to send a request to Slack API server: <urlopen error timed out>")
        assert capsys.readouterr().err == ""
        setup_logging(verbose=True, log_format="text")
        logging.getLogger("slack_sdk.web.base_client").error("Failed to send a request")
        assert " info slack_sdk.web.base_client: Failed to send a request" in (
            capsys.readouterr().err)
    finally:
        logging.getLogger().handlers.clear()
