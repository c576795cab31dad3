"""[[orgs]]: every non-archived repository of an organisation, refreshed rarely and
conditionally."""

from __future__ import annotations

import json
from datetime import timedelta

from fakes.github import Scripted

ORG = '[[orgs]]\nname = "pytorch"\nexclude = ["*-archive", "test-*"]\nrefresh = "1h"\n'


def events(config):
    path = config.parent / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def org_config(write_config, extra: str = ""):
    return write_config(ORG + extra, repos=())


def populate(fake_github):
    for name in ("pytorch/vision", "pytorch/audio", "pytorch/old-archive", "pytorch/test-infra"):
        fake_github.add_repo(name)
    fake_github.add_repo("pytorch/tutorials", archived=True)
    fake_github.add_release("pytorch/vision", tag="v0.20.0", body="## Bug fixes\n- Fix (#1)\n")
    fake_github.add_release("pytorch/audio", tag="v2.5.0", body="- Add (#2)\n")


def test_org_repos_are_watched_with_include_exclude_and_archived_skipped(
        fake_github, write_config, run_cli):
    populate(fake_github)
    config = org_config(write_config)
    assert run_cli("--config", str(config), "poll").code == 0
    assert events(config) == []  # an organisation's existing releases are history: no flood
    polled = {r.path for r in fake_github.requests if r.path.endswith("/releases")}
    assert polled == {"/repos/pytorch/vision/releases", "/repos/pytorch/audio/releases"}
    fake_github.add_release("pytorch/vision", tag="v0.21.0", body="- Add (#9)\n")
    fake_github.add_release("pytorch/tutorials", tag="v1", body="- archived, never watched\n")
    assert run_cli("--config", str(config), "poll").code == 0
    assert [(e["repo"], e["tag"]) for e in events(config)] == [("pytorch/vision", "v0.21.0")]


def test_no_change_poll_costs_one_request_per_repo_and_the_org_list_only_when_due(
        fake_github, write_config, run_cli, clock):
    populate(fake_github)
    config = org_config(write_config)
    run_cli("--config", str(config), "poll")
    fake_github.reset_requests()
    assert run_cli("--config", str(config), "poll").code == 0
    assert sorted((r.path, r.status) for r in fake_github.requests) == [
        ("/repos/pytorch/audio/releases", 304), ("/repos/pytorch/vision/releases", 304)]
    clock.now += timedelta(hours=2)  # the org list is due again: one more request, a 304
    fake_github.reset_requests()
    assert run_cli("--config", str(config), "poll").code == 0
    assert sorted((r.path, r.status) for r in fake_github.requests) == [
        ("/orgs/pytorch/repos", 304), ("/repos/pytorch/audio/releases", 304),
        ("/repos/pytorch/vision/releases", 304)]


def test_new_org_repo_is_picked_up_at_the_next_refresh(fake_github, write_config, run_cli,
                                                       clock):
    populate(fake_github)
    config = org_config(write_config)
    run_cli("--config", str(config), "poll")
    fake_github.add_repo("pytorch/executorch")
    fake_github.add_release("pytorch/executorch", tag="v0.4.0", body="- Add (#3)\n")
    run_cli("--config", str(config), "poll")
    assert "pytorch/executorch" not in {e["repo"] for e in events(config)}
    clock.now += timedelta(hours=2)
    fake_github.reset_requests()
    assert run_cli("--config", str(config), "poll").code == 0  # found: its baseline, silent
    assert fake_github.requests_to("/repos/pytorch/executorch/releases")
    assert "pytorch/executorch" not in {e["repo"] for e in events(config)}
    fake_github.add_release("pytorch/executorch", tag="v0.5.0", body="- Add (#4)\n")
    assert run_cli("--config", str(config), "poll").code == 0
    assert [(e["repo"], e["tag"]) for e in events(config)] == [("pytorch/executorch", "v0.5.0")]


def test_org_list_failure_keeps_the_last_list(fake_github, write_config, run_cli, clock):
    populate(fake_github)
    config = org_config(write_config)
    run_cli("--config", str(config), "poll")
    clock.now += timedelta(hours=2)
    fake_github.script("/orgs/pytorch/repos", *[Scripted.server_error()] * 4)
    fake_github.add_release("pytorch/vision", tag="v0.21.0", body="- New (#4)\n")
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0 and "keeping the last repo list" in result.stderr
    assert [e["tag"] for e in events(config)] == ["v0.21.0"]


def test_unknown_org_is_a_failure_but_repos_still_run(fake_github, write_config, run_cli):
    fake_github.add_release("pytorch/xla", tag="v2.0", body="- Add (#1)\n")
    config = write_config('[[orgs]]\nname = "nosuchorg"\n', repos=("pytorch/xla",))
    result = run_cli("--config", str(config), "poll")
    assert result.code == 1 and "nosuchorg" in result.stderr
    assert [e["repo"] for e in events(config)] == ["pytorch/xla"]


def test_repo_option_must_be_owner_slash_name(write_config, run_cli):
    config = write_config()
    result = run_cli("--config", str(config), "poll", "--repo", "justaname")
    assert result.code == 2 and "OWNER/NAME" in result.stderr
