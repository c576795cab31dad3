"""Large watch lists: one GraphQL query checks many repos' newest releases, and only the repos
that changed are read over REST (against the loopback fake GitHub's GraphQL endpoint)."""

from __future__ import annotations

import json

import pytest
from fakes.github import Scripted

NAMES = tuple(f"org/repo-{n}" for n in range(60))
CHECK = "graphql_threshold = 50\ngraphql_batch = 20"  # 60 repos: 3 queries of 20


def events(config):
    path = config.parent / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def rest_reads(fake_github) -> list[str]:
    return [r.path for r in fake_github.requests if r.path.endswith("/releases")]


def seeded(fake_github, write_config, run_cli, github: str = CHECK):
    fake_github.set_token("ghp_test_token_value_1234")
    for n, name in enumerate(NAMES):
        fake_github.add_release(name, tag="v1.0", body=f"- Fix thing {n} (#{n + 1})")
    config = write_config(repos=NAMES, github=github)
    assert run_cli("--config", str(config), "poll").code == 0
    fake_github.reset_requests()
    return config


@pytest.mark.slow
def test_a_quiet_poll_of_many_repos_is_three_queries_and_no_rest(fake_github, write_config,
                                                                 run_cli):
    config = seeded(fake_github, write_config, run_cli)
    quota = fake_github.rate_remaining
    assert run_cli("--config", str(config), "poll").code == 0
    assert [r.path for r in fake_github.requests] == ["/graphql"] * 3
    assert rest_reads(fake_github) == [] and fake_github.rate_remaining == quota
    status = json.loads(run_cli("--config", str(config), "status", "--json").stdout)
    assert all(repo["last_success"] and not repo["consecutive_failures"]
               for repo in status["repos"])


@pytest.mark.slow
def test_only_the_repos_that_changed_are_read_over_rest(fake_github, write_config, run_cli):
    config = seeded(fake_github, write_config, run_cli)
    announced = len(events(config))
    release = fake_github.releases("org/repo-7")[0]
    fake_github.edit_release("org/repo-7", release["id"], body="- Fix thing 7 properly (#8)")
    fake_github.add_release("org/repo-42", tag="v1.1", body="- New thing (#99)")
    assert run_cli("--config", str(config), "poll").code == 0
    assert sorted(rest_reads(fake_github)) == ["/repos/org/repo-42/releases",
                                               "/repos/org/repo-7/releases"]
    new = [(e["repo"], e["event"], e["tag"]) for e in events(config)[announced:]]
    assert new == [("org/repo-7", "edited", "v1.0"), ("org/repo-42", "published", "v1.1")]
    fake_github.reset_requests()
    assert run_cli("--config", str(config), "poll").code == 0
    assert rest_reads(fake_github) == []  # their new fingerprints were kept


@pytest.mark.slow
def test_small_watch_lists_and_tokenless_polls_use_rest_only(fake_github, write_config,
                                                             run_cli):
    config = seeded(fake_github, write_config, run_cli, github="graphql_threshold = 60")
    assert run_cli("--config", str(config), "poll").code == 0
    assert len(rest_reads(fake_github)) == 60 and fake_github.requests_to("/graphql") == []
    fake_github.set_token(None)
    fake_github.reset_requests()
    assert run_cli("--config", str(config), "poll", token=None).code == 0
    assert fake_github.requests_to("/graphql") == []


@pytest.mark.slow
def test_a_failed_check_falls_back_to_rest_for_its_repos(fake_github, write_config, run_cli):
    config = seeded(fake_github, write_config, run_cli, github=CHECK + "\nretries = 0")
    fake_github.script("/graphql", Scripted.server_error(502))
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0 and "read over REST" in result.stderr
    assert len(fake_github.requests_to("/graphql")) == 3 and len(rest_reads(fake_github)) == 20


@pytest.mark.slow
def test_a_repo_graphql_cannot_see_is_read_over_rest_and_fails_there(fake_github, write_config,
                                                                     run_cli):
    config = seeded(fake_github, write_config, run_cli)
    config.write_text(config.read_text() + '\n[[repos]]\nname = "org/gone"\n')
    result = run_cli("--config", str(config), "poll")
    assert result.code == 1 and "org/gone: no such repository" in result.stderr
    assert rest_reads(fake_github) == ["/repos/org/gone/releases"]


@pytest.mark.slow
def test_a_check_ahead_of_rest_is_not_trusted_until_rest_agrees(fake_github, write_config,
                                                               run_cli):
    """GraphQL says repo-3 changed while REST still answers 304 (a replica behind): its new
    fingerprint is not taken, so the next poll reads it over REST again."""
    config = seeded(fake_github, write_config, run_cli)
    release = fake_github.releases("org/repo-3")[0]
    fake_github.edit_release("org/repo-3", release["id"])  # updatedAt moves, REST does not
    for _ in range(2):
        fake_github.reset_requests()
        assert run_cli("--config", str(config), "poll").code == 0
        assert [(r.path, r.status) for r in fake_github.requests if r.path != "/graphql"] == [
            ("/repos/org/repo-3/releases", 304)]
