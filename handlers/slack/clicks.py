"""What a click on a release's message does (``buttons``): checked (``actions.read_click``),
done once (its envelope id or signature is recorded in the store first, as a slash command's),
by a member of the channel only (``conversations.members``, cached a minute), then answered
where it came from: the message updated (``chat.update``) or, for ``rw_all_uses``, replies in
its thread; a refusal is an ephemeral line through the click's ``response_url``. What a click
changes is logged with who clicked.

The transports acknowledge at once (Slack wants that within 3 seconds) and hand the click to
a worker thread of its own here, so a long list of uses never makes Slack show a failure.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from slack_sdk import WebClient, WebhookClient
from slack_sdk.errors import SlackApiError, SlackClientError

from handlers.slack.actions import Click, read_click
from handlers.slack.all_uses import all_uses_messages
from handlers.slack.answers import error_code
from handlers.slack.buttons import (
    ALL_USES,
    CONTROLS_BLOCK,
    ITEM_BLOCK,
    NOT_US,
    SNOOZE,
    UNMUTE,
    ButtonRef,
    controls,
    suppression,
    toggled_not_us,
)
from handlers.slack.items import Style
from watcher.delivery import NOT_QUIET, Quiet, channel_quiet
from watcher.models import Affect
from watcher.store import QuietEntry

if TYPE_CHECKING:
    from watcher.store import Store

logger = logging.getLogger(__name__)

What = Literal["mute", "snooze"]

MEMBERS_KEPT = 60.0  # seconds a channel's member list is trusted
GONE = ("This message is no longer one release-watch can change (its release was "
        "announced again since); the newest message of the release has working buttons.")


class Members:
    """Who is in a channel, asked of Slack (``conversations.members``, page by page) and kept
    ``ttl`` seconds."""

    def __init__(self, web: WebClient, monotonic: Callable[[], float], ttl: float = MEMBERS_KEPT
                 ) -> None:
        self._web, self._monotonic, self._ttl = web, monotonic, ttl
        self._kept: dict[str, tuple[float, frozenset[str]]] = {}
        self._lock = threading.Lock()

    def has(self, channel: str, user: str) -> bool:
        with self._lock:
            kept = self._kept.get(channel)
        if kept is None or self._monotonic() - kept[0] > self._ttl:
            kept = (self._monotonic(), self._ask(channel))
            with self._lock:
                self._kept[channel] = kept
        return user in kept[1]

    def _ask(self, channel: str) -> frozenset[str]:
        members: set[str] = set()
        cursor = ""
        while True:
            page = self._web.conversations_members(channel=channel, limit=1000, cursor=cursor)
            members.update(str(member) for member in page.get("members") or ())
            cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
            if not cursor:
                return frozenset(members)


class SlackActions:
    def __init__(self, store: Store, web: WebClient, *, api_url: str,
                 clock: Callable[[], datetime], epoch: Callable[[], float],
                 code_links: Mapping[str, str], max_chars: int = 12_000,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.store, self.web, self.api_url = store, web, api_url
        self.clock, self.epoch = clock, epoch
        self.code_links, self.max_chars = dict(code_links), max_chars
        self.members = Members(web, monotonic)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="slack-click")

    def __repr__(self) -> str:
        return "SlackActions(bot_token='**********')"

    def click(self, payload: Mapping[str, Any], key: str, until: float) -> bool | None:
        """Take one click: True when it will be done (on the worker), None when ``key`` was
        seen before (a replay, or an envelope delivered again: not done twice), False when
        it is no click Slack sends for our buttons (logged, and refused where it can be)."""
        click = read_click(payload, self.api_url)
        if isinstance(click, str):
            logger.warning("slack: a click was refused: %s", click)
            return False
        if not self.store.first_sighting(key, self.epoch(), until):
            logger.info("slack: a click was delivered again (%s); done once", key[:64])
            return None
        self._pool.submit(self._do, click)
        return True

    def settle(self, timeout: float = 10.0) -> None:
        """Wait until the clicks taken so far are done (one worker: they run in order)."""
        self._pool.submit(lambda: None).result(timeout)

    def close(self) -> None:
        """Finish the clicks taken, then stop."""
        self._pool.shutdown(wait=True)

    def _do(self, click: Click) -> None:
        try:
            self._act(click)
        except SlackApiError as error:  # its text quotes Slack's whole answer: the code only
            logger.error("slack: a click (%s by %s) failed: Slack answered %s",
                         click.action_id, click.user, error_code(error) or "an error")
        except (SlackClientError, OSError) as error:
            logger.error("slack: a click (%s by %s) failed: Slack unreachable (%s)",
                         click.action_id, click.user, type(error).__name__)
        except Exception:
            logger.exception("slack: a click (%s) failed unexpectedly", click.action_id)

    def _act(self, click: Click) -> None:
        if not self.members.has(click.channel, click.user):
            logger.warning("slack: %s clicked %s in %s but is not a member; refused",
                           click.user, click.action_id, click.channel)
            self._refuse(click, "Only members of this channel can change what release-watch "
                                "posts here; nothing was changed.")
            return
        ref = click.ref()
        memory = self.store.recall(ref.notifier, ref.thread) if ref is not None else None
        if (ref is None or not memory or memory.get("channel") != click.channel
                or memory.get("ts") != click.message_ts):
            self._refuse(click, GONE)
            return
        if click.action_id == ALL_USES:
            self._all_uses(click, memory)
            return
        if click.action_id == NOT_US:
            memory = self._not_us(click, memory)
        else:
            memory = self._quiet(click, ref, memory)
        if memory is not None:
            self.web.chat_update(channel=click.channel, ts=click.message_ts,
                                 text=memory.get("text") or "", blocks=memory.get("blocks"))
            self.store.remember(ref.notifier, ref.thread, memory)

    def _refuse(self, click: Click, text: str) -> None:
        if not click.response_url:
            return
        WebhookClient(click.response_url, timeout=10).send_dict(
            {"response_type": "ephemeral", "replace_original": False, "text": text})

    def _style(self, memory: Mapping[str, Any]) -> Style:
        repo = str(memory.get("release") or "").split("#", 1)[0]
        return Style(repo=repo, code_links=self.code_links)

    def _all_uses(self, click: Click, memory: Mapping[str, Any]) -> None:
        entry = (memory.get("uses") or {}).get(click.field("i"))
        if not entry:
            self._refuse(click, GONE)
            return
        messages = all_uses_messages(entry, self._style(memory), self.max_chars)
        for message in messages:
            self.web.chat_postMessage(channel=click.channel, thread_ts=click.message_ts,
                                      text=message.text, blocks=message.blocks,
                                      unfurl_links=False, unfurl_media=False)
        logger.info("slack: %s asked for all %d uses of an item in %s (%d messages)",
                    click.user, len(entry.get("uses") or ()), click.channel, len(messages))

    def _not_us(self, click: Click, memory: dict[str, Any]) -> dict[str, Any] | None:
        item_id, use_id = click.field("i"), click.field("u")
        entry = (memory.get("uses") or {}).get(item_id) or {}
        uses = [Affect.model_validate(use) for use in entry.get("uses") or ()]
        use = next((use for use in uses if suppression(entry["prs"], use).key == use_id), None)
        if use is None:
            self._refuse(click, GONE)
            return None
        said = dict(memory.get("not_us") or {})
        where = f"{use.codebase or use.root}: {use.path}:{use.line} ({use.api})"
        if self.store.delete_suppression(use_id) is not None:
            said.pop(use_id, None)
            logger.info("slack: %s took back 'not us' on %s in %s", click.user, where,
                        click.channel)
        else:
            at = self.clock()
            self.store.put_suppression(suppression(entry["prs"], use, by=click.user, at=at))
            said[use_id] = {"by": click.user, "at": at.isoformat(timespec="seconds")}
            logger.info("slack: %s said 'not us' to %s in %s", click.user, where,
                        click.channel)
        blocks = [toggled_not_us(block, click.value, use_id in said)
                  if block.get("block_id") == ITEM_BLOCK + item_id else block
                  for block in memory.get("blocks") or ()]
        return {**memory, "blocks": blocks, "not_us": said}

    def _quiet(self, click: Click, ref: ButtonRef, memory: dict[str, Any]) -> dict[str, Any]:
        """Mute, unmute, snooze or unsnooze in this channel; the controls drawn again."""
        release = str(memory.get("release") or "")
        what: What = "snooze" if click.action_id == SNOOZE else "mute"
        target = release if what == "snooze" else click.value
        on = click.value == "on" if what == "snooze" else click.action_id != UNMUTE
        if on:
            self.store.put_quiet(QuietEntry(click.channel, what, target, click.channel_name,
                                            by=click.user,
                                            at=self.clock().isoformat(timespec="seconds")))
        else:
            self.store.delete_quiet(click.channel, what, target)
        logger.info("slack: %s %s %s in %s (from the next event on)", click.user,
                    {"mute": "muted", "snooze": "snoozed"}[what] if on else
                    {"mute": "unmuted", "snooze": "unsnoozed"}[what], target, click.channel)
        quiet = self._channel_quiet(click.channel)
        drawn = controls(ref, release, memory.get("subsystems") or (), quiet)
        blocks = [drawn if str(block.get("block_id", "")).startswith(CONTROLS_BLOCK) else block
                  for block in memory.get("blocks") or ()]
        return {**memory, "blocks": blocks}

    def _channel_quiet(self, channel: str) -> Quiet:
        return channel_quiet(self.store.quiet_entries(channel)).get(channel, NOT_QUIET)
