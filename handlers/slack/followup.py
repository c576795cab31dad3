"""What follows a release's first Slack message: its edits, its becoming a full release, its
deletion, as replies in that message's thread, and the first message kept up to date.

The first message of a release in a channel is remembered (channel, ts, its blocks). An event
about that release later is a reply in its thread whose first line says what happened in words
("1 changed in Distributed: Fix …"), followed by the changed items whole; the first message is
then updated in place (``chat.update``) with a status line: how often and when it was edited,
when it became a full release, when it was deleted.
"""

from __future__ import annotations

from typing import Any

from handlers.slack.blocks import Style, add_affects, add_items, edit_summary, fallback_text
from handlers.slack.layout import Packer, SlackMessage, context, header, section
from handlers.slack.text import escape
from watcher.models import Event
from watcher.present import UNSURE_BELOW, by_change, by_top_subsystem, release_title

FOLLOW_UPS = frozenset({"edited", "released", "deleted"})
STATUS_BLOCK = "release-watch-status"  # block_id of the status line a follow-up updates


def thread_key(event: Event) -> str:
    """Where a notifier remembers a release's first message."""
    return f"thread:{event.repo}:{event.release_id}"


def first_message(channel: str, ts: str, message: SlackMessage) -> dict[str, Any]:
    """What is remembered of a release's first message, to reply to it and update it."""
    return {"channel": channel, "ts": ts, "text": message.text, "blocks": message.blocks,
            "edits": 0}


def _opening(event: Event, style: Style) -> str:
    title = escape(release_title(event))
    if event.event == "released":
        return f"*{title} is now a full release* (it was a pre-release)"
    if event.event == "deleted":
        return f"*{title} was deleted on GitHub.*"
    return f"*Release notes edited:* {edit_summary(event.items, style)}"


def plan_follow_up(event: Event, *, max_chars: int, threshold: float = UNSURE_BELOW,
                   code_link: str | None = None) -> list[SlackMessage]:
    """The replies: what happened in words, what of it affects the configured code, then (for
    an edit) what changed, whole, per subsystem: added, changed (with what it was), removed."""
    style = Style(threshold, event.repo, code_link)
    packer = Packer(max_chars, in_thread=True, fallback=fallback_text(event))
    packer.add(section(_opening(event, style)))
    add_affects(packer, event.items, style)
    if event.event == "edited" and len(event.items) > 0:
        for name, group in by_top_subsystem(event.items):
            for change, members in by_change(group):
                add_items(packer, f"{escape(name)}: {change}", members, style, show_top=False)
    return packer.messages


def _status(memory: dict[str, Any]) -> str:
    parts = []
    if memory.get("edits"):
        parts.append(f"edited {memory['edits']}\u00d7, last {memory['last_edit']}")
    if memory.get("released"):
        parts.append(f"a full release since {memory['released']}")
    if memory.get("deleted"):
        parts.append(f"deleted on GitHub {memory['deleted']}")
    return " · ".join(parts)


def updated_first_message(memory: dict[str, Any], event: Event) -> dict[str, Any]:
    """The remembered first message after ``event``: its counts moved on, its status line
    (and, once a pre-release is released, its header) rewritten."""
    day = f"{event.detected_at:%Y-%m-%d}"
    memory = dict(memory)
    if event.event == "edited":
        memory.update(edits=int(memory.get("edits", 0)) + 1, last_edit=day)
    elif event.event == "released":
        memory["released"] = day
    elif event.event == "deleted":
        memory["deleted"] = day
    blocks = [block for block in memory.get("blocks") or []
              if block.get("block_id") != STATUS_BLOCK]
    if event.event == "released" and blocks and blocks[0].get("type") == "header":
        blocks[0] = header(f"{release_title(event)} released")
    status = context(f"_{escape(_status(memory))}_")
    status["block_id"] = STATUS_BLOCK
    memory["blocks"] = [*blocks, status]
    return memory
