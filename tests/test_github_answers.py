"""GitHub answers (and a token) the client used to end in a traceback or a repo failing for
good: a byte that is not UTF-8 in one release body, JSON nested 100,000 deep, a token no HTTP
header can carry, a renamed repo answering 301. Each either works, saying so once, or is one
line naming what is wrong."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

import pytest
from conftest import TOKEN
from fakes.github import Scripted
from pydantic import SecretStr

from watcher.github.client import GitHubClient, RetryPolicy
from watcher.store.records import RepoState

LIST = "/repos/pytorch/pytorch/releases"


def events(config: Path) -> list[dict]:
    path = config.parent / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def one_line(text: str) -> str:
    assert "Traceback" not in text
    assert text.count("\n") == 1, text
    return text


def raw(fake_github, repo: str, mark: str, replacement: bytes) -> Scripted:
    """The listing GitHub would serve, with ``mark`` replaced by raw bytes (not UTF-8)."""
    body = json.dumps(fake_github.releases(repo)).encode()
    return Scripted(200, {}, body.replace(mark.encode(), replacement))


# ---- a byte that is not UTF-8 -----------------------------------------------------------------

def test_an_invalid_utf8_byte_in_a_body_is_replaced_and_said_once(fake_github, write_config,
                                                                  run_cli):
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body="- Fix a crash (#1)")
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0 MARK",
                            body="- Fix MARK decoding (#7)\n- Keep \u00e9 as it is (#8)\n")
    fake_github.add_release("pytorch/xla", tag="v2.0", body="- XLA thing (#5)")
    fake_github.script(LIST, raw(fake_github, "pytorch/pytorch", "MARK", b"\xff"))
    config = write_config()
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    [newest, xla] = events(config)
    assert (newest["repo"], newest["tag"]) == ("pytorch/pytorch", "v2.7.0")
    assert [item["text"] for item in newest["items"]] == ["Fix \ufffd decoding (#7)",
                                                          "Keep \u00e9 as it is (#8)"]
    assert xla["repo"] == "pytorch/xla"
    said = [line for line in result.stderr.splitlines() if "not valid UTF-8" in line]
    assert len(said) == 1 and "warning" in said[0]  # once for the release, though twice in it
    assert "pytorch/pytorch" in said[0] and "release v2.7.0 " in said[0]
    assert "v2.6.0" not in result.stderr


def test_the_same_mangled_release_is_said_once_per_client(fake_github, caplog):
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body="- Fix MARK (#7)")
    answer = raw(fake_github, "pytorch/pytorch", "MARK", b"caf\xe9")  # Latin-1
    fake_github.script(LIST, answer, answer)
    http = GitHubClient.make_http(fake_github.url, SecretStr(TOKEN), timeout=5)
    client = GitHubClient(http, api_url=fake_github.url, policy=RetryPolicy(),
                          sleep=lambda _: None, rng=random.Random(0))
    with caplog.at_level(logging.WARNING, logger="watcher.github.exchange"):
        for _ in range(2):
            listing = client.list_releases("pytorch/pytorch", etags={}, per_page=30,
                                           max_pages=1)
            assert listing.releases[0].body == "- Fix caf\ufffd (#7)"
    http.close()
    assert [r.getMessage() for r in caplog.records] == [
        "pytorch/pytorch: release v2.7.0 holds text that is not valid UTF-8; it is shown "
        "with U+FFFD in its place"]


# ---- JSON nested 100,000 deep -------------------------------------------------------------

def test_json_nested_100000_deep_fails_that_repo_in_one_line(fake_github, write_config,
                                                             run_cli):
    fake_github.add_repo("pytorch/pytorch")
    fake_github.add_release("pytorch/xla", tag="v2.0", body="- XLA thing (#5)")
    deep = Scripted(200, {}, b"[" * 100_000 + b"]" * 100_000)
    fake_github.script(LIST, *[deep] * 4)  # the first try and its three retries
    config = write_config()
    result = run_cli("--config", str(config), "poll")
    assert result.code == 1
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    [error] = [line for line in result.stderr.splitlines() if " error " in line]
    assert "pytorch/pytorch: GitHub's answer is not a release listing (invalid JSON)" in error
    assert [e["repo"] for e in events(config)] == ["pytorch/xla"]  # the other repo still ran


# ---- a token no HTTP header can carry -------------------------------------------------------

@pytest.mark.parametrize("token", ["ghp_t\u00e9st_1234", "ghp_test\n1234", "ghp test"],
                         ids=["non-ascii", "newline", "space"])
def test_a_token_no_header_can_carry_is_a_configuration_error(fake_github, write_config,
                                                              run_cli, token):
    fake_github.add_repo("pytorch/pytorch")
    config = write_config()
    for command in (("poll",), ("config", "check", "--online")):
        result = run_cli("--config", str(config), *command, token=token)
        assert result.code == 2, (command, result.stderr)
        line = one_line(result.stderr)
        assert "GITHUB_TOKEN" in line and "HTTP header" in line
        assert token not in line and "t\u00e9st" not in line
    assert fake_github.requests == []


# ---- a renamed repo -------------------------------------------------------------------------

@pytest.mark.parametrize("location", ["id", "name"])
def test_a_renamed_repo_is_followed_and_the_config_told_once(fake_github, write_config,
                                                             run_cli, location):
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body="- Fix a crash (#1)")
    fake_github.add_repo("pytorch/xla")
    config = write_config()
    assert run_cli("--config", str(config), "poll").code == 0
    fake_github.rename_repo("pytorch/pytorch", "pytorch/torch", location=location)
    fake_github.add_release("pytorch/torch", tag="v2.7.0", body="- New (#2)")
    first = run_cli("--config", str(config), "poll")
    assert first.code == 0, first.stderr
    assert [e["tag"] for e in events(config)] == ["v2.6.0", "v2.7.0"]
    said = [line for line in first.stderr.splitlines() if "renamed or transferred" in line]
    assert len(said) == 1 and " warning " in said[0]
    assert "pytorch/pytorch: GitHub answers for it as pytorch/torch" in said[0]
    assert "the config should name pytorch/torch" in said[0]
    assert {r.status for r in fake_github.requests_to(LIST)} == {200, 301}

    again = run_cli("--config", str(config), "poll")
    assert again.code == 0 and "renamed" not in again.stderr  # said once
    status = run_cli("--config", str(config), "status")
    assert ("  moved: GitHub answers for it as pytorch/torch (renamed or transferred); name "
            "pytorch/torch in the config") in status.stdout
    data = json.loads(run_cli("--config", str(config), "status", "--json").stdout)
    moved = {repo["repo"]: repo["moved_to"] for repo in data["repos"]}
    assert moved == {"pytorch/pytorch": "pytorch/torch", "pytorch/xla": None}


def test_a_redirect_to_another_host_is_not_followed(fake_github, write_config, run_cli):
    fake_github.add_repo("pytorch/pytorch")
    fake_github.add_release("pytorch/xla", tag="v2.0", body="- XLA thing (#5)")
    away = "http://203.0.113.9/repos/pytorch/pytorch/releases"
    fake_github.script(LIST, Scripted(301, {"location": away}, b"{}"))
    config = write_config()
    result = run_cli("--config", str(config), "poll")
    assert result.code == 1
    [error] = [line for line in result.stderr.splitlines() if " error " in line]
    assert "pytorch/pytorch: GitHub redirects to another host (203.0.113.9)" in error
    assert [e["repo"] for e in events(config)] == ["pytorch/xla"]


def test_a_repo_state_stored_before_moved_to_existed_still_reads():
    old = json.dumps({"baseline_at": None, "consecutive_failures": 2, "releases_known": 3})
    state = RepoState.from_row("pytorch/pytorch", old, None, None)
    assert state.moved_to is None and state.consecutive_failures == 2
    noted = state.model_copy(update={"moved_to": "pytorch/torch"})
    assert RepoState.from_row(*noted.row()).moved_to == "pytorch/torch"
