"""An event to Slack messages in one forward pass: the event's plan (``watcher.present``), drawn
as Slack pieces (``render``), packed within Slack's limits (``layout``), within the channel's
own: a cap on messages per event, a webhook's single message.

Bot-token delivery posts a parent message and its thread; a webhook posts one message, most
important first, the rest counted. What happens to a release later (an edit, a promotion, a
deletion) is a reply in its first message's thread (``follow_up_messages``), and that first
message is redrawn (``redrawn_first``): the same pass run on the release as it now is, its
status line last. Each stage takes the value of the one before; none calls back into it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from handlers.slack import render
from handlers.slack.blocks import header, section
from handlers.slack.buttons import release_memory, uses_memory
from handlers.slack.items import Style
from handlers.slack.layout import MAX_BLOCKS, SlackMessage, block_chars, pack, piece_blocks
from handlers.slack.text import link
from watcher.models import KIND_TITLES, Event, EventItem
from watcher.present import (
    EventPlan,
    by_kind,
    plan_event,
    ranked,
    release_now,
    release_title,
    sections_of,
)

FOLLOW_UPS = frozenset({"edited", "released", "deleted"})
STATUS_BLOCK = "release-watch-status"  # the first message's status line, replaced on a redraw
_STATUS_ROOM = 400  # what a redrawn first message keeps free for its status line

Planned = Callable[[list[EventItem], str | None], list[SlackMessage]]


@dataclass(frozen=True)
class Limits:
    """The channel's: threads (bot token) or one message (webhook), block JSON per message,
    messages per event (None: no cap)."""

    threads: bool
    max_chars: int
    max_messages: int | None = None


def thread_key(event: Event) -> str:
    """Where a notifier remembers a release's first message."""
    return f"thread:{event.repo}:{event.release_id}"


def first_message(channel: str, ts: str, message: SlackMessage, event: Event
                  ) -> dict[str, Any]:
    """What is remembered of a release's first message, to reply to it and redraw it;
    ``announces``: it announced the release (not an edit posted on its own, which keeps
    saying what that edit changed)."""
    return {"channel": channel, "ts": ts, "text": message.text, "blocks": message.blocks,
            "edits": 0, "announces": event.event in ("published", "released"),
            "uses": uses_memory(event.items), **release_memory(event, event.items)}


# ---- a release's announcement -----------------------------------------------------------
def event_messages(event: Event, limits: Limits, style: Style) -> list[SlackMessage]:
    """Bot token: a parent message, then every item whole in its thread, in at most
    ``max_messages`` messages: when the items need more, the thread holds the most important
    of them whole and ends by counting the rest, with a link to the release notes.
    Webhook: one message, most important first, the rest counted."""
    plan = plan_event(event, style.threshold)
    fallback = render.summary_text(plan)
    parent = pack(render.parent(plan, style, threads=limits.threads), limits.max_chars,
                  in_thread=False, fallback=fallback)
    if not limits.threads:
        return [_one_message(plan, parent[0], style, limits.max_chars)]
    if len(plan.items) <= 1:
        return parent

    def thread(items: list[EventItem], closing: str | None) -> list[SlackMessage]:
        sections = (plan.sections if items is plan.items
                    else sections_of(items, per_change=plan.edited))  # what a cap keeps
        pieces = render.thread(sections, style, edited=plan.edited)
        if closing is not None:
            pieces.append(section(closing))
        return pack(pieces, limits.max_chars, in_thread=True, fallback=fallback)

    replies = thread(plan.items, None)
    if limits.max_messages is None or len(parent) + len(replies) <= limits.max_messages:
        return parent + replies
    room = max(1, limits.max_messages - len(parent))
    return parent + most_that_fit(plan, plan.items, thread, room)


def most_that_fit(plan: EventPlan, items: list[EventItem], planned: Planned, room: int,
                  ) -> list[SlackMessage]:
    """The messages ``planned`` makes of the most items, most important first, that fit in
    ``room`` messages with a closing line counting the rest (with a link to the release
    notes); found by halving, since more items never take fewer messages."""
    order = ranked(items)

    def with_first(count: int) -> list[SlackMessage]:
        keep = set(order[:count])
        left = [item for i, item in enumerate(items) if i not in keep]
        closing = render.closing_line(left, sections_of(left, per_change=False),
                                      plan.event.url)
        return planned([item for i, item in enumerate(items) if i in keep], closing)

    low, high, best = 0, len(items) - 1, with_first(0)
    while low < high:
        middle = (low + high + 1) // 2
        messages = with_first(middle)
        if len(messages) <= room:
            low, best = middle, messages
        else:
            high = middle - 1
    return best


def _one_message(plan: EventPlan, message: SlackMessage, style: Style, max_chars: int,
                 ) -> SlackMessage:
    """A webhook's one message: the parent, then whole items, most important first, while
    they fit; what is left is counted, with a link to the notes, before the footer."""
    footer = message.blocks.pop()
    rest = [] if len(plan.items) == 1 else plan.items
    shown = 0
    for group in by_kind(rest):
        title = f"{KIND_TITLES.get(group.key, group.key)} ({len(group.items)})"
        for item in group.items:
            blocks = piece_blocks(render.whole_item(title, item, style))
            size = sum(block_chars(block) for block in blocks)
            if (len(message.blocks) + len(blocks) > MAX_BLOCKS - 2
                    or message.payload_chars() + size + 400 > max_chars):  # room for the end
                return _closed(message, footer, plan.event.url, len(rest) - shown)
            message.blocks.extend(blocks)
            shown += 1
            title = ""  # the kind's title heads its first item only
    return _closed(message, footer, plan.event.url, len(rest) - shown)


def _closed(message: SlackMessage, footer: dict[str, Any], url: str, left: int
            ) -> SlackMessage:
    if left:
        message.blocks.append(section(f"_…and {left} more — {link(url, 'full notes')}_"))
    message.blocks.append(footer)
    return message


# ---- what follows: replies in the release's thread, and its first message redrawn --------
def follow_up_messages(event: Event, limits: Limits, style: Style) -> list[SlackMessage]:
    """The replies: what happened in words, what of it affects the configured code, then
    what changed in the notes (an edit's items, a promotion's changes), whole, per subsystem:
    added, changed (with what it was), removed, each item naming its kind. At most
    ``max_messages`` replies, as for a release's first post."""
    plan = plan_event(event, style.threshold)
    fallback = render.summary_text(plan)

    def replies(shown: list[EventItem], closing: str | None) -> list[SlackMessage]:
        pieces = render.follow_up(plan, sections_of(shown, per_change=True), style)
        if closing is not None:
            pieces.append(section(closing))
        return pack(pieces, limits.max_chars, in_thread=True, fallback=fallback)

    messages = replies(plan.changes, None)
    if limits.max_messages is None or len(messages) <= limits.max_messages:
        return messages
    return most_that_fit(plan, plan.changes, replies, limits.max_messages)


def redrawn_first(memory: dict[str, Any], event: Event, limits: Limits, style: Style,
                  ) -> dict[str, Any]:
    """The remembered first message after ``event``: the release's parent message drawn
    again as the release now is (its counts, what affects the code, its called-out kinds),
    then its status line (how often and when it was edited, released, deleted)."""
    day = f"{event.detected_at:%Y-%m-%d}"
    memory = dict(memory)
    if event.event == "edited":
        memory.update(edits=int(memory.get("edits", 0)) + 1, last_edit=day)
    elif event.event == "released":
        memory["released"] = day
    elif event.event == "deleted":
        memory["deleted"] = day
    status = render.status_line(memory)
    status["block_id"] = STATUS_BLOCK
    # A memory from before first messages were redrawn whole has counts iff it announced.
    announces = memory.get("announces", "tally" in memory)
    now = release_now(event) if announces else None
    if now is None:  # an edit's own message, or an event from before events carried the
        # release: the status line only
        kept = [block for block in memory.get("blocks") or []
                if block.get("block_id") != STATUS_BLOCK]
        if event.event == "released" and kept and kept[0].get("type") == "header":
            kept[0] = header(f"{release_title(event)} released")
        return {**memory, "blocks": [*kept, status]}
    plan = plan_event(now, style.threshold)
    style = replace(style, not_us=memory.get("not_us") or {})
    first = pack(render.parent(plan, style, threads=True), limits.max_chars - _STATUS_ROOM,
                 in_thread=False, fallback=render.summary_text(plan))[0]
    return {**memory, "text": first.text, "blocks": [*first.blocks, status],
            "uses": uses_memory(now.items), **release_memory(now, now.items)}
