"""Slack posts for the largest release in the shared data, against the fewest Slack's limits
allow; and the per-event cap on a release too large for it.

The release with the most items among ``tests/fixtures/releases`` (PyTorch v2.5.0, 853 items)
goes out through the Slack notifier (bot token: parent message and thread, the defaults)
to the loopback fake Slack, which rejects what Slack rejects (50 blocks, 3,000 characters a
section, ``msg_blocks_too_long`` past 12,000 characters of block JSON). The fewest posts the
limits allow: the parent, plus the thread's block JSON over ``max_message_chars`` (the text
must go somewhere, and no message may carry more), rounded up. Target: at most 1.5x that.
The note also gives the count under the old packing (45 blocks, 10,000 characters) and what
the 40,000 characters of a message's ``text`` would allow, were Slack to take that much in
blocks (it does not: see ``handlers/slack/layout.py``).

Then a synthetic release of 3,000 items: it would need more than ``max_messages_per_event``
(20) messages, so it is cut to 20, the last one counting the items left out and linking the
release notes.
"""

from __future__ import annotations

import io
import json
import math
import sys
from datetime import UTC, datetime
from pathlib import Path

from run_all import RELEASES, TESTS, Row, print_table, times, verdict

from handlers.base import HandlerContext, MemoryProgress
from handlers.slack.compose import Limits, event_messages
from handlers.slack.items import Style
from handlers.slack.notifier import SlackNotifier, SlackNotifierConfig
from watcher.config import Secrets
from watcher.delivery.events import added, make_event
from watcher.models import Event, Release
from watcher.notes.analyze import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy

TOKEN = "xoxb-bench-token-5678"
TARGET = 1.5
TEXT_CHARS = 40_000
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def event_of(body: str, tag: str) -> tuple[Event, int]:
    items = Analyzer(builtin_taxonomy(), max_body_chars=10**6).items(body, repo="pytorch/pytorch")
    release = Release(id=1, tag_name=tag, name=f"PyTorch {tag}", body=body,
                      html_url=f"https://github.com/pytorch/pytorch/releases/tag/{tag}")
    return make_event("published", "pytorch/pytorch", release, "0" * 64, added(items), NOW), \
        len(items)


def largest_release() -> tuple[str, str]:
    bodies = {path.name: path.read_bytes().decode("utf-8")
              for path in sorted((RELEASES / "pytorch").glob("*.md"))}
    analyzer = Analyzer(builtin_taxonomy())
    name = max(bodies, key=lambda n: len(analyzer.items(bodies[n], repo="pytorch/pytorch")))
    return name, bodies[name]


def send(event: Event, api_url: str) -> SlackNotifierConfig:
    """Sends the event as the notifier sends it, with the notifier's defaults; returns them."""
    config = SlackNotifierConfig(name="releases", type="slack", channel="#releases",
                                 min_interval=0)
    context = HandlerContext(secrets=Secrets(SLACK_BOT_TOKEN=TOKEN), base_dir=Path("."),
                             stdout=io.StringIO(), slack_api_url=api_url)
    notifier = SlackNotifier(config, context)
    notifier.send(event, MemoryProgress())
    notifier.close()
    return config


def run() -> list[Row]:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from fakes.slack import FakeSlack

    name, body = largest_release()
    event, count = event_of(body, name.removesuffix(".md"))
    synthetic = "# Bug fixes\n" + "".join(
        f"## {area}\n" + "".join(f"- Fix `{area}` case {n} in the kernel path (#{n + 10000 * i})"
                                 f"\n" for n in range(600))
        for i, area in enumerate(["Distributed", "CUDA", "MPS", "torch.compile", "ROCm"]))
    big, big_count = event_of(synthetic, "v9.0")
    rows = []
    with FakeSlack() as slack:
        slack.add_token(TOKEN, channels=["#releases"])
        config = send(event, slack.api_url)
        errors = [r.error for r in slack.requests if r.error]
        if errors:
            raise RuntimeError(f"the fake Slack refused a message: {errors[0]}")
        sent = list(slack.messages)
        replies = sent[1:]
        thread_json = sum(len(_json(m.blocks)) for m in replies)
        thread_text = sum(len(b["text"]["text"]) for m in replies for b in m.blocks or []
                          if b["type"] == "section")
        fewest = 1 + math.ceil(thread_json / config.max_message_chars)
        old = len(event_messages(event, Limits(True, 10_000), Style(repo=event.repo)))
        text_only = 1 + math.ceil(thread_text / TEXT_CHARS)
        rows.append(Row(f"Slack posts, {name} ({count} items, every one whole)",
                        f"{len(sent)} posts", f"{fewest} the fewest the limits allow",
                        f"{times(len(sent) / fewest)}; {old} at the old 10,000-character "
                        f"packing; {text_only} if blocks took 40,000 characters; "
                        + verdict(len(sent) <= TARGET * fewest, f"<= {TARGET:g}x")))
        before = len(slack.messages)
        send(big, slack.api_url)
        capped = slack.messages[before:]
        whole = len(event_messages(big, Limits(True, config.max_message_chars),
                                   Style(repo=big.repo)))
        last = capped[-1].all_text()
        rows.append(Row(f"Slack posts, synthetic release of {big_count:,} items",
                        f"{len(capped)} posts", f"{whole} for every item",
                        f"max_messages_per_event = {config.max_messages_per_event}; "
                        + verdict(len(capped) <= config.max_messages_per_event
                                  and "not shown here" in last,
                                  "capped, the rest counted and linked")))
    return rows


def _json(blocks: object) -> str:
    return json.dumps(blocks, separators=(",", ":"))


if __name__ == "__main__":
    print_table(run())
