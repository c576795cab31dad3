"""An edit to a release the store knows is news however deep it lies and whenever the deep
scan first reads its page: only releases the store never knew, older than all it knew, are
history. With ``github.deep_scan`` on, a repo's baseline reads every page a deep scan would, so
every release within the deep scan's reach is known from the first poll."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

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
    """The baseline knows all five (pages 1-3); two new releases push v2.4 and v2.3 to page
    2, which routine polls (page 1) do not read; v2.3 is edited there. The first deep scan
    reads page 2 again: v2.3's edit is news."""
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


def test_an_edit_beyond_the_pages_a_routine_poll_reads_before_the_first_deep_scan_is_announced(
        fake_github, write_config, run_cli, clock):
    """max_pages = 1 (the default): the baseline still reads every page a deep scan would, so
    v2.0 (page 3) is known from the first poll and its edit a day later is news, not the
    history a deep scan takes releases the store never knew for."""
    made = [fake_github.add_release("pytorch/xla", tag=f"v2.{n}", body=f"- Fix {n} (#{n + 1})")
            for n in range(5)]
    config = write_config(repos=("pytorch/xla",), github=PAGES)
    assert run_cli("--config", str(config), "poll").code == 0
    fake_github.edit_release("pytorch/xla", made[0]["id"], body="- Fix 0, SECURITY (#1)")
    fake_github.reset_requests()
    clock.now += timedelta(days=1)
    assert run_cli("--config", str(config), "poll").code == 0
    assert ("3", 200) in release_pages(fake_github)  # the deep scan read the edit
    assert events(config) == [("published", "v2.4"), ("edited", "v2.0")]


@pytest.mark.parametrize(("announce", "announced"), [(1, [("published", "v2.4")]), (0, [])])
def test_the_baseline_reads_the_deep_scan_pages_and_announces_only_the_newest(
        fake_github, write_config, run_cli, announce, announced):
    """The baseline reads pages 1-3 (the last), without ETags, and records all five releases
    as history: it announces the newest alone (poll.first_run_announce = 1), or nothing (0).
    The next poll is a routine one: page 1, conditional."""
    for n in range(5):
        fake_github.add_release("pytorch/xla", tag=f"v2.{n}", body=f"- Fix {n} (#{n + 1})")
    config = write_config(f"[poll]\nfirst_run_announce = {announce}\n",
                          repos=("pytorch/xla",), github=PAGES)
    assert run_cli("--config", str(config), "poll").code == 0
    assert release_pages(fake_github) == [("1", 200), ("2", 200), ("3", 200)]
    assert all("if-none-match" not in r.headers for r in fake_github.requests)
    assert events(config) == announced
    assert "releases known: 5" in run_cli("--config", str(config), "status").stdout
    fake_github.reset_requests()
    assert run_cli("--config", str(config), "poll").code == 0
    assert release_pages(fake_github) == [("1", 304)]
    assert events(config) == announced


def test_a_repo_with_no_releases_yet_is_baselined_so_its_first_release_is_news(
        fake_github, write_config, run_cli):
    """An empty page 1 is the whole listing of a repo without releases: the baseline is taken
    (0 releases), so the first release it ever makes is announced even with
    first_run_announce = 0."""
    fake_github.add_repo("pytorch/xla")
    config = write_config("[poll]\nfirst_run_announce = 0\n", repos=("pytorch/xla",),
                          github=PAGES)
    assert run_cli("--config", str(config), "poll").code == 0
    fake_github.add_release("pytorch/xla", tag="v2.0", body="- Fix 0 (#1)")
    assert run_cli("--config", str(config), "poll").code == 0
    assert events(config) == [("published", "v2.0")]


def test_releases_a_one_page_baseline_never_read_are_history_to_the_first_deep_scan(
        fake_github, write_config, run_cli, clock):
    """A baseline taken with deep_scan = "0" (or by a version that read page 1 only) knows
    v2.3 and v2.4; when deep scans are turned on, the first one finds v2.0-v2.2 on pages 2
    and 3: older than all the store knew, they are history, recorded and not announced."""
    for n in range(5):
        fake_github.add_release("pytorch/xla", tag=f"v2.{n}", body=f"- Fix {n} (#{n + 1})")
    config = write_config(repos=("pytorch/xla",), github=PAGES.replace('"1d"', '"0"'))
    assert run_cli("--config", str(config), "poll").code == 0
    assert release_pages(fake_github) == [("1", 200)]
    assert "releases known: 2" in run_cli("--config", str(config), "status").stdout
    config = write_config(repos=("pytorch/xla",), github=PAGES)
    fake_github.reset_requests()
    clock.now += timedelta(days=1)
    assert run_cli("--config", str(config), "poll").code == 0
    assert ("3", 200) in release_pages(fake_github)
    assert events(config) == [("published", "v2.4")]
    assert "releases known: 5" in run_cli("--config", str(config), "status").stdout


def test_after_the_baseline_the_next_deep_scan_falls_at_the_repos_place_in_the_day(
        fake_github, write_config, run_cli, clock):
    """The baseline is the first deep scan, but the next is not a whole day on for every repo
    baselined together: each falls at its own place in the day (spread), so a watch list
    baselined on one poll is deep-scanned over the day, as before."""
    from watcher.github.deep_scan import spread

    for n in range(5):
        fake_github.add_release("pytorch/xla", tag=f"v2.{n}", body=f"- Fix {n} (#{n + 1})")
    config = write_config(repos=("pytorch/xla",), github=PAGES)
    assert run_cli("--config", str(config), "poll").code == 0
    due = timedelta(days=1) * (1 - spread("pytorch/xla"))
    fake_github.reset_requests()
    clock.now += due - timedelta(minutes=1)
    assert run_cli("--config", str(config), "poll").code == 0
    assert release_pages(fake_github) == [("1", 304)]  # not yet
    fake_github.reset_requests()
    clock.now += timedelta(minutes=2)
    assert run_cli("--config", str(config), "poll").code == 0
    assert release_pages(fake_github) == [("1", 304), ("2", 304), ("3", 304)]
