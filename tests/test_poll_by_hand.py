"""What a person running ``release-watch poll`` by hand sees on stderr: that nothing was new,
that a wait for GitHub's per-minute ceiling is a wait (not a hang), and at once why GitHub's
name does not resolve."""

from __future__ import annotations

import pytest

_PROXIES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def _lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_a_poll_that_finds_nothing_says_so(fake_github, write_config, run_cli):
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body="- Fix a crash (#1)")
    fake_github.add_release("pytorch/xla", tag="v2.0", body="- Fix a hang (#2)")
    config = write_config()
    first = run_cli("--config", str(config), "poll")
    assert first.code == 0 and "nothing new" not in first.stderr  # a baseline is something
    again = run_cli("--config", str(config), "poll")
    assert again.code == 0, again.stderr
    (line,) = _lines(again.stderr)
    assert line.endswith("nothing new (2 repos checked, 2 unchanged)")
    fake_github.add_release("pytorch/xla", tag="v2.1", body="- Add X (#3)")
    later = run_cli("--config", str(config), "poll")
    assert "nothing new" not in later.stderr


def test_a_long_wait_for_the_per_minute_ceiling_is_said_before_it_starts(
        fake_github, write_config, run_cli, clock):
    names = tuple(f"org/repo-{n}" for n in range(9))
    for name in names:
        fake_github.add_repo(name)
    config = write_config(repos=names, github="max_requests_per_minute = 7\nconcurrency = 1")
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    waits = [line for line in _lines(result.stderr) if "waiting" in line]
    assert len(waits) == 1 and clock.slept == [pytest.approx(60.0)]
    assert waits[0].endswith("waiting 60s before the next GitHub REST request, to stay within "
                             "github.max_requests_per_minute = 7 (counting every release-watch "
                             "process on this store)")


def test_a_name_that_does_not_resolve_is_said_at_once(write_config, run_cli, clock, tmp_path,
                                                      monkeypatch):
    for name in _PROXIES:
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "rw.toml"
    config.write_text('[github]\napi_url = "https://nonexistent.invalid"\n[store]\n'
                      'path = "store"\n[[repos]]\nname = "pytorch/pytorch"\n'
                      '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "e.jsonl"\n')
    result = run_cli("--config", str(config), "poll")
    assert result.code == 1
    problems = [line for line in _lines(result.stderr) if "does not resolve" in line]
    assert len(problems) == 1 and "after 1 try" in problems[0]
    assert not any("retry" in line for line in _lines(result.stderr))
    assert clock.slept == []  # no backoff before saying it
