"""Plans the Slack messages for an event or a digest: a parent message and thread replies
(bot token), or one message with an honest "and N more" (webhook).

Slack's limits (api.slack.com/reference/block-kit/blocks): at most 50 blocks a message, 3,000
characters in a section's text, 150 in a header. Slack also rejects messages whose blocks are
too large in total (``msg_blocks_too_long``, undocumented), so each message is kept under
``max_chars`` of block JSON. Content is split on item boundaries only, and every block is
validated with slack_sdk's models before anything is sent.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from handlers.slack_text import escape, link, plain, to_mrkdwn
from watcher.digest import Digest, by_repo, by_subsystem
from watcher.models import KIND_TITLES, Event, EventItem
from watcher.notes.taxonomy import top_level

SECTION_CHARS = 2900       # under Slack's 3,000, leaving room for a continuation marker
HEADER_CHARS = 150
MAX_BLOCKS = 45            # under Slack's 50
ITEM_CHARS = 600           # one item's line; longer ones end in "…" (the link has them whole)
CALLOUT_ITEMS = 8          # BC-breaking/deprecation items shown in the parent message
KIND_ORDER = ("bc_breaking", "deprecation", "security", "regression", "highlight",
              "new_feature", "improvement", "performance", "bug_fix", "docs", "developers",
              "other")
VERBS = {"published": "released", "edited": "release notes edited",
         "released": "is now a full release", "deleted": "release deleted"}
_RANK = {kind: index for index, kind in enumerate(KIND_ORDER)}


@dataclass
class SlackMessage:
    text: str                                   # the notification / fallback text
    blocks: list[dict[str, Any]]
    in_thread: bool = False

    def payload_chars(self) -> int:
        return len(json.dumps(self.blocks, separators=(",", ":")))


def _checked(block: Block) -> dict[str, Any]:
    block.validate_json()  # raises SlackObjectFormationError on a limit we got wrong
    return block.to_dict()


def header(text: str) -> dict[str, Any]:
    text = plain(text)
    if len(text) > HEADER_CHARS:
        text = text[: HEADER_CHARS - 1] + "…"
    return _checked(HeaderBlock(text=PlainTextObject(text=text, emoji=False)))


def section(mrkdwn: str) -> dict[str, Any]:
    return _checked(SectionBlock(text=MarkdownTextObject(text=mrkdwn)))


def context(mrkdwn: str) -> dict[str, Any]:
    return _checked(ContextBlock(elements=[MarkdownTextObject(text=mrkdwn)]))


def divider() -> dict[str, Any]:
    return _checked(DividerBlock())


def title_of(event: Event) -> str:
    name = event.name or event.tag
    if event.tag not in name:
        name = f"{name} ({event.tag})"
    return name if "/" in name or event.repo.split("/")[1].lower() in name.lower() else (
        f"{event.repo} {name}")


def item_line(item: EventItem, repo: str, *, show_subsystem: bool) -> str:
    first = item.text.split("\n", 1)[0]
    text = to_mrkdwn(first, repo, limit=ITEM_CHARS)
    finer = item.subsystem if show_subsystem else item.subsystem.partition("/")[2]
    tag = f"`{escape(finer)}` " if finer else ""
    if item.change == "removed":
        return f"• {tag}~{text}~ _(removed)_"
    if item.change == "changed" and item.old_text is not None:
        was = to_mrkdwn(item.old_text.split("\n", 1)[0], repo, limit=ITEM_CHARS // 2)
        return f"• {tag}{text}\n      _was:_ {was}"
    return f"• {tag}{text}"


@dataclass
class Packer:
    """Fills messages with blocks, starting a new message at the block or size limit."""

    max_chars: int
    in_thread: bool
    fallback: str
    messages: list[SlackMessage] = field(default_factory=list)

    def _current(self) -> SlackMessage:
        if not self.messages:
            self.messages.append(SlackMessage(self.fallback, [], self.in_thread))
        return self.messages[-1]

    def fits(self, block: dict[str, Any]) -> bool:
        message = self._current()
        size = len(json.dumps(block, separators=(",", ":"))) + 1
        return len(message.blocks) < MAX_BLOCKS and message.payload_chars() + size <= self.max_chars

    def add(self, block: dict[str, Any]) -> None:
        if self._current().blocks and not self.fits(block):
            self.messages.append(SlackMessage(self.fallback, [], self.in_thread))
        self._current().blocks.append(block)

    def add_lines(self, title: str, lines: Iterable[str]) -> None:
        """A titled list as as many sections as it needs, split between lines only."""
        chunk = f"*{title}*"
        for line in lines:
            if len(chunk) + 1 + len(line) > SECTION_CHARS:
                self.add(section(chunk))
                chunk = f"*{title}* _(continued)_"
            chunk = f"{chunk}\n{line}"
        self.add(section(chunk))


def _counts(items: list[EventItem]) -> str:
    by_subsystem = Counter(top_level(item.subsystem) for item in items)
    return " · ".join(f"{escape(name)} {count}" for name, count in by_subsystem.most_common())


def _by_kind(items: list[EventItem]) -> list[EventItem]:
    return sorted(items, key=lambda item: _RANK.get(item.kind, len(KIND_ORDER)))


def _edit_summary(items: list[EventItem]) -> str:
    changes = Counter(item.change for item in items)
    if not items:
        return "The title or prose changed; no item was added, removed or changed."
    return (f"*{changes['added']}* added · *{changes['removed']}* removed · "
            f"*{changes['changed']}* changed")


def fallback_text(event: Event) -> str:
    kinds = Counter(item.kind for item in event.items)
    called = [f"{kinds[k]} {KIND_TITLES[k]}" for k in ("bc_breaking", "deprecation") if kinds[k]]
    detail = f": {event.summary.items} items" + (f"; {', '.join(called)}" if called else "")
    return escape(f"{title_of(event)} {VERBS[event.event]}{detail if event.items else ''}")


def _parent(event: Event, packer: Packer, *, threads: bool) -> list[EventItem]:
    """Fills the parent message; returns the items it did not show (for the thread)."""
    pre = " (pre-release)" if event.prerelease else ""
    packer.add(header(f"{title_of(event)} {VERBS[event.event]}{pre}"))
    items = event.items
    if event.event == "edited":
        packer.add(section(_edit_summary(items)))
    elif items:
        packer.add(section(f"*{len(items)} items*: {_counts(items)}"))
    shown: set[int] = set()
    if event.event != "edited":
        for kind in ("bc_breaking", "deprecation", "security", "highlight"):
            picked = [i for i, item in enumerate(items) if item.kind == kind]
            if not picked:
                continue
            limit = CALLOUT_ITEMS if threads else len(picked)
            lines = [item_line(items[i], event.repo, show_subsystem=True) for i in picked[:limit]]
            more = len(picked) - limit
            if more > 0:
                lines.append(f"_…and {more} more in the thread_")
            packer.add_lines(f"{KIND_TITLES[kind]} ({len(picked)})", lines)
            shown.update(picked[:limit])
    notes = link(event.url, "Full release notes")
    packer.add(context(f"{notes} · {escape(event.repo)} · {escape(event.tag)}"))
    return [item for i, item in enumerate(items) if i not in shown]


def _thread_blocks(event: Event, rest: list[EventItem], packer: Packer) -> None:
    groups: dict[str, list[EventItem]] = {}
    for item in rest:
        groups.setdefault(top_level(item.subsystem), []).append(item)
    for subsystem, group in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        by_kind: dict[str, list[EventItem]] = {}
        for item in _by_kind(group):
            key = item.change if event.event == "edited" else item.kind
            by_kind.setdefault(key, []).append(item)
        packer.add(section(f"*{escape(subsystem)}* ({len(group)} items)"))
        for kind, members in by_kind.items():
            title = kind.capitalize() if event.event == "edited" else KIND_TITLES.get(kind, kind)
            packer.add_lines(title, (item_line(item, event.repo, show_subsystem=False)
                                     for item in members))


def plan_event(event: Event, *, threads: bool, max_chars: int) -> list[SlackMessage]:
    """Bot-token mode: parent + thread replies holding every item exactly once.
    Webhook mode (``threads=False``): one message, the rest summarised with a link."""
    fallback = fallback_text(event)
    parent = Packer(max_chars, in_thread=False, fallback=fallback)
    rest = _parent(event, parent, threads=threads)
    if threads:
        thread = Packer(max_chars, in_thread=True, fallback=fallback)
        _thread_blocks(event, rest, thread)
        return parent.messages + thread.messages
    return _single_message(event, parent, rest)


def _single_message(event: Event, packer: Packer, rest: list[EventItem]) -> list[SlackMessage]:
    """Fill one message with the most important remaining items; say how many are left."""
    message = packer.messages[0]
    footer = message.blocks.pop()  # the context line goes last
    shown = 0
    for item in _by_kind(rest):
        block = section(item_line(item, event.repo, show_subsystem=True))
        reserve = 400  # room for the "and N more" line and the footer
        if len(message.blocks) >= MAX_BLOCKS - 2 or (
                message.payload_chars() + len(json.dumps(block)) + reserve > packer.max_chars):
            break
        message.blocks.append(block)
        shown += 1
    left = len(rest) - shown
    if left:
        message.blocks.append(section(f"_…and {left} more — {link(event.url, 'full notes')}_"))
    message.blocks.append(footer)
    return [message]


def plan_texts(messages: list[SlackMessage]) -> str:
    """The exact payloads as JSON, for ``--dry-run``."""
    return json.dumps([{"thread_reply": m.in_thread, "text": m.text, "blocks": m.blocks}
                       for m in messages], indent=2, ensure_ascii=False)


def plan_digest(digest: Digest, *, threads: bool, max_chars: int) -> list[SlackMessage]:
    """Parent: the period, per repo what happened, per subsystem the counts. Thread (or, for a
    webhook, the same message until full): the most important items per subsystem."""
    period = f"{digest.period_start:%b %d} to {digest.period_end:%b %d, %Y}"
    fallback = escape(f"release-watch digest {period}: {len(digest.events)} release events")
    parent = Packer(max_chars, in_thread=False, fallback=fallback)
    parent.add(header(f"Release digest: {period}"))
    if digest.empty:
        parent.add(section("Nothing new in this period."))
        return parent.messages
    for repo, events in by_repo(digest).items():
        lines = []
        for event in events:
            what = VERBS[event.event]
            counts = (_edit_summary(event.items) if event.event == "edited"
                      else f"{event.summary.items} items")
            lines.append(f"• {link(event.url, event.name or event.tag)} {what}: {counts}")
        parent.add_lines(escape(repo), lines)
    groups = by_subsystem(digest)
    parent.add_lines("By subsystem", (
        f"• *{escape(g.subsystem)}* {g.count}: " + ", ".join(
            f"{n} {KIND_TITLES.get(k, k).lower()}" for k, n in g.by_kind.items())
        for g in groups))
    detail = Packer(max_chars, in_thread=threads, fallback=fallback)
    for group in groups:
        if group.top:
            detail.add_lines(f"{escape(group.subsystem)}: most important", (
                f"{item_line(item, event.repo, show_subsystem=False)} "
                f"_({KIND_TITLES.get(item.kind, item.kind).lower()}, {escape(event.tag)})_"
                for event, item in group.top))
    if threads:
        return parent.messages + detail.messages
    message = parent.messages[0]
    for block in (b for m in detail.messages for b in m.blocks):
        if len(message.blocks) >= MAX_BLOCKS - 1 or (
                message.payload_chars() + len(json.dumps(block)) + 300 > max_chars):
            message.blocks.append(section("_…more in the release notes linked above_"))
            break
        message.blocks.append(block)
    return [message]
