"""PR labels as ground truth: batched GraphQL look-ups, cached for good, never failing a poll."""

from __future__ import annotations

import random

import pytest
from fakes.github import Scripted
from pydantic import SecretStr

from watcher.errors import ConfigError
from watcher.github import GitHubClient, RetryPolicy
from watcher.pr_labels import LabelSource, builtin_label_map, label_map
from watcher.store import Store

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
