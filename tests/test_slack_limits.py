"""Releases at Slack's limits, sent by the Slack notifier through the real slack-sdk to the fake
Slack, which refuses what Slack refuses: every message accepted, none past Slack's limits, and
no item dropped without being counted.

Slack's limits (``tests/fakes/slack.py`` enforces each, with Slack's error code):
  * up to 50 blocks a message (docs.slack.dev/reference/block-kit/blocks), else
    ``invalid_blocks``;
  * a section's text up to 3,000 characters (api.slack.com/reference/block-kit/blocks#section)
    and a header's up to 150 (docs.slack.dev/reference/block-kit/blocks/header-block), else
    ``invalid_blocks``;
  * all of a message's blocks together: past about 12,000 characters of block JSON Slack answers
    ``msg_blocks_too_long``, a ceiling it does not document (github.com/slackapi/bolt-js issue
    2509).

An item not shown is counted in the last message's "N more" line, which links the release
notes: a webhook has one message for an event, a bot token's thread at most
``max_messages_per_event``. Only the notifier's public surface is used (``SlackNotifier``'s
``send`` and ``preview``): how it plans the messages is its own business.
"""

from __future__ import annotations

import io
import json
import random
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import SLACK_TOKEN
from fakes.slack import MAX_BLOCKS, MAX_HEADER_TEXT, MAX_SECTION_TEXT, FakeSlack, Message
from readable import message_text, missing_items, slack_words

from handlers.base import HandlerContext, MemoryProgress, notifier_config
from handlers.slack import SlackNotifier
from watcher.config import Secrets
from watcher.delivery import added, make_event
from watcher.models import Event, Release
from watcher.notes.analyze import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy

REPO = "pytorch/pytorch"
URL = f"https://github.com/{REPO}/releases/tag/v9.0.0"
NOW = datetime(2026, 11, 29, tzinfo=UTC)
AREAS = ("Distributed", "CUDA", "MPS", "torch.compile", "ROCm", "Releng")
KINDS = ("Backwards Incompatible changes", "Deprecations", "Bug fixes", "Improvements")
PR = re.compile(rf"^https://github\.com/{re.escape(REPO)}/pull/(\d+)$")
MORE = re.compile(r"([\d,]+) more\b")
PROSE = ("the kernel path now checks its inputs before it launches, so a bad stride or an "
         "unaligned buffer is an error at the call and not a crash later on;")


def short_item(number: int, rng: random.Random) -> str:
    return f"- Fix `{rng.choice(AREAS)}` case {number} in the kernel path (#{number})\n"


def long_item(number: int, rng: random.Random) -> str:
    """An item of a few hundred to 2,500 characters: prose lines, and in one item of three a
    code block, indented under its bullet as the notes write them."""
    size = rng.randint(300, 2_500)
    lines = [f"- Rework case {number} of the `{rng.choice(AREAS)}` kernel path (#{number})"]
    code = number % 3 == 0
    while sum(len(line) + 1 for line in lines) < size:
        if code and len(lines) == 3:
            lines += ["  ```python", *(f"  y{k} = torch.ones({k}, device='cuda') * {number}"
                                       for k in range(rng.randint(3, 15))), "  ```"]
            continue
        words = PROSE.split()
        start = rng.randrange(len(words))
        lines.append("  " + " ".join(words[start:] + words[:start]))
    return "\n".join(lines) + "\n"


def notes(count: int, item: Callable[[int, random.Random], str], seed: int = 31) -> str:
    """``count`` items spread over kinds and areas, numbered 1.., in a fixed random order."""
    rng = random.Random(seed)
    kinds: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for number in range(1, count + 1):
        kind = KINDS[0] if number % 25 == 0 else KINDS[1] if number % 40 == 0 else rng.choice(
            KINDS[2:])
        kinds[kind].append(item(number, rng))
    return "".join(f"# {kind}\n" + "".join(items) + "\n" for kind, items in kinds.items())


def event_of(body: str) -> Event:
    release = Release(id=9, tag_name="v9.0.0", name="PyTorch 9.0.0", body=body, html_url=URL,
                      published_at=NOW)
    items = added(Analyzer(builtin_taxonomy()).items(body, url=URL))
    return make_event("published", REPO, release, "9" * 64, items, NOW)


def slack(fake: FakeSlack, tmp_path: Path, *, webhook: bool, **keys: Any) -> SlackNotifier:
    raw: dict[str, Any] = {"name": "releases", "type": "slack", "min_interval": "0s", **keys}
    raw |= {"delivery": "webhook"} if webhook else {"channel": "#releases"}
    environ = {"SLACK_WEBHOOK_URL": fake.webhook_url, "SLACK_BOT_TOKEN": SLACK_TOKEN}
    cls, config = notifier_config(raw, "test", environ=environ)
    assert cls is SlackNotifier
    context = HandlerContext(secrets=Secrets.model_validate(environ), base_dir=tmp_path,
                             stdout=io.StringIO(), slack_api_url=fake.api_url,
                             sleep=lambda _: None)
    return SlackNotifier(config, context)


def assert_within_slack_limits(fake: FakeSlack) -> None:
    assert fake.messages
    assert [(r.status, r.error) for r in fake.requests if r.error or r.status != 200] == []
    for message in fake.messages:
        blocks = message.blocks or []
        assert 1 <= len(blocks) <= MAX_BLOCKS
        assert len(json.dumps(blocks, separators=(",", ":"))) <= fake.max_blocks_json
        for block in blocks:
            limit = {"section": MAX_SECTION_TEXT, "header": MAX_HEADER_TEXT}.get(block["type"])
            if limit is not None:
                assert len(block["text"]["text"]) <= limit


def shown_prs(messages: list[Message]) -> list[int]:
    return [int(found.group(1)) for message in messages for url, label in message.links
            if (found := PR.match(url)) and label == f"#{found.group(1)}"]


def counted_rest(messages: list[Message]) -> int:
    """The "N more" line's N (0 without one); it must be in the last message, with a link to
    the release notes beside it."""
    counted = [(index, block["text"]["text"]) for index, message in enumerate(messages)
               for block in message.blocks or [] if block["type"] == "section"
               and MORE.search(block["text"]["text"]) and URL in block["text"]["text"]]
    if not counted:
        return 0
    ((index, line),) = counted
    assert index == len(messages) - 1, "the rest is counted in the last message"
    found = MORE.search(line)
    assert found is not None
    return int(found.group(1).replace(",", ""))


def assert_nothing_dropped(event: Event, sent: list[Message]) -> int:
    """Every item whole in ``sent``, or counted; returns how many were counted."""
    everything = [item.prs[0] for item in event.items]
    shown = shown_prs(sent)
    assert len(shown) == len(set(shown)), "an item shown twice"
    assert set(shown) <= set(everything)
    rest = counted_rest(sent)
    assert len(shown) + rest == len(everything)
    whole = [item.text for item in event.items if item.prs[0] in set(shown)]
    assert missing_items(slack_words(message_text(sent)), whole) == []
    return rest


# A long-item release as long as a release body may be (GitHub keeps 125,000 characters).
CASES = {"150 short items": (150, short_item), "80 long items": (80, long_item)}


@pytest.mark.parametrize("case", list(CASES))
def test_a_webhook_release_is_one_accepted_message_counting_what_it_cannot_hold(
        fake_slack: FakeSlack, tmp_path: Path, case: str) -> None:
    count, item = CASES[case]
    body = notes(count, item)
    assert len(body) <= 125_000
    event = event_of(body)
    assert len(event.items) == count
    notifier = slack(fake_slack, tmp_path, webhook=True)
    preview = json.loads(notifier.preview(event))
    notifier.send(event, MemoryProgress())
    assert_within_slack_limits(fake_slack)
    (message,) = fake_slack.messages
    assert message.via == "webhook"
    assert [message.blocks] == [planned["blocks"] for planned in preview]
    assert assert_nothing_dropped(event, [message]) > 0  # so many never fit in one message
    assert (URL, "full notes") in message.links


@pytest.mark.slow
@pytest.mark.parametrize(("case", "cap"), [("150 short items", 20), ("80 long items", 20),
                                           ("80 long items", 4)])
def test_a_bot_token_release_is_a_parent_and_a_thread_of_accepted_messages(
        fake_slack: FakeSlack, tmp_path: Path, case: str, cap: int) -> None:
    event = event_of(notes(*CASES[case]))
    notifier = slack(fake_slack, tmp_path, webhook=False, max_messages_per_event=cap)
    preview = json.loads(notifier.preview(event))
    notifier.send(event, MemoryProgress())
    assert_within_slack_limits(fake_slack)
    parent, *replies = fake_slack.messages
    assert parent.thread_ts is None and replies
    assert all(reply.thread_ts == parent.ts for reply in replies)
    assert len(fake_slack.messages) <= cap
    assert [m.blocks for m in fake_slack.messages] == [p["blocks"] for p in preview]
    rest = assert_nothing_dropped(event, replies)
    if cap == 20:
        assert rest == 0  # room for every item: each one whole in the thread
    else:
        assert rest > 0 and len(fake_slack.messages) == cap  # the cap is hit and said
        assert (URL, "the full release notes") in replies[-1].links
