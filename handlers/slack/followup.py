"""What follows a release's first Slack message: its edits, its becoming a full release, its
deletion, as replies in that message's thread, and the first message kept up to date.

The first message of a release in a channel is remembered (channel, ts, its blocks, and what
it counted: ``recount``). An event about that release later is a reply in its thread whose
first line says what happened in words ("1 changed in Distributed: *Bug fix:* Fix …", "is now
a full release: name … → …"), followed by the changed items whole, each naming its kind; the
first message is then updated in place (``chat.update``): its counts drawn again for the
release as it now is, and a status line: how often and when it was edited, when it became a
full release, when it was deleted.
"""

from __future__ import annotations

from typing import Any

from handlers.slack.blocks import edit_summary, fallback_text, most_that_fit, promotion_summary
from handlers.slack.items import Style, add_affects, add_items
from handlers.slack.layout import Packer, SlackMessage, context, header, section
from handlers.slack.recount import recounted
from handlers.slack.text import escape
from watcher.models import Event, EventItem
from watcher.present import UNSURE_BELOW, by_change, by_top_subsystem, release_title, renamed

FOLLOW_UPS = frozenset({"edited", "released", "deleted"})
STATUS_BLOCK = "release-watch-status"  # block_id of the status line a follow-up updates


def thread_key(event: Event) -> str:
    """Where a notifier remembers a release's first message."""
    return f"thread:{event.repo}:{event.release_id}"


def first_message(
    channel: str, ts: str, message: SlackMessage, counts: dict[str, Any] | None = None
) -> dict[str, Any]:
    """What is remembered of a release's first message, to reply to it and update it;
    ``counts``: what it counted (``recount.parent_counts``), to keep its counts current."""
    return {
        "channel": channel,
        "ts": ts,
        "text": message.text,
        "blocks": message.blocks,
        "edits": 0,
        **(counts or {}),
    }


def _opening(event: Event, style: Style) -> str:
    title = escape(release_title(event))
    if event.event == "released":
        changed = promotion_summary(event)
        return f"*{title} is now a full release* (it was a pre-release)" + (
            f": {changed}" if changed else ""
        )
    if event.event == "deleted":
        return f"*{title} was deleted on GitHub.*"
    return f"*Release notes edited:* {edit_summary(event.items, style, renamed(event))}"


def plan_follow_up(
    event: Event,
    *,
    max_chars: int,
    threshold: float = UNSURE_BELOW,
    code_link: str | None = None,
    max_messages: int | None = None,
) -> list[SlackMessage]:
    """The replies: what happened in words, what of it affects the configured code, then
    what changed in the notes (an edit's items, a promotion's changes), whole, per subsystem:
    added, changed (with what it was), removed, each item naming its kind. At most
    ``max_messages`` replies, as for a release's first post: past them the most important
    changes are shown and the rest counted, with a link to the release notes."""
    style = Style(threshold, event.repo, code_link)
    changes = event.items if event.event == "edited" else event.changes or []

    def planned(shown: list[EventItem], closing: str | None = None) -> list[SlackMessage]:
        packer = Packer(max_chars, in_thread=True, fallback=fallback_text(event))
        packer.add(section(_opening(event, style)))
        add_affects(packer, event.items, style)
        for name, group in by_top_subsystem(shown):
            for change, members in by_change(group):
                add_items(
                    packer, f"{escape(name)}: {change}", members, style, show_top=False,
                    show_kind=True,
                )
        if closing is not None:
            packer.add(section(closing))
        return packer.messages

    replies = planned(changes)
    if max_messages is None or len(replies) <= max_messages:
        return replies
    return most_that_fit(event, changes, planned, max_messages)


def _status(memory: dict[str, Any]) -> str:
    parts = []
    if memory.get("edits"):
        parts.append(f"edited {memory['edits']}\u00d7, last {memory['last_edit']}")
    if memory.get("released"):
        parts.append(f"a full release since {memory['released']}")
    if memory.get("deleted"):
        parts.append(f"deleted on GitHub {memory['deleted']}")
    return " · ".join(parts)


def updated_first_message(
    memory: dict[str, Any],
    event: Event,
    *,
    max_chars: int,
    threshold: float = UNSURE_BELOW,
    code_link: str | None = None,
) -> dict[str, Any]:
    """The remembered first message after ``event``: its counts drawn again for the release
    as it now is, its status line (and, once a pre-release is released, its header)
    rewritten."""
    day = f"{event.detected_at:%Y-%m-%d}"
    memory = dict(memory)
    if event.event == "edited":
        memory.update(edits=int(memory.get("edits", 0)) + 1, last_edit=day)
    elif event.event == "released":
        memory["released"] = day
    elif event.event == "deleted":
        memory["deleted"] = day
    blocks = [
        block for block in memory.get("blocks") or [] if block.get("block_id") != STATUS_BLOCK
    ]
    if event.event == "released" and blocks and blocks[0].get("type") == "header":
        memory["headline"] = f"{release_title(event)} released"
        blocks[0] = header(memory["headline"])
    memory["blocks"] = blocks
    # Room is kept for the status line that goes last.
    memory = recounted(memory, event, Style(threshold, event.repo, code_link), max_chars - 400)
    status = context(f"_{escape(_status(memory))}_")
    status["block_id"] = STATUS_BLOCK
    memory["blocks"] = [*memory["blocks"], status]
    return memory
