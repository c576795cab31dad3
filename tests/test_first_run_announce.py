"""A repo's own ``first_run_announce`` (a ``[[repos]]`` key) decides how many of its newest
releases its first poll announces; a repo without the key takes ``poll.first_run_announce``."""

from __future__ import annotations

import json
from pathlib import Path

REPOS = """
[poll]
first_run_announce = 2

[[repos]]
name = "pytorch/pytorch"
first_run_announce = 3

[[repos]]
name = "pytorch/xla"
first_run_announce = 0

[[repos]]
name = "pytorch/vision"
"""


def announced(config: Path) -> list[tuple[str, str, str]]:
    path = config.parent / "events.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [(e["repo"], e["tag"], e["event"]) for e in map(json.loads, lines)]


def test_each_repo_s_first_poll_announces_as_many_as_its_own_key_says(
        fake_github, write_config, run_cli):
    for repo in ("pytorch/pytorch", "pytorch/xla", "pytorch/vision"):
        for n in range(5):  # v1.0 oldest, v1.4 newest
            fake_github.add_release(repo, tag=f"v1.{n}", body=f"- Fix case {n} (#{n + 1})")
    config = write_config(REPOS, repos=())
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    assert announced(config) == [
        ("pytorch/pytorch", "v1.2", "published"), ("pytorch/pytorch", "v1.3", "published"),
        ("pytorch/pytorch", "v1.4", "published"),  # its own 3
        ("pytorch/vision", "v1.3", "published"), ("pytorch/vision", "v1.4", "published"),
    ]  # pytorch/xla's own 0: none; pytorch/vision: poll.first_run_announce, 2
    status = json.loads(run_cli("--config", str(config), "status", "--json").stdout)
    assert {r["repo"]: r["releases_known"] for r in status["repos"]} == {
        "pytorch/pytorch": 5, "pytorch/xla": 5, "pytorch/vision": 5}  # the rest is history

    fake_github.add_release("pytorch/xla", tag="v1.5", body="- Fix case 5 (#6)")
    assert run_cli("--config", str(config), "poll").code == 0
    assert announced(config)[-1] == ("pytorch/xla", "v1.5", "published")  # 0: history only
    assert len(announced(config)) == 6
