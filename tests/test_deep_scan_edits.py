"""An edit to a release the store knows is news however deep it lies and whenever the deep
scan first reads its page: only releases the store never knew, older than all it knew, are
history."""

from __future__ import annotations

import json
from datetime import timedelta

PAGES = "per_page = 2\ndeep_scan = \"1d\"\ndeep_scan_pages = 10\n"


def events(config) -> list[tuple[str, str]]:
    path = config.parent / "events.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [(json.loads(line)["event"], json.loads(line)["tag"]) for line in lines]


def release_pages(fake_github) -> list[tuple[str, int]]:
    return [(r.query.get("page", "1"), r.status) for r in fake_github.requests
            if r.path == "/repos/pytorch/xla/releases"]


def test_an_edit_to_a_known_release_that_slid_to_page_2_is_announced_by_the_first_deep_scan(
        fake_github, write_config, run_cli, clock):
    """The baseline knows v2.3 and v2.4 (page 1); two new releases push them to page 2, which
    no poll has read yet; v2.3 is edited there. The first deep scan reads page 2 for the first
    time: v2.0 to v2.2 are history, v2.3's edit is news."""
    made = [fake_github.add_release("pytorch/xla", tag=f"v2.{n}", body=f"- Fix {n} (#{n + 1})")
            for n in range(5)]
    config = write_config(repos=("pytorch/xla",), github=PAGES)
    assert run_cli("--config", str(config), "poll").code == 0
    for n in (5, 6):
        fake_github.add_release("pytorch/xla", tag=f"v2.{n}", body=f"- Fix {n} (#{n + 1})")
    assert run_cli("--config", str(config), "poll").code == 0
    assert events(config) == [("published", "v2.4"), ("published", "v2.5"),
                              ("published", "v2.6")]
    fake_github.edit_release("pytorch/xla", made[3]["id"], body="- Fix 3, properly (#4)")
    assert run_cli("--config", str(config), "poll").code == 0  # page 1: 304, nothing to see
    fake_github.reset_requests()
    clock.now += timedelta(days=1)
    assert run_cli("--config", str(config), "poll").code == 0
    assert ("2", 200) in release_pages(fake_github)  # the deep scan reached page 2
    assert events(config)[3:] == [("edited", "v2.3")]


def test_an_edit_on_a_page_the_baseline_read_is_announced_by_the_first_deep_scan(
        fake_github, write_config, run_cli, clock):
    """max_pages = 3: the baseline read every page, so every release is known; an edit of the
    oldest (page 3) while page 1 answers 304 is found by the first deep scan."""
    made = [fake_github.add_release("pytorch/xla", tag=f"v2.{n}", body=f"- Fix {n} (#{n + 1})")
            for n in range(5)]
    config = write_config(repos=("pytorch/xla",), github=PAGES + "max_pages = 3\n")
    assert run_cli("--config", str(config), "poll").code == 0
    fake_github.edit_release("pytorch/xla", made[0]["id"], body="- Fix 0, properly (#1)")
    assert run_cli("--config", str(config), "poll").code == 0
    assert events(config) == [("published", "v2.4")]  # page 1 unchanged: a routine 304
    clock.now += timedelta(days=1)
    assert run_cli("--config", str(config), "poll").code == 0
    assert events(config)[1:] == [("edited", "v2.0")]
