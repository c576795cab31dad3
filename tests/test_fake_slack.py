"""Checks that the fake Slack answers the official slack_sdk clients the way Slack does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from fakes.slack import WEBHOOK_PATH, FakeSlack, Scripted
from slack_sdk import WebClient, WebhookClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry import builtin_handlers
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

TOKEN = "xoxb-test-token"
POST = "/api/chat.postMessage"


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.add_token(TOKEN, channels=["#releases"])
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> WebClient:
    return WebClient(token=TOKEN, base_url=slack.api_url, timeout=5)


def api_error(call: Any, **kwargs: Any) -> str:
    with pytest.raises(SlackApiError) as caught:
        call(**kwargs)
    return str(caught.value.response["error"])


def test_post_and_thread_reply_recorded(slack: FakeSlack, client: WebClient) -> None:
    top = client.chat_postMessage(channel="#releases", text="PyTorch 2.7.0 is out")
    assert top["ok"] is True and top["ts"] == "1700000000.000001"
    assert top["channel"].startswith("C") and top["message"]["text"] == "PyTorch 2.7.0 is out"
    reply = client.chat_postMessage(
        channel=top["channel"], thread_ts=top["ts"], text="details", blocks=[section("*core*")]
    )
    assert reply["ts"] == "1700000000.000002"
    assert reply["message"]["thread_ts"] == top["ts"]
    first, second = slack.messages
    assert (first.channel, first.thread_ts, first.via) == ("releases", None, "web")
    assert (second.channel, second.thread_ts, second.blocks) == (
        "releases", top["ts"], [section("*core*")],
    )  # fmt: skip
    assert slack.thread(top["ts"]) == [second]
    assert slack.channel_messages("#releases") == slack.channel_messages(top["channel"])
    assert slack.channel_messages("releases") == [first, second]
    [request, _] = slack.requests_to(POST)
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["content-type"].startswith("application/json")
    assert request.params == {"channel": "#releases", "text": "PyTorch 2.7.0 is out"}


def test_auth_errors(slack: FakeSlack, client: WebClient) -> None:
    assert client.auth_test()["user_id"] == "UBOT"
    stranger = WebClient(token="xoxb-unknown", base_url=slack.api_url, timeout=5)
    assert api_error(stranger.chat_postMessage, channel="#releases", text="x") == "invalid_auth"
    anonymous = WebClient(base_url=slack.api_url, timeout=5)
    assert api_error(anonymous.chat_postMessage, channel="#releases", text="x") == "not_authed"
    slack.revoke(TOKEN)
    assert api_error(client.chat_postMessage, channel="#releases", text="x") == "invalid_auth"
    assert api_error(client.auth_test) == "invalid_auth"
    assert slack.messages == []
    assert all(r.status == 200 for r in slack.requests)


def test_channel_and_thread_errors(slack: FakeSlack, client: WebClient) -> None:
    slack.add_channel("general", member=False)
    slack.add_channel("C0RANDOM")
    post = client.chat_postMessage
    assert api_error(post, channel="#nope", text="x") == "channel_not_found"
    assert api_error(post, channel="general", text="x") == "not_in_channel"
    assert api_error(post, channel="#releases", text="x", thread_ts="1.000000") == (
        "thread_not_found"
    )
    elsewhere = post(channel="C0RANDOM", text="top")
    assert elsewhere["channel"] == "C0RANDOM"
    # a thread_ts from another channel is a bug in the caller, not a reply
    assert api_error(post, channel="#releases", text="x", thread_ts=elsewhere["ts"]) == (
        "thread_not_found"
    )
    slack.add_token(TOKEN, channels=["general"])
    assert post(channel="#general", text="now a member")["ok"]
    assert [m.channel for m in slack.messages] == ["C0RANDOM", "general"]


def test_block_kit_limits(slack: FakeSlack, client: WebClient) -> None:
    post = client.chat_postMessage
    mrkdwn = {"type": "mrkdwn", "text": "m"}
    rejected = {
        "51 blocks": [section("x")] * 51,
        "3001-char section": [section("x" * 3001)],
        "151-char header": [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}],
        "mrkdwn header": [{"type": "header", "text": {"type": "mrkdwn", "text": "h"}}],
        "11 fields": [{"type": "section", "fields": [{"type": "mrkdwn", "text": "f"}] * 11}],
        "2001-char field": [{"type": "section", "fields": [{**mrkdwn, "text": "f" * 2001}]}],
        "11 context elements": [{"type": "context", "elements": [mrkdwn] * 11}],
        "unknown type": [{"type": "banner", "text": "hi"}],
        "256-char block_id": [{"type": "divider", "block_id": "b" * 256}],
        "empty section text": [section("")],
    }  # fmt: skip
    for name, blocks in rejected.items():
        error = api_error(post, channel="#releases", text="t", blocks=blocks)
        assert error == "invalid_blocks", name
    at_limit = [
        {"type": "header", "text": {"type": "plain_text", "text": "h" * 150}},
        section("x" * 3000),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": "c"}] * 10},
        {"type": "divider", "block_id": "b" * 255},
    ] + [{"type": "divider"}] * 46  # fmt: skip
    assert len(at_limit) == 50
    assert post(channel="#releases", text="t", blocks=at_limit)["ok"]
    assert len(slack.messages) == 1


def test_text_and_total_size_limits(slack: FakeSlack, client: WebClient) -> None:
    post = client.chat_postMessage
    with pytest.warns(UserWarning, match="top-level `text`"):  # slack_sdk warns, Slack refuses
        assert api_error(post, channel="#releases", text="") == "no_text"
    assert api_error(post, channel="#releases", text="x" * 40_001) == "msg_too_long"
    assert post(channel="#releases", text="x" * 40_000)["ok"]
    blocks = [section("y" * 2_900) for _ in range(5)]  # each fine, ~14.7k of JSON in total
    assert len(json.dumps(blocks, separators=(",", ":"))) > 12_000
    assert api_error(post, channel="#releases", text="t", blocks=blocks) == "msg_blocks_too_long"
    with FakeSlack(max_blocks_json=20_000) as roomy:
        roomy.add_token(TOKEN, channels=["releases"])
        roomy_client = WebClient(token=TOKEN, base_url=roomy.api_url, timeout=5)
        assert roomy_client.chat_postMessage(channel="releases", text="t", blocks=blocks)["ok"]
    assert len(slack.messages) == 1


def test_rate_limit_429_retried_by_slack_sdk_handler(
    slack: FakeSlack, client: WebClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # slack_sdk sleeps Retry-After + random.random() seconds; record instead of sleeping.
    slept: list[float] = []
    monkeypatch.setattr(builtin_handlers, "time", SimpleNamespace(sleep=slept.append))
    slack.script(POST, Scripted.rate_limited_429(retry_after=0))
    client.retry_handlers.append(RateLimitErrorRetryHandler(max_retry_count=1))
    assert client.chat_postMessage(channel="#releases", text="hello")["ok"]
    assert [r.status for r in slack.requests_to(POST)] == [429, 200]
    assert slack.requests[0].error == "ratelimited" and slack.requests[0].scripted
    assert len(slept) == 1 and 0 <= slept[0] < 1
    assert [m.text for m in slack.messages] == ["hello"]
    # without a handler the 429 surfaces, Retry-After intact
    client.retry_handlers.clear()
    slack.script(POST, Scripted.rate_limited_429(retry_after=7))
    with pytest.raises(SlackApiError) as caught:
        client.chat_postMessage(channel="#releases", text="again")
    assert caught.value.response.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"
    assert len(slack.messages) == 1


def test_scripted_errors_are_fifo_and_change_nothing(slack: FakeSlack, client: WebClient) -> None:
    slack.script(POST, Scripted.error("fatal_error"), Scripted.server_error(503))
    post = client.chat_postMessage
    assert api_error(post, channel="#releases", text="a") == "fatal_error"
    with pytest.raises(SlackApiError) as caught:
        post(channel="#releases", text="b")
    assert caught.value.response.status_code == 503
    assert post(channel="#releases", text="c")["ok"]
    assert [(r.status, r.error) for r in slack.requests] == [
        (200, "fatal_error"), (503, "Internal Server Error"), (200, None),
    ]  # fmt: skip
    assert [m.text for m in slack.messages] == ["c"]


def test_pings_and_links(slack: FakeSlack, client: WebClient) -> None:
    post = client.chat_postMessage
    post(channel="#releases", text="<!channel> and `<!here>` in code")
    assert slack.messages[-1].pings == ("<!channel>",)
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": "PyTorch 2.7.0"}},
        section("cc <@U123|bob> <!subteam^S9|@xla> see <https://pytorch.org/blog|the blog>"),
        section("```<!everyone> <https://hidden.example>``` and <mailto:a@b.org> <!here|here>"),
        {"type": "context", "elements": [{"type": "mrkdwn", "text": "again <@U123>"}]},
    ]
    post(channel="#releases", text="release <https://github.com/pytorch/pytorch>", blocks=blocks)
    message = slack.messages[-1]
    assert message.pings == ("<@U123>", "<!subteam^S9>", "<!here>")
    assert message.links == (
        ("https://github.com/pytorch/pytorch", "https://github.com/pytorch/pytorch"),
        ("https://pytorch.org/blog", "the blog"),
        ("mailto:a@b.org", "mailto:a@b.org"),
    )
    assert "PyTorch 2.7.0" in message.all_text() and "again <@U123>" in message.all_text()
    post(channel="#releases", text="@channel is plain text, <#C123> is a channel link")
    assert slack.messages[-1].pings == () and slack.messages[-1].links == ()


def test_webhook(slack: FakeSlack) -> None:
    hook = WebhookClient(slack.webhook_url, timeout=5)
    ok = hook.send(text="fallback <!here>", blocks=[section("*2.7.0* <https://pytorch.org|go>")])
    assert (ok.status_code, ok.body) == (200, "ok")
    assert ok.headers["content-type"].startswith("text/plain")
    bad = hook.send(text="t", blocks=[section("x" * 3001)])
    assert (bad.status_code, bad.body) == (400, "invalid_blocks")
    empty = hook.send(text="")
    assert (empty.status_code, empty.body) == (400, "no_text")
    wrong = WebhookClient(slack.url + "/services/T000/B000/WRONG", timeout=5).send(text="t")
    assert (wrong.status_code, wrong.body) == (404, "no_service")
    slack.script(WEBHOOK_PATH, Scripted.server_error())
    assert hook.send(text="t").status_code == 500
    [message] = slack.messages
    assert (message.channel, message.via, message.thread_ts) == (None, "webhook", None)
    assert message.pings == ("<!here>",) and message.links == (("https://pytorch.org", "go"),)


def test_form_encoded_post_and_stop_cuts_keep_alive(slack: FakeSlack) -> None:
    with httpx.Client(base_url=slack.url, timeout=5) as http:
        form = {"channel": "releases", "text": "t", "blocks": json.dumps([section("form")])}
        resp = http.post(POST, data=form, headers={"Authorization": f"Bearer {TOKEN}"})
        assert resp.headers["content-type"] == "application/json; charset=utf-8"
        assert resp.json()["ok"] is True
        assert slack.messages[0].blocks == [section("form")]
        bad = http.post(
            POST, data={**form, "blocks": "[{"}, headers={"Authorization": "Bearer " + TOKEN}
        )
        assert bad.json() == {"ok": False, "error": "invalid_blocks_format"}
        slack.stop()
        with pytest.raises(httpx.TransportError):
            http.post(POST, data=form)
