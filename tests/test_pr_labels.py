"""PR labels as ground truth: batched GraphQL look-ups, cached for good, never failing a poll."""

from __future__ import annotations

import random

import diskcache
import pytest
from fakes.github import Scripted
from pydantic import SecretStr

from watcher.errors import ConfigError
from watcher.github.client import GitHubClient, RetryPolicy
from watcher.notes.labels import LabelSource, builtin_label_map, label_map
from watcher.store.store import Store

REPO = "pytorch/pytorch"


def client(fake_github, token: str | None = "tok") -> GitHubClient:
    http = GitHubClient.make_http(fake_github.url, SecretStr(token) if token else None, 5.0)
    return GitHubClient(http, api_url=fake_github.url, policy=RetryPolicy(retries=1),
                        sleep=lambda _: None, rng=random.Random(0))


@pytest.mark.parametrize(("labels", "expected"), [
    (["release notes: distributed (fsdp)", "topic: bug fixes"], ("distributed/fsdp", "bug_fix")),
    (["release notes: inductor", "topic: not user facing"], ("compile/inductor", None)),
    (["Release Notes: Dynamo", "topic: BC breaking"], ("compile/dynamo", "bc_breaking")),
    (["module: cuda", "ciflow/trunk"], (None, None)),
    (["release notes: releng", "release notes: mps", "release notes: mps"], ("mps", None)),
], ids=["fsdp-fix", "inductor", "case", "unrelated", "most-common"])
def test_label_map(labels, expected):
    assert builtin_label_map().decide(labels) == expected


def test_user_label_map_overrides_and_rejects_nonsense():
    mapping = label_map({"release notes: nn_frontend": "optim", "topic: docs": "other"})
    assert mapping.decide(["release notes: nn_frontend", "topic: docs"]) == ("optim", "other")
    with pytest.raises(ConfigError):
        label_map({"module: x": "nn"})


def test_graphql_batches_of_a_hundred_and_caches_for_good(fake_github, tmp_path):
    for number in range(1, 251):
        fake_github.pr_labels[(REPO, number)] = [f"release notes: {'mps' if number % 2 else 'fx'}"]
    store = Store.open(tmp_path / "s")
    source = LabelSource(client(fake_github), store, builtin_label_map())
    found = source.labels(REPO, range(1, 251))
    assert found[1] == ["release notes: mps"] and found[2] == ["release notes: fx"]
    posts = [r for r in fake_github.requests if r.path == "/graphql"]
    assert len(posts) == 3  # 100 + 100 + 50
    assert source.labels(REPO, range(1, 251)) == found
    assert len([r for r in fake_github.requests if r.path == "/graphql"]) == 3
    store.close()
    with diskcache.Cache(str(tmp_path / "s")) as cache:  # kept as diskcache keys, for good
        assert cache[f"pr-labels|{REPO}|2"] == ["release notes: fx"]
    reopened = Store.open(tmp_path / "s")
    assert LabelSource(client(fake_github), reopened, builtin_label_map()).labels(
        REPO, range(1, 251)) == found
    assert len([r for r in fake_github.requests if r.path == "/graphql"]) == 3
    reopened.close()


def test_issue_numbers_come_back_without_labels(fake_github, tmp_path):
    fake_github.pr_labels[(REPO, 7)] = ["release notes: onnx"]
    source = LabelSource(client(fake_github), Store.open(tmp_path / "s"), builtin_label_map())
    assert source.labels(REPO, [7, 99270]) == {7: ["release notes: onnx"], 99270: []}


def test_failures_fall_back_quietly(fake_github, tmp_path, caplog):
    fake_github.script("/graphql", *[Scripted.server_error()] * 4)
    source = LabelSource(client(fake_github), Store.open(tmp_path / "s"), builtin_label_map())
    assert source.labels(REPO, [1, 2]) == {}
    assert "PR labels unavailable" in caplog.text
    unauthenticated = LabelSource(client(fake_github, token=None), Store.open(tmp_path / "t"),
                                  builtin_label_map())
    assert unauthenticated.labels(REPO, [1]) == {}


def test_graphql_url_for_github_enterprise():
    http = GitHubClient.make_http("https://ghe.example.com/api/v3", None, 5.0)
    ghe = GitHubClient(http, api_url="https://ghe.example.com/api/v3", policy=RetryPolicy())
    assert ghe.graphql_url() == "https://ghe.example.com/api/graphql"


def test_labels_win_over_text_but_not_over_headings_in_a_poll(fake_github, write_config, run_cli):
    import json

    body = ("This release is meant to fix the following issues:\n"
            "- Fix a crash in the kernel path (#101)\n"
            "## Bug fixes\n### MPS\n- Fix FSDP hang (#102)\n")
    fake_github.pr_labels[(REPO, 101)] = ["release notes: distributed (fsdp)", "topic: bc breaking"]
    fake_github.pr_labels[(REPO, 102)] = ["release notes: onnx", "topic: docs"]
    fake_github.add_release(REPO, tag="v2.9.1", body=body)
    config = write_config("[classify]\nuse_pr_labels = true\n", repos=(REPO,))
    assert run_cli("--config", str(config), "poll").code == 0
    (event,) = [json.loads(line) for line in (config.parent / "events.jsonl").open()]
    by_pr = {item["prs"][0]: (item["subsystem"], item["kind"]) for item in event["items"]}
    assert by_pr[101] == ("distributed/fsdp", "bc_breaking")  # labels beat text
    assert by_pr[102] == ("mps", "bug_fix")                     # headings beat labels
    assert len([r for r in fake_github.requests if r.path == "/graphql"]) == 1


def test_use_pr_labels_without_a_token_falls_back_to_text(fake_github, write_config, run_cli):
    fake_github.add_release(REPO, tag="v2.9.1", body="- Fix FSDP hang (#102)\n")
    config = write_config("[classify]\nuse_pr_labels = true\n", repos=(REPO,))
    result = run_cli("--config", str(config), "poll", token=None)
    assert result.code == 0 and "needs GITHUB_TOKEN" in result.stderr
    assert not [r for r in fake_github.requests if r.path == "/graphql"]


@pytest.mark.parametrize(("setting", "token", "queries"), [
    ("", "tok", 1), ("", None, 0), ("use_pr_labels = false\n", "tok", 0),
], ids=["unset-with-token", "unset-without-token", "turned-off"])
def test_pr_labels_are_on_by_default_where_they_are_free_to_read(fake_github, write_config,
                                                                 run_cli, setting, token, queries):
    fake_github.pr_labels[(REPO, 101)] = ["release notes: onnx"]
    fake_github.add_release(REPO, tag="v2.9.1", body="- Fix a crash (#101)\n- Fix b (#102)\n")
    config = write_config(f"[classify]\n{setting}", repos=(REPO,))
    result = run_cli("--config", str(config), "poll", token=token)
    assert result.code == 0 and "needs GITHUB_TOKEN" not in result.stderr
    assert len([r for r in fake_github.requests if r.path == "/graphql"]) == queries


def test_a_pytorch_xla_poll_classifies_from_xlas_prior_under_its_labels(
        fake_github, write_config, run_cli):
    """The poller says whose release it is: an unlabelled XLA item the model guesses is never
    given a PyTorch device area it does not name, and a PR label still wins over the guess."""
    import json

    xla = "pytorch/xla"
    body = "## Bug fixes\n- Support int as index type (#4602)\n- Fix a hang (#4603)\n"
    fake_github.pr_labels[(xla, 4603)] = ["release notes: distributed"]
    fake_github.add_release(xla, tag="v2.0.0", body=body)
    config = write_config("[classify]\nuse_pr_labels = true\n", repos=(xla,))
    assert run_cli("--config", str(config), "poll").code == 0
    (event,) = [json.loads(line) for line in (config.parent / "events.jsonl").open()]
    by_pr = {item["prs"][0]: item for item in event["items"]}
    assert by_pr[4603]["subsystem"] == "distributed" and by_pr[4603]["decided_by"] == "label"
    guess = by_pr[4602]
    assert guess["decided_by"] == "model"
    assert guess["subsystem"].split("/")[0] not in {"cuda", "rocm", "mps", "xpu", "cpu", "mobile"}
