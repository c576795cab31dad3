"""The deep scan: once per ``github.deep_scan`` a poll reads every page (each on its own ETag),
so edits and deletions of releases beyond page 1 are found while page 1 answers 304."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from watcher.github.deep_scan import deep_scan_due, first_deep_scan, spread
from watcher.store.records import RepoState

PAGES = "per_page = 2\ndeep_scan = \"1d\"\ndeep_scan_pages = 10"


def events(config):
    path = config.parent / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def release_pages(fake_github) -> list[tuple[str, int]]:
    return [(r.query.get("page", "1"), r.status) for r in fake_github.requests
            if r.path == "/repos/pytorch/xla/releases"]


@pytest.fixture
def five_releases(fake_github, write_config, run_cli, clock):
    """pytorch/xla with five releases, two a page: a baseline poll (pages 1-3, as a deep scan
    reads them: it is the repo's first), then a day later a deep scan, which finds nothing
    new."""
    made = [fake_github.add_release("pytorch/xla", tag=f"v2.{n}", body=f"- Fix {n} (#{n + 1})")
            for n in range(5)]
    config = write_config(repos=("pytorch/xla",), github=PAGES)
    assert run_cli("--config", str(config), "poll").code == 0
    assert [e["tag"] for e in events(config)] == ["v2.4"]  # the newest, as a first run does
    clock.now += timedelta(days=1)
    assert run_cli("--config", str(config), "poll").code == 0
    assert len(events(config)) == 1  # the baseline knew every page: nothing new
    status = run_cli("--config", str(config), "status")
    assert "releases known: 5" in status.stdout
    fake_github.reset_requests()
    return config, made


def test_an_edit_on_page_2_is_found_by_the_deep_scan_while_page_1_answers_304(
        fake_github, run_cli, clock, five_releases):
    config, made = five_releases
    fake_github.edit_release("pytorch/xla", made[1]["id"], body="- Fix 1, properly (#2)")
    assert run_cli("--config", str(config), "poll").code == 0
    assert release_pages(fake_github) == [("1", 304)]  # a routine poll: page 1 only
    assert len(events(config)) == 1
    fake_github.reset_requests()
    clock.now += timedelta(days=1)
    assert run_cli("--config", str(config), "poll").code == 0
    # Every page on its own ETag; page 2 changed, so pages 1 and 3 are read again in full.
    assert release_pages(fake_github) == [("1", 304), ("2", 200), ("3", 304), ("1", 200),
                                          ("3", 200)]
    new = events(config)[1:]
    assert [(e["event"], e["tag"]) for e in new] == [("edited", "v2.1")]
    assert new[0]["items"][0]["text"] == "Fix 1, properly (#2)"
    fake_github.reset_requests()
    assert run_cli("--config", str(config), "poll").code == 0  # the next deep scan: a day on
    assert release_pages(fake_github) == [("1", 304)]


def test_a_quiet_deep_scan_is_one_free_304_per_page(fake_github, run_cli, clock, five_releases):
    config, _ = five_releases
    clock.now += timedelta(days=1)
    quota = fake_github.rate_remaining
    assert run_cli("--config", str(config), "poll").code == 0
    assert release_pages(fake_github) == [("1", 304), ("2", 304), ("3", 304)]  # 3: the last
    assert fake_github.rate_remaining == quota and len(events(config)) == 1


def test_a_deletion_beyond_page_1_is_found_and_confirmed(fake_github, run_cli, clock,
                                                         five_releases):
    config, made = five_releases
    fake_github.delete_release("pytorch/xla", made[0]["id"])  # the oldest, on page 3
    assert run_cli("--config", str(config), "poll").code == 0
    assert len(events(config)) == 1  # a routine poll cannot see it
    clock.now += timedelta(days=1)
    assert run_cli("--config", str(config), "poll").code == 0
    assert [(e["event"], e["tag"]) for e in events(config)][1:] == [("deleted", "v2.0")]
    assert fake_github.requests_to(f"/repos/pytorch/xla/releases/{made[0]['id']}")


def test_deep_scans_of_many_repos_are_spread_over_the_day():
    names = [f"org/repo-{n}" for n in range(1000)]
    places = sorted(spread(name) for name in names)
    assert places[0] >= 0 and places[-1] < 1
    hours = {int(place * 24) for place in places}
    assert hours == set(range(24))  # some repos in every hour of the day
    assert spread("org/repo-1") == spread("org/repo-1")  # stable from run to run


def test_when_a_deep_scan_is_due(clock):
    now = clock.now
    every = 86400.0
    baseline = RepoState(repo="o/r", baseline_at=now)
    assert not deep_scan_due(baseline, now, every)  # not before its first one is placed
    placed = baseline.model_copy(update={"deep_scanned_at": first_deep_scan("o/r", now, every)})
    later = now + timedelta(seconds=every * (1 - spread("o/r")))
    assert not deep_scan_due(placed, later - timedelta(seconds=1), every)
    assert deep_scan_due(placed, later, every)
    assert not deep_scan_due(placed, now + timedelta(days=30), 0)  # deep_scan = "0": never
