"""The Slack notifier against the loopback fake Slack Web API and webhook, with the real
slack-sdk clients: complete, safe, in order, never twice."""

from __future__ import annotations

import html
import json
import re

import pytest
from conftest import SLACK_TOKEN, release_notes
from fakes.slack import Scripted
from readable import message_text, missing_items, slack_words

from watcher.notes.analyze import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy

V27 = release_notes("pytorch/v2.7.0.md")
ENV = {"SLACK_BOT_TOKEN": SLACK_TOKEN}


def slack_notifier(name: str = "releases", channel: str = "#releases", extra: str = "") -> str:
    return (f'[[notifiers]]\nname = "{name}"\ntype = "slack"\nchannel = "{channel}"\n'
            f'min_interval = "1s"\n{extra}\n')


def assert_every_item_whole(messages, body: str) -> None:
    """Every item of the notes, its whole text, in the thread (or the parent of a one-item
    event); the parent's call-outs show titles only, so they are not counted."""
    replies = [m for m in messages if m.thread_ts is not None] or messages
    items = Analyzer(builtin_taxonomy()).items(body)
    missing = missing_items(slack_words(message_text(replies)), [i.text for i in items])
    assert not missing, missing[:3]


def poll(run_cli, config):
    return run_cli("--config", str(config), "poll", env=ENV)


def test_real_release_arrives_complete_in_a_thread(fake_github, fake_slack, write_config,
                                                   run_cli, clock):
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0", body=V27)
    config = write_config(repos=("pytorch/pytorch",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    result = poll(run_cli, config)
    assert result.code == 0, result.stderr
    assert all(r.error is None for r in fake_slack.requests), [r.error for r in fake_slack.requests]
    parent, *replies = fake_slack.messages
    assert parent.thread_ts is None and parent.blocks[0]["type"] == "header"
    assert parent.blocks[0]["text"]["text"] == "PyTorch 2.7.0 released"
    assert "BC-breaking (11)" in parent.all_text() and parent.text
    assert replies and all(reply.thread_ts == parent.ts for reply in replies)
    assert_every_item_whole(fake_slack.messages, V27)
    assert not any(m.pings for m in fake_slack.messages)
    # paced: about one post a second, slept through the injected clock
    assert len([s for s in clock.slept if s > 0.5]) >= len(fake_slack.messages) - 1


def test_fifteen_hundred_items_go_out_complete(fake_github, fake_slack, write_config, run_cli):
    body = "# Bug fixes\n" + "".join(
        f"## {area}\n" + "".join(f"- Fix `{area}` case {n} in the kernel path (#{n + 10000 * i})\n"
                                 for n in range(300))
        for i, area in enumerate(["Distributed", "CUDA", "MPS", "torch.compile", "ROCm"]))
    fake_github.add_release("pytorch/pytorch", tag="v9.0", body=body)
    config = write_config(repos=("pytorch/pytorch",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    assert len(Analyzer(builtin_taxonomy()).items(body)) == 1500
    assert all(r.error is None for r in fake_slack.requests)
    assert_every_item_whole(fake_slack.messages, body)


def test_untrusted_text_pings_nobody_and_shows_literally(fake_github, fake_slack, write_config,
                                                         run_cli):
    hostile = "<!channel> @here <@U123> <https://evil|click>"
    fake_github.add_release("pytorch/pytorch", tag="v1 <!here>", name="<!everyone> @channel",
                            body=f"## Distributed\n- {hostile} (#1)\n")
    config = write_config(repos=("pytorch/pytorch",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    assert fake_slack.messages
    for message in fake_slack.messages:
        assert message.pings == ()
        assert all(url.startswith("https://github.com/") for url, _ in message.links)
    text = html.unescape(" ".join(m.all_text() for m in fake_slack.messages)).replace("\u200b", "")
    assert hostile in text


def test_markdown_links_and_pr_refs_point_where_they_say(fake_github, fake_slack, write_config,
                                                        run_cli):
    body = ("## Distributed\n- See [the docs](https://pytorch.org/docs/fsdp) (#42)\n"
            "- Read [pytorch.org](https://evil.example.com/x) now\n")
    fake_github.add_release("pytorch/xla", tag="v2.0", body=body)
    config = write_config(repos=("pytorch/xla",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    links = {link for m in fake_slack.messages for link in m.links}
    assert ("https://pytorch.org/docs/fsdp", "the docs") in links
    assert ("https://github.com/pytorch/xla/pull/42", "#42") in links
    # a label that reads like an address shows the address it really goes to
    assert ("https://evil.example.com/x", "https://evil.example.com/x") in links
    assert not any(label == "pytorch.org" for _, label in links)


def test_slack_down_for_three_polls_then_everything_once_in_order(fake_github, fake_slack,
                                                                  write_config, run_cli):
    config = write_config(repos=("pytorch/pytorch",),
                          notifiers=slack_notifier(extra="retries = 0"),
                          slack_url=fake_slack.api_url)
    for n in range(3):
        fake_github.add_release("pytorch/pytorch", tag=f"v1.{n}", body=f"## CUDA\n- Fix {n} (#{n})")
        fake_slack.script("/api/chat.postMessage", Scripted.server_error())
        result = poll(run_cli, config)
        assert result.code == 1 and "will retry" in result.stderr
    assert fake_slack.messages == []
    status = json.loads(run_cli("--config", str(config), "status", "--json").stdout)
    assert status["pending_by_notifier"] == {"releases": 3}
    assert poll(run_cli, config).code == 0
    headers = [m.blocks[0]["text"]["text"] for m in fake_slack.messages if m.thread_ts is None]
    assert headers == ["PyTorch v1.0 released", "PyTorch v1.1 released",
                       "PyTorch v1.2 released"]
    assert poll(run_cli, config).code == 0
    # three parents, each holding its one item (no thread for one item), none twice
    assert len(fake_slack.messages) == 3


def test_a_failed_reply_resumes_without_reposting_the_parent(fake_github, fake_slack,
                                                             write_config, run_cli):
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0", body=V27)
    config = write_config(repos=("pytorch/pytorch",),
                          notifiers=slack_notifier(extra="retries = 0"),
                          slack_url=fake_slack.api_url)
    ok = [Scripted()] * 3  # status 200 with no body: answered normally
    fake_slack.script("/api/chat.postMessage", *ok, Scripted.server_error())
    assert poll(run_cli, config).code == 1
    assert len(fake_slack.messages) == 3
    assert poll(run_cli, config).code == 0
    parents = [m for m in fake_slack.messages if m.thread_ts is None]
    assert len(parents) == 1
    assert_every_item_whole(fake_slack.messages, V27)


def test_rate_limit_waits_for_retry_after(fake_github, fake_slack, write_config, run_cli, clock):
    fake_github.add_release("pytorch/xla", tag="v2.0", body="## FSDP\n- Add X (#1)\n- Add Y (#2)\n")
    config = write_config(repos=("pytorch/xla",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    fake_slack.script("/api/chat.postMessage", Scripted.rate_limited_429(retry_after=7))
    assert poll(run_cli, config).code == 0
    assert 7.0 in clock.slept
    assert len(fake_slack.messages) == 2


@pytest.mark.slow
@pytest.mark.parametrize(("error", "fix"), [
    ("invalid_auth", "set a valid SLACK_BOT_TOKEN"),
    ("channel_not_found", "check `channel`"),
    ("not_in_channel", "/invite the app"),
])
def test_permanent_errors_say_the_fix_every_run_and_do_not_block_others(
        fake_github, fake_slack, write_config, run_cli, error, fix):
    fake_github.add_release("pytorch/xla", tag="v2.0", body="## FSDP\n- Add X (#1)\n")
    notifiers = (slack_notifier() + '[[notifiers]]\nname = "log"\ntype = "jsonl"\n'
                 'path = "events.jsonl"\n')
    config = write_config(repos=("pytorch/xla",), notifiers=notifiers,
                          slack_url=fake_slack.api_url)
    fake_slack.script("/api/chat.postMessage", Scripted.error(error), Scripted.error(error))
    first = poll(run_cli, config)
    assert first.code == 1 and error in first.stderr and fix in first.stderr
    assert len((config.parent / "events.jsonl").read_text().splitlines()) == 1
    second = poll(run_cli, config)
    # every run that fails says why, one line for the notifier, not silence with exit 1
    assert second.code == 1 and [line for line in second.stderr.splitlines()
                                 if "'releases'" in line and fix in line]
    status = json.loads(run_cli("--config", str(config), "status", "--json").stdout)
    (failing,) = status["failing_deliveries"]
    assert failing["permanent"] and failing["attempts"] == 2
    check = run_cli("--config", str(config), "status", "--check")
    assert check.code == 1 and "notifier 'releases' cannot deliver" in check.stdout
    assert poll(run_cli, config).code == 0  # fixed: delivered, once
    assert len([m for m in fake_slack.messages if m.thread_ts is None]) == 1


def test_revoked_token_and_missing_token(fake_github, fake_slack, write_config, run_cli):
    fake_github.add_release("pytorch/xla", tag="v2.0", body="- Add X (#1)\n")
    config = write_config(repos=("pytorch/xla",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    fake_slack.revoke(SLACK_TOKEN)
    revoked = poll(run_cli, config)
    assert revoked.code == 1 and "invalid_auth" in revoked.stderr
    assert SLACK_TOKEN not in revoked.stderr
    missing = run_cli("--config", str(config), "poll")
    assert missing.code == 1 and "SLACK_BOT_TOKEN is not set" in missing.stderr


def test_webhook_mode_is_one_message_with_an_honest_remainder(fake_github, fake_slack,
                                                              write_config, run_cli):
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0", body=V27)
    notifiers = '[[notifiers]]\nname = "hook"\ntype = "slack"\ndelivery = "webhook"\n'
    config = write_config(repos=("pytorch/pytorch",), notifiers=notifiers)
    result = run_cli("--config", str(config), "poll",
                     env={"SLACK_WEBHOOK_URL": fake_slack.webhook_url})
    assert result.code == 0, result.stderr
    (message,) = fake_slack.messages
    assert message.via == "webhook" and message.text
    text = message.all_text()
    assert text.index("BC-breaking") < text.index("more — ")
    assert "full notes" in text
    assert fake_slack.webhook_url not in result.stderr


def test_webhook_url_in_the_config_is_masked(run_cli, fake_slack, tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(f'[[notifiers]]\nname = "hook"\ntype = "slack"\n'
                    f'webhook_url = "{fake_slack.webhook_url}"\n')
    result = run_cli("--config", str(path), "config", "check")
    assert result.code == 0 and fake_slack.webhook_url not in result.stdout
    assert '"delivery": "webhook"' in result.stdout


def test_dry_run_prints_the_block_kit_json_and_posts_nothing(fake_github, fake_slack,
                                                             write_config, run_cli):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=release_notes("xla/v2.0.0.md"))
    config = write_config(repos=("pytorch/xla",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    result = run_cli("--config", str(config), "poll", "--dry-run", env=ENV)
    assert result.code == 0
    payload = result.stdout.split("--- releases (slack) would receive:\n", 1)[1]
    messages = json.loads(payload[: payload.index("\n]\n") + 2])
    assert messages[0]["blocks"][0]["type"] == "header"
    assert all(m["thread_reply"] for m in messages[1:])
    assert fake_slack.messages == [] and fake_slack.requests == []


def test_routing_several_channels(fake_github, fake_slack, write_config, run_cli):
    notifiers = (slack_notifier("xla", "#xla", 'repos = ["pytorch/xla"]')
                 + slack_notifier("dist", "#dist-training", 'subsystems = ["distributed"]')
                 + slack_notifier("breaking", "#breaking",
                                  'kinds = ["bc_breaking", "deprecation"]'))
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0", body=V27)
    fake_github.add_release("pytorch/xla", tag="v2.0", body=release_notes("xla/v2.0.0.md"))
    config = write_config(notifiers=notifiers, slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    xla = fake_slack.channel_messages("xla")
    assert xla and all("pytorch/pytorch" not in m.all_text() for m in xla)
    dist_text = "\n".join(m.all_text() for m in fake_slack.channel_messages("dist-training"))
    assert "auto_wrap_policy" in dist_text and "Mega Cache" not in dist_text
    breaking = fake_slack.channel_messages("breaking")
    headers = [m.blocks[0]["text"]["text"] for m in breaking if m.thread_ts is None]
    assert headers == ["PyTorch 2.7.0 released"]  # XLA 2.0 has no BC items


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pytorch/v2.10.0.md", "pytorch/v2.5.0.md"])
def test_every_item_of_a_release_arrives_whole(fake_github, fake_slack, write_config, run_cli,
                                               name):
    body = release_notes(name)
    fake_github.add_release("pytorch/pytorch", tag="v9", name="PyTorch 9", body=body)
    config = write_config(repos=("pytorch/pytorch",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    assert all(r.error is None for r in fake_slack.requests), [r.error for r in fake_slack.requests]
    assert_every_item_whole(fake_slack.messages, body)


def test_a_bc_entry_arrives_with_its_prose_and_its_code(fake_github, fake_slack, write_config,
                                                        run_cli):
    body = release_notes("pytorch/v2.9.0.md")
    fake_github.add_release("pytorch/pytorch", tag="v2.9.0", body=body)
    config = write_config(repos=("pytorch/pytorch",),
                          notifiers=slack_notifier(extra='kinds = ["bc_breaking"]'),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    thread = message_text(m for m in fake_slack.messages if m.thread_ts is not None)
    start = thread.index("Default to `dynamo=True` for ONNX exporter")
    entry = thread[start:start + 3000]
    assert "Previously `torch.onnx.export(...)` used the legacy TorchScript exporter" in entry
    assert "\n```\n" in entry and "torch.onnx.export(" in entry.split("```", 2)[1]


def test_an_item_longer_than_a_message_goes_on_and_says_so(fake_github, fake_slack,
                                                          write_config, run_cli):
    code = "\n".join(f"x_{n} = torch.ones({n}) + torch.zeros({n})  # line {n}"
                     for n in range(600))
    body = (f"# Backwards Incompatible Changes\n### Huge change (#1)\nProse.\n```python\n{code}\n"
            "```\nAfter the code.\n### Small change (#2)\nMore.\n")
    fake_github.add_release("pytorch/pytorch", tag="v9", body=body)
    config = write_config(repos=("pytorch/pytorch",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    assert all(r.error is None for r in fake_slack.requests)
    replies = [m for m in fake_slack.messages if m.thread_ts is not None]
    assert len(replies) > 2
    assert "continues in the next message" in replies[0].all_text()
    for reply in replies:  # every cut closes its code block and the next part reopens it
        for block in reply.blocks:
            assert block.get("text", {}).get("text", "").count("```") % 2 == 0
    assert_every_item_whole(fake_slack.messages, body)


def test_entities_show_once_and_only_http_links_link(fake_github, fake_slack, write_config,
                                                    run_cli):
    body = ("## CUDA\n- Fix `a &lt; b` and &lt;T&gt; in [PR #1](javascript:alert(1)) "
            "[#7](https://evil.example/x) (#2)\n- Tag \x1b[31mred\x07 and \u202eevil (#3)\n")
    fake_github.add_release("pytorch/pytorch", tag="v9\n\x1b[2J", name="Bad\rname", body=body)
    config = write_config(repos=("pytorch/pytorch",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    text = " ".join(m.all_text() for m in fake_slack.messages)
    assert "&lt;T&gt;" in text and "&amp;lt;" not in text.replace("`a &amp;lt; b`", "")
    assert "PR #1" in text and "javascript" not in text
    assert all(not url.startswith("javascript") for m in fake_slack.messages
               for url, _ in m.links)
    assert ("https://evil.example/x", "https://evil.example/x") in {
        link for m in fake_slack.messages for link in m.links}  # "#7" is not that PR
    assert not any(c in text for c in "\x1b\x07\u202e\r")
    assert "\x1b" not in json.dumps([m.blocks for m in fake_slack.messages])


def test_a_message_waiting_too_long_makes_the_probe_fail(fake_github, fake_slack, write_config,
                                                          run_cli, clock):
    """Transient failures for longer than ``poll.max_delivery_age`` are unhealthy too."""
    from datetime import timedelta

    fake_github.add_release("pytorch/xla", tag="v2.0", body="## FSDP\n- Add X (#1)\n")
    config = write_config('[poll]\nmax_delivery_age = "30m"\n', repos=("pytorch/xla",),
                          notifiers=slack_notifier(extra="retries = 0"),
                          slack_url=fake_slack.api_url)
    fake_slack.script("/api/chat.postMessage", *[Scripted.server_error()] * 2)
    assert poll(run_cli, config).code == 1
    assert run_cli("--config", str(config), "status", "--check").code == 0  # just queued
    clock.now += timedelta(minutes=31)
    result = poll(run_cli, config)
    assert result.code == 1 and "'releases'" in result.stderr
    check = run_cli("--config", str(config), "status", "--check")
    assert check.code == 1 and "undelivered since" in check.stdout and "30m" in check.stdout


TWO_CHANNELS = (slack_notifier("releases", "#releases")
                + slack_notifier("dist", "#dist-training", 'subsystems = ["distributed"]'))


@pytest.mark.slow
def test_an_edit_is_a_reply_in_the_releases_thread_and_updates_its_first_message(
        fake_github, fake_slack, write_config, run_cli, clock):
    from datetime import timedelta

    release = fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0",
                                      body=V27)
    config = write_config(repos=("pytorch/pytorch",), notifiers=TWO_CHANNELS,
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    parents = {m.channel: m for m in fake_slack.messages if m.thread_ts is None}
    assert set(parents) == {"releases", "dist-training"}
    old = "- Fixed a hang in FSDP2 reshard_after_forward (#1)"
    heading = "#### FullyShardedDataParallel2 (FSDP2)\n"
    body = V27.replace(heading, heading + old + "\n", 1)
    fake_github.edit_release("pytorch/pytorch", release["id"], body=body)
    clock.now += timedelta(days=1)
    assert poll(run_cli, config).code == 0
    count = len(fake_slack.messages)
    fake_github.edit_release("pytorch/pytorch", release["id"],
                             body=body.replace(old, old.replace("a hang", "a rare hang")))
    clock.now += timedelta(days=1)
    assert poll(run_cli, config).code == 0
    new = fake_slack.messages[count:]
    assert new and all(m.thread_ts is not None for m in new)  # nothing new at the top level
    for channel, parent in parents.items():
        replies = [m for m in new if m.channel == channel]
        assert replies and all(m.thread_ts == parent.ts for m in replies), channel
        first_line = replies[0].blocks[0]["text"]["text"]
        assert first_line.startswith("*Release notes edited:* 1 changed in Distributed: ")
        assert "rare hang" in first_line and not replies[0].broadcast
        updated = next(m for m in fake_slack.messages if m.ts == parent.ts)
        assert updated.edits == 2 and updated.blocks[0] == parent.blocks[0]
        assert "edited 2\u00d7, last 2026-12-01" in updated.all_text()
    # Where each channel's first message went is a diskcache key in the store, kept current.
    import diskcache

    with diskcache.Cache(str(config.parent / "store")) as cache:
        for name, channel in (("releases", "releases"), ("dist", "dist-training")):
            first = cache[("memory", name, f"thread:pytorch/pytorch:{release['id']}")]
            assert first["ts"] == parents[channel].ts and first["edits"] == 2


def test_a_pre_release_becoming_a_release_follows_in_its_thread(
        fake_github, fake_slack, write_config, run_cli):
    release = fake_github.add_release("pytorch/xla", tag="v2.1-rc1", name="PyTorch/XLA 2.1 RC1",
                                      body="## FSDP\n- Add X (#1)\n- Add Y (#2)\n",
                                      prerelease=True)
    config = write_config(repos=("pytorch/xla",),
                          notifiers=slack_notifier(extra="reply_broadcast = true"),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    (parent,) = [m for m in fake_slack.messages if m.thread_ts is None]
    assert "(pre-release)" in parent.blocks[0]["text"]["text"]
    fake_github.edit_release("pytorch/xla", release["id"], prerelease=False)
    assert poll(run_cli, config).code == 0
    assert len([m for m in fake_slack.messages if m.thread_ts is None]) == 1
    reply = fake_slack.messages[-1]
    assert reply.thread_ts == parent.ts and reply.broadcast
    assert "is now a full release" in reply.all_text()
    updated = next(m for m in fake_slack.messages if m.ts == parent.ts)
    assert updated.blocks[0]["text"]["text"] == "PyTorch/XLA 2.1 RC1 released"
    assert "a full release since" in updated.all_text()


def test_an_edit_whose_first_message_is_unknown_is_posted_on_its_own(
        fake_github, fake_slack, write_config, run_cli):
    """A channel that only takes edits never saw the release's first message."""
    release = fake_github.add_release("pytorch/xla", tag="v2.0", body="- Add X (#1)\n")
    config = write_config(repos=("pytorch/xla",),
                          notifiers=slack_notifier(extra='events = ["edited"]'),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0 and fake_slack.messages == []
    fake_github.edit_release("pytorch/xla", release["id"], body="- Add X and Z (#1)\n")
    assert poll(run_cli, config).code == 0
    fake_github.edit_release("pytorch/xla", release["id"], body="- Add X and W (#1)\n")
    assert poll(run_cli, config).code == 0
    first, reply = fake_slack.messages
    assert first.thread_ts is None and first.blocks[0]["text"]["text"] == (
        "PyTorch/XLA v2.0 release notes edited")
    assert reply.thread_ts == first.ts  # the next edit follows the one it knows


def test_a_deleted_release_says_so_in_its_thread(fake_github, fake_slack, write_config,
                                                 run_cli):
    release = fake_github.add_release("pytorch/xla", tag="v2.0", body="- Add X (#1)\n")
    config = write_config(repos=("pytorch/xla",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    (parent,) = fake_slack.messages
    fake_github.delete_release("pytorch/xla", release["id"])
    assert poll(run_cli, config).code == 0
    reply = fake_slack.messages[-1]
    assert reply.thread_ts == parent.ts and "was deleted on GitHub" in reply.all_text()
    assert "deleted on GitHub" in fake_slack.messages[0].all_text()  # the first, updated


def _counts(message) -> str:
    """The parent's count line (``*609 changes: …*``), found by its shape."""
    (block,) = [b for b in message.blocks if b["type"] == "section"
                and re.fullmatch(r"\*\d+ changes?: .*\*", b["text"]["text"])]
    return block["text"]["text"]


def _expected_counts(body: str, subsystems: list[str] | None = None) -> str:
    """The count line of the release as it now is, seen through a channel's filters."""
    from datetime import UTC, datetime

    from handlers.base import NotifierConfig
    from watcher.delivery.events import added, make_event
    from watcher.delivery.routing import route
    from watcher.models import Release
    from watcher.present import count_line

    now = datetime(2026, 11, 29, tzinfo=UTC)
    event = make_event("published", "pytorch/pytorch", Release(id=1, tag_name="v2.7.0"),
                       "0" * 64, added(Analyzer(builtin_taxonomy()).items(body)), now)
    view = route(event, NotifierConfig(name="n", type="slack", subsystems=subsystems))
    assert view is not None
    return f"*{count_line(view.items)}*"


@pytest.mark.slow
def test_an_edit_that_adds_or_removes_items_recounts_the_first_message(
        fake_github, fake_slack, write_config, run_cli):
    release = fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0",
                                      body=V27)
    config = write_config(repos=("pytorch/pytorch",), notifiers=TWO_CHANNELS,
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    parents = {m.channel: m for m in fake_slack.messages if m.thread_ts is None}
    assert _counts(parents["releases"]).startswith("*609 changes: ")
    assert "BC-breaking (11)" in parents["releases"].all_text()
    bc_heading = "### Change `torch.Tensor.new_tensor()`"
    fsdp = "#### FullyShardedDataParallel2 (FSDP2)\n"
    body = (V27.replace(bc_heading, "### Removed `torch.Tensor.legacy_widget()` (#150001)\n"
                                    "It was deprecated in 2.3.\n\n" + bc_heading, 1)
            .replace(fsdp, fsdp + "- Added prefetch hints to FSDP2 (#150002)\n", 1))
    fake_github.edit_release("pytorch/pytorch", release["id"], body=body)
    posted = len(fake_slack.messages)
    assert poll(run_cli, config).code == 0

    def now(channel: str):
        return next(m for m in fake_slack.messages if m.ts == parents[channel].ts)

    assert _counts(now("releases")) == _expected_counts(body)
    assert _counts(now("releases")).startswith("*611 changes: ")
    assert _counts(now("dist-training")) == _expected_counts(body, ["distributed"])
    assert _counts(now("dist-training")) != _counts(parents["dist-training"])
    updated = now("releases")
    # The parent shows 8 titles of a kind; the new one is counted among the rest.
    assert "*BC-breaking (12)*" in updated.all_text()
    assert "_…and 4 more in the thread_" in updated.all_text()
    assert updated.text.startswith("PyTorch 2.7.0 released: 611 changes; 12 BC-breaking changes")
    # The reply names each item's kind.
    reply = "\n".join(m.all_text() for m in fake_slack.messages[posted:]
                      if m.channel == "releases")
    assert "• *BC-breaking:* Removed `torch.Tensor.legacy_widget()`" in reply
    assert "*Improvement:* `FSDP` Added prefetch hints to FSDP2" in reply
    # Taking them out again counts them out.
    fake_github.edit_release("pytorch/pytorch", release["id"], body=V27)
    assert poll(run_cli, config).code == 0
    assert _counts(now("releases")) == _counts(parents["releases"])
    assert _counts(now("dist-training")) == _counts(parents["dist-training"])
    assert "*BC-breaking (11)*" in now("releases").all_text()
    assert "_…and 3 more in the thread_" in now("releases").all_text()


def test_a_promotion_is_one_reply_saying_what_changed_and_recounts(
        fake_github, fake_slack, write_config, run_cli):
    release = fake_github.add_release("pytorch/xla", tag="v2.1-rc1", name="PyTorch/XLA 2.1 RC1",
                                      body="## FSDP\n- Add X (#1)\n- Add Y (#2)\n",
                                      prerelease=True)
    config = write_config(repos=("pytorch/xla",), notifiers=slack_notifier(),
                          slack_url=fake_slack.api_url)
    assert poll(run_cli, config).code == 0
    (parent,) = fake_slack.messages[:1]
    assert _counts(parent).startswith("*2 changes: ")
    fake_github.edit_release("pytorch/xla", release["id"], prerelease=False, tag_name="v2.1",
                             name="PyTorch/XLA 2.1",
                             body="## FSDP\n- Add X (#1)\n- Add Y faster (#2)\n- Add Z (#3)\n")
    assert poll(run_cli, config).code == 0
    replies = fake_slack.thread(parent.ts)[1:]
    assert len(replies) == 1  # one event: no "edited" reply before it
    text = replies[0].all_text()
    assert replies[0].blocks[0]["text"]["text"].startswith(
        "*PyTorch/XLA 2.1 is now a full release* (it was a pre-release): "
        "name “PyTorch/XLA 2.1 RC1” → “PyTorch/XLA 2.1”, tag v2.1-rc1 → v2.1; "
        "the notes changed: ")
    assert "title or prose" not in text and "Release notes edited" not in text
    assert "Add Z" in text and "Add Y faster" in text and "_was:_ Add Y" in text
    updated = next(m for m in fake_slack.messages if m.ts == parent.ts)
    assert updated.blocks[0]["text"]["text"] == "PyTorch/XLA 2.1 released"
    assert _counts(updated).startswith("*3 changes: ")
