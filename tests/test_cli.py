"""The command line: offline commands, config errors, status and its health check."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from datetime import timedelta

import pytest
from conftest import RELEASES, TOKEN, release_notes

from watcher.config import find_config_file


@pytest.mark.parametrize("name", ["pytorch/v1.13.1.md", "pytorch/v2.7.0.md", "xla/v2.0.0.md"])
def test_classify_json(run_cli, name):
    result = run_cli("classify", str(RELEASES / name), "--format", "json")
    assert result.code == 0
    items = json.loads(result.stdout)["items"]
    assert items and all(set(i) - {"group"} == {"subsystem", "kind", "text", "section", "prs",
                                                "decided_by", "confidence"} for i in items)
    assert "items decided" not in result.stdout


def test_classify_reads_stdin_and_explains(run_cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("## Distributed\n- Fix FSDP hang (#1)\n"))
    result = run_cli("classify", "-", "--explain")
    assert result.code == 0
    assert "distributed/fsdp" in result.stdout and "heading 'Distributed'" in result.stdout
    assert result.stdout.rstrip().endswith(
        "1 item: 1 by heading, 0 by PR label, 0 by rule, 0 by model")


def test_classify_explain_lists_headings_it_does_not_know(run_cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(
        "## Distributed\n### Shiny New Area\n- Fix it (#1)\n- Fix that (#2)\n"))
    result = run_cli("classify", "-", "--explain")
    assert "headings the taxonomy does not know" in result.stdout
    assert "  Shiny New Area\n" in result.stdout


def test_diff_json(run_cli, tmp_path):
    old, new = tmp_path / "old.md", tmp_path / "new.md"
    old.write_text("- Fix A (#1)\n- B (#2)\n")
    new.write_text("- Fix A better (#1)\n- C (#3)\n")
    result = run_cli("diff", str(old), str(new), "--format", "json")
    assert result.code == 0
    items = json.loads(result.stdout)["items"]
    assert [(i["change"], i["text"]) for i in items] == [
        ("changed", "Fix A better (#1)"), ("added", "C (#3)"), ("removed", "B (#2)")]
    assert items[0]["old_text"] == "Fix A (#1)" and "old_text" not in items[1]


def test_classify_and_diff_show_links_as_the_console_does(run_cli, tmp_path):
    """Real 2.10 notes cite PRs as ``([#166357](https://github.com/…))``; the text output shows
    ``#166357`` (``pytorch/pytorch#166357`` when no ``--repo`` says whose notes these are), as
    ``poll`` does, and an item's controls are escaped, never passed through."""
    notes = (RELEASES / "pytorch/v2.10.0.md").read_text()
    cited = re.findall(r"\(\[#(\d+)\]\(https://github\.com/pytorch/pytorch/pull/\d+\)\)", notes)
    assert len(cited) > 100
    anywhere = run_cli("classify", str(RELEASES / "pytorch/v2.10.0.md"))
    own = run_cli("classify", "--repo", "pytorch/pytorch", str(RELEASES / "pytorch/v2.10.0.md"))
    for result, shown in ((anywhere, "pytorch/pytorch#{}"), (own, "#{}")):
        assert "](https://github.com/pytorch/pytorch/pull/" not in result.stdout
        assert sum(f"({shown.format(number)})" in result.stdout for number in cited[:50]) == 50
    old, new = tmp_path / "old.md", tmp_path / "new.md"
    old.write_text("- Fix A ([#1](https://github.com/pytorch/pytorch/pull/1))\n")
    new.write_text("- Fix A better\x1b[2J ([#1](https://github.com/pytorch/pytorch/pull/1))\n")
    changed = run_cli("diff", str(old), str(new))
    assert "] Fix A better\\x1b[2J (pytorch/pytorch#1)\n    was: Fix A (pytorch/pytorch#1)\n" in (
        changed.stdout)


def test_missing_input_file_is_one_line_exit_2(run_cli):
    result = run_cli("classify", "/nonexistent/notes.md")
    assert result.code == 2
    assert result.stderr.strip().count("\n") == 0 and "cannot read" in result.stderr


@pytest.mark.parametrize(("toml", "message"), [
    ("[poll]\nintervall = \"5m\"\n", "poll.intervall: unknown key"),
    ("[poll]\ninterval = \"5 minutes\"\n", "not a duration"),
    ("[github\n", "not valid TOML"),
    ('[[repos]]\nname = "not a repo"\n', "is not OWNER/NAME"),
    ('[[notifiers]]\nname = "x"\ntype = "carrier-pigeon"\n', "unknown notifier type"),
    ('[[notifiers]]\nname = "x"\ntype = "console"\nkinds = ["bugfix"]\n', "is not a kind"),
    ('[[notifiers]]\nname = "x"\ntype = "jsonl"\n', "path: required, but missing"),
    ('[classify]\nheadings = { "Foo" = "nope" }\n', "is not a subsystem id"),
], ids=["misspelled", "duration", "toml", "repo", "type", "kind", "missing", "rule"])
def test_broken_config_is_one_clear_line_and_exit_2(run_cli, tmp_path, toml, message):
    path = tmp_path / "bad.toml"
    path.write_text(toml)
    result = run_cli("--config", str(path), "config", "check")
    assert result.code == 2
    assert message in result.stderr
    assert result.stderr.strip().count("\n") == 0
    assert "Traceback" not in result.stderr


def test_missing_config_file(run_cli, tmp_path):
    result = run_cli("--config", str(tmp_path / "nope.toml"), "poll")
    assert result.code == 2 and "does not exist" in result.stderr


def test_config_check_masks_secrets(run_cli, tmp_path):
    result = run_cli("config", "check", env={"SLACK_BOT_TOKEN": "xoxb-secret-bot-token"})
    assert result.code == 0
    assert TOKEN not in result.stdout and "xoxb-secret-bot-token" not in result.stdout
    assert '"GITHUB_TOKEN": "*** (set)"' in result.stdout
    assert "jsonl" not in result.stdout or "path" in result.stdout
    assert "pytorch/pytorch" in result.stdout and "pytorch/xla" in result.stdout


def test_config_file_search_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert find_config_file(None, {}) is None
    (tmp_path / "release-watch.toml").write_text("")
    assert find_config_file(None, {}).name == "release-watch.toml"
    assert str(find_config_file(None, {"RELEASE_WATCH_CONFIG": "/x.toml"})) == "/x.toml"
    assert str(find_config_file("/y.toml", {"RELEASE_WATCH_CONFIG": "/x.toml"})) == "/y.toml"


def test_status_check_follows_the_last_successful_poll(fake_github, write_config, run_cli,
                                                       clock):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=release_notes("xla/v2.0.0.md"))
    config = write_config("[poll]\ninterval = \"10m\"\n", repos=("pytorch/xla",))
    assert run_cli("--config", str(config), "status", "--check").code == 1
    assert run_cli("--config", str(config), "poll").code == 0
    healthy = run_cli("--config", str(config), "status", "--check")
    assert healthy.code == 0 and "health: ok" in healthy.stdout
    clock.now += timedelta(minutes=31)
    stale = run_cli("--config", str(config), "status", "--check")
    assert stale.code == 1 and "UNHEALTHY" in stale.stdout
    assert run_cli("--config", str(config), "status").code == 0  # without --check: report only


def test_token_never_reaches_logs_even_verbose(fake_github, write_config, run_cli):
    fake_github.set_token("a-different-token")
    config = write_config(repos=("pytorch/xla",))
    result = run_cli("--verbose", "--config", str(config), "poll")
    assert result.code == 1 and "bad credentials" in result.stderr
    assert TOKEN not in result.stderr and TOKEN not in result.stdout
    json_logs = run_cli("--log-format", "json", "--config", str(config), "poll")
    line = json.loads(json_logs.stderr.strip().splitlines()[0])
    assert line["level"] == "error" and TOKEN not in json_logs.stderr


def test_python_dash_m_entry_point():
    result = subprocess.run([sys.executable, "-m", "watcher", "--help"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0 and "classify" in result.stdout


def test_unknown_command_is_usage_error(run_cli):
    assert run_cli("frobnicate").code == 2


def test_webhook_url_from_the_config_is_masked_in_logs(tmp_path, capsys):
    import logging

    from watcher.cli.commandline import State
    from watcher.logs import setup_logging

    secret = "https://hooks.slack.com/services/T1/B2/very-secret"
    path = tmp_path / "c.toml"
    path.write_text(f'[[notifiers]]\nname = "h"\ntype = "slack"\nwebhook_url = "{secret}"\n')
    setup_logging(verbose=True, log_format="text")
    State(str(path), True, "text", None).config()
    logging.getLogger("anything").error("posting to %s failed", secret)
    err = capsys.readouterr().err
    assert "posting to *** failed" in err and secret not in err


def test_version_comes_from_the_package_metadata(run_cli):
    from importlib.metadata import version

    result = run_cli("--version")
    assert result.code == 0
    assert result.stdout == f"release-watch {version('release-watch')}\n"


def test_global_options_work_after_the_subcommand_too(fake_github, write_config, run_cli):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=release_notes("xla/v2.0.0.md"))
    config = write_config(repos=("pytorch/xla",))
    after = run_cli("poll", "--config", str(config))
    assert after.code == 0, after.stderr
    assert (config.parent / "events.jsonl").read_text().count("\n") == 1
    before = run_cli("--config", str(config), "status")
    assert before.code == 0 and "pytorch/xla" in before.stdout
    nested = run_cli("config", "check", "--config", str(config))
    assert nested.code == 0 and f"# {config}: valid" in nested.stdout
    # After the subcommand wins over before it, as a repeated option does.
    assert run_cli("--config", "/nonexistent.toml", "status", "--config", str(config)).code == 0


def test_verbose_and_log_format_after_the_subcommand(fake_github, write_config, run_cli):
    fake_github.set_token("a-different-token")
    config = write_config(repos=("pytorch/xla",))
    result = run_cli("poll", "--config", str(config), "--log-format", "json", "-v")
    assert result.code == 1
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    assert any(line["logger"] == "httpx" for line in lines)  # -v: request lines are shown
    assert any("bad credentials" in line["message"] for line in lines)
    quiet = run_cli("poll", "--config", str(config), "--log-format", "json")
    assert quiet.stderr.startswith("{") and '"httpx"' not in quiet.stderr


def test_text_logs_start_with_an_iso_timestamp(fake_github, write_config, run_cli):
    fake_github.set_token("a-different-token")
    config = write_config(repos=("pytorch/xla",))
    result = run_cli("--config", str(config), "poll")
    logged = [line for line in result.stderr.splitlines() if "bad credentials" in line]
    assert logged, result.stderr
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (warning|error) watcher\.[\w.]+: ",
                    logged[0]), logged[0]


@pytest.mark.parametrize(("new", "flag", "code"), [
    ("- Fix A better (#1)\n", True, 1), ("- Fix A (#1)\n", True, 0),
    ("- Fix A better (#1)\n", False, 0)], ids=["differ", "same", "no-flag"])
def test_diff_exit_code_as_git_does(run_cli, tmp_path, new, flag, code):
    old_path, new_path = tmp_path / "old.md", tmp_path / "new.md"
    old_path.write_text("- Fix A (#1)\n")
    new_path.write_text(new)
    args = ["diff", str(old_path), str(new_path)] + (["--exit-code"] if flag else [])
    result = run_cli(*args)
    assert result.code == code
    assert ("1 item changed" in result.stdout) == (new != "- Fix A (#1)\n")
