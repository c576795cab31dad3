"""The errors the GitHub client and the Slack notifier raise hold no secret, by themselves: not
in their text, their args, their repr or their attributes, nor anywhere in the chain of
exceptions they were raised from or during, and the client logs none. No log masking is set
up here (``watcher.logs`` is the second line of defence, tested on its own): what is checked
is the exception objects themselves.

Every failure is provoked through the loopback fakes, most with the secret echoed back in the
answer (as a proxy's error page, a misconfigured gateway or a chatty API may do it): a 401, a
5xx, redirects to URLs that carry it, bodies that are not the JSON asked for, a GraphQL error,
a rate limit, a refused connection and a timeout; for Slack, a revoked token, a Web API 5xx, a
webhook's 404, 403 and 500, and refused connections.
"""

from __future__ import annotations

import io
import json
import logging
import random
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import SLACK_TOKEN
from fakes.github import FakeGitHub
from fakes.github import Scripted as GitHubAnswer
from fakes.slack import FakeSlack
from fakes.slack import Scripted as SlackAnswer
from pydantic import SecretStr
from test_slack_limits import event_of

from handlers.base import HandlerContext, MemoryProgress, notifier_config
from watcher.config import Secrets
from watcher.errors import GitHubError, HandlerError, WatcherError
from watcher.github import GitHubClient, RetryPolicy

TOKEN = "ghp_t31CanaryToken0123456789abcdef"  # distinctive: a leak cannot hide in other words
REPO = "pytorch/pytorch"
LIST = f"/repos/{REPO}/releases"
TRIES = 2  # one retry: every retried failure is answered twice


def chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and every exception it was raised from or while handling, suppressed or not."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        todo += [current.__cause__, current.__context__]


def leaks(error: BaseException, *secrets: str) -> list[str]:
    """What of ``error`` and its chain shows a secret: its text, args, repr, our attributes."""
    shown = []
    for link in chain(error):
        shown += [str(link), repr(link), repr(link.args)]
        if isinstance(link, WatcherError):
            shown += [f"{key}={value!r}" for key, value in vars(link).items()]
    return [text for text in shown if any(secret in text for secret in secrets)]


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


# ---- GitHub ---------------------------------------------------------------------------------
def echoed(status: int, headers: dict[str, str] | None = None) -> GitHubAnswer:
    """An answer whose body quotes the request's Authorization header back."""
    body = json.dumps({"message": f"Bad credentials: Authorization: Bearer {TOKEN}"})
    return GitHubAnswer(status, headers or {}, body)


def on_list(*answers: GitHubAnswer) -> Callable[[FakeGitHub], str]:
    def script(fake: FakeGitHub) -> str:
        fake.script(LIST, *answers)
        return fake.url
    return script


def elsewhere(fake: FakeGitHub) -> str:
    fake.script(LIST, GitHubAnswer(302, {"location": f"https://x:{TOKEN}@example.invalid/r"
                                                     f"?access_token={TOKEN}"}))
    return fake.url


def same_host_then(*then: GitHubAnswer) -> Callable[[FakeGitHub], str]:
    """A redirect on the API host (so it is followed) to a URL holding the token."""
    def script(fake: FakeGitHub) -> str:
        moved = GitHubAnswer(301, {"location": f"{fake.url}{LIST}?access_token={TOKEN}"})
        fake.script(LIST, moved, *then)
        return fake.url
    return script


def refused(fake: FakeGitHub) -> str:
    return closed_port()


BROKEN = f'[{{"id": 1, "tag_name": "{TOKEN}'.encode()
WRONG_SHAPE = json.dumps([{"id": TOKEN, "tag_name": TOKEN, "html_url": TOKEN}])
RATE_LIMITED = GitHubAnswer(429, {"retry-after": "3600"}, json.dumps({"message": TOKEN}))

LISTING_FAILURES: dict[str, Callable[[FakeGitHub], str]] = {
    "401 echoing the token": on_list(echoed(401)),
    "403 echoing the token": on_list(echoed(403)),
    "5xx echoing the token": on_list(*[echoed(502)] * TRIES),
    "redirect to another host with the token": elsewhere,
    "redirect with the token, then a 500": same_host_then(*[echoed(500)] * TRIES),
    "redirect with the token, then a 404": same_host_then(echoed(404)),
    "redirects with the token, past the most followed": same_host_then(
        *[GitHubAnswer(301, {"location": f"{LIST}?access_token={TOKEN}"})] * 3),
    "broken JSON holding the token": on_list(*[GitHubAnswer(200, {}, BROKEN)] * TRIES),
    "JSON of the wrong shape holding the token": on_list(
        *[GitHubAnswer(200, {}, WRONG_SHAPE)] * TRIES),
    "rate limit echoing the token": on_list(RATE_LIMITED),
    "connection refused": refused,
    "timeout": on_list(*[GitHubAnswer(delay=0.3)] * TRIES),
}


@pytest.fixture
def github(fake_github: FakeGitHub) -> Iterator[Callable[[str], GitHubClient]]:
    opened: list[httpx.Client] = []

    def client(api_url: str) -> GitHubClient:
        http = GitHubClient.make_http(api_url, SecretStr(TOKEN), timeout=0.05)
        opened.append(http)
        return GitHubClient(http, api_url=api_url, policy=RetryPolicy(retries=TRIES - 1),
                            sleep=lambda _: None, clock=lambda: 1_700_000_000.0,
                            rng=random.Random(0))

    fake_github.set_token(TOKEN)
    fake_github.add_release(REPO, tag="v1.0", body="- Fix (#1)")
    yield client
    for http in opened:
        http.close()


@pytest.mark.slow
@pytest.mark.parametrize("failure", list(LISTING_FAILURES))
def test_a_github_error_holds_no_token(fake_github: FakeGitHub, github: Any, failure: str,
                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="watcher")
    client = github(LISTING_FAILURES[failure](fake_github))
    with pytest.raises(GitHubError) as caught:
        client.list_releases(REPO, etags={}, per_page=30, max_pages=1)
    assert leaks(caught.value, TOKEN) == []
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("watcher")]
    assert [line for line in ours if TOKEN in line] == []  # (httpcore's debug lines: the mask's)
    assert client.http.headers["authorization"] == f"Bearer {TOKEN}"  # it was there to leak


@pytest.mark.parametrize("answer", [
    GitHubAnswer(200, {}, json.dumps({"errors": [{"message": f"Bearer {TOKEN} is invalid"}]})),
    echoed(401),
], ids=["graphql errors echoing the token", "graphql 401 echoing the token"])
def test_a_graphql_error_holds_no_token(fake_github: FakeGitHub, github: Any,
                                        answer: GitHubAnswer) -> None:
    fake_github.script("/graphql", answer)
    with pytest.raises(GitHubError) as caught:
        github(fake_github.url).pr_labels(REPO, [1, 2])
    assert leaks(caught.value, TOKEN) == []


# ---- Slack ----------------------------------------------------------------------------------
SLACK_HOOK = "/services/T000/B000/t31HookSecret0123"  # a webhook URL's path is its secret


def slack_send(fake: FakeSlack, tmp_path: Path, *, webhook: str | None = None,
               api_url: str | None = None) -> HandlerError:
    """Sends one event through a Slack notifier (no retries) and returns the error raised."""
    raw = {"name": "releases", "type": "slack", "min_interval": "0s", "retries": 0}
    raw |= {"delivery": "webhook"} if webhook else {"channel": "#releases"}
    environ = {"SLACK_BOT_TOKEN": SLACK_TOKEN, **({"SLACK_WEBHOOK_URL": webhook} if webhook
                                                  else {})}
    cls, config = notifier_config(raw, "test", environ=environ)
    context = HandlerContext(secrets=Secrets.model_validate(environ), base_dir=tmp_path,
                             stdout=io.StringIO(), slack_api_url=api_url or fake.api_url,
                             sleep=lambda _: None)
    with pytest.raises(HandlerError) as caught:
        cls(config, context).send(event_of("- Fix a crash (#1)\n"), MemoryProgress())
    return caught.value


def test_a_revoked_bot_token_s_error_holds_no_token(fake_slack: FakeSlack,
                                                    tmp_path: Path) -> None:
    fake_slack.revoke(SLACK_TOKEN)
    error = slack_send(fake_slack, tmp_path)
    assert error.permanent and "invalid_auth" in str(error)
    assert leaks(error, SLACK_TOKEN) == []


@pytest.mark.parametrize("answer", [
    SlackAnswer.error("invalid_auth"),
    SlackAnswer(200, {}, {"ok": False, "error": "invalid_auth", "token": SLACK_TOKEN}),
    SlackAnswer(500, {}, f"upstream refused Authorization: Bearer {SLACK_TOKEN}"),
], ids=["invalid_auth", "invalid_auth echoing the token", "5xx echoing the token"])
def test_a_web_api_error_holds_no_token(fake_slack: FakeSlack, tmp_path: Path,
                                        answer: SlackAnswer) -> None:
    fake_slack.script("/api/chat.postMessage", answer)
    assert leaks(slack_send(fake_slack, tmp_path), SLACK_TOKEN) == []


def test_an_unreachable_web_api_s_error_holds_no_token(fake_slack: FakeSlack,
                                                       tmp_path: Path) -> None:
    error = slack_send(fake_slack, tmp_path, api_url=closed_port() + "/api/")
    assert "unreachable" in str(error)
    assert leaks(error, SLACK_TOKEN) == []


@pytest.mark.parametrize(("status", "body"), [
    (404, None), (404, "no_service: {url}"), (403, "action_prohibited for {url}"),
    (500, "<html>error posting to {path}</html>"), (410, "channel_is_archived {path}"),
], ids=["404 unknown", "404 echoing the URL", "403 echoing the URL", "500 echoing the path",
        "410 echoing the path"])
def test_a_webhook_error_holds_no_webhook_url(fake_slack: FakeSlack, tmp_path: Path,
                                              status: int, body: str | None) -> None:
    url = fake_slack.url + SLACK_HOOK
    if body is not None:  # else the fake's own answer to an unknown webhook: 404 no_service
        fake_slack.script(SLACK_HOOK, SlackAnswer(status, {}, body.format(url=url,
                                                                          path=SLACK_HOOK)))
    error = slack_send(fake_slack, tmp_path, webhook=url)
    assert f"HTTP {status}" in str(error)
    assert leaks(error, SLACK_HOOK, SLACK_HOOK.rsplit("/", 1)[1]) == []


def test_an_unreachable_webhook_s_error_holds_no_webhook_url(fake_slack: FakeSlack,
                                                             tmp_path: Path) -> None:
    error = slack_send(fake_slack, tmp_path, webhook=closed_port() + SLACK_HOOK)
    assert "unreachable" in str(error)
    assert leaks(error, SLACK_HOOK, SLACK_HOOK.rsplit("/", 1)[1]) == []
