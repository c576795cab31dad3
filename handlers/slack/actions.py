"""One click on a release's message, as Slack sends it (a ``block_actions`` payload, over
Socket Mode or to ``/slack/interactive``): its fields, checked against what Slack can send
before anything is done with them (api.slack.com/reference/interaction-payloads/block-actions).

Checked: the payload's type, one action with one of our ``action_id``s, the ids' shapes (as a
slash command's: ``C…``/``G…`` channels, ``U…``/``W…`` users, ``T…``/``E…`` teams), the
message's ``ts``, the sizes (a button's value is at most 2,000 characters), and that the
``response_url`` leads to Slack (or to the configured ``[slack] api_url``'s host: GovSlack, a
test's fake) before it is ever posted to. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from handlers.slack.buttons import ACTION_IDS, CONTROLS_BLOCK, MAX_BLOCK_ID, ButtonRef
from watcher.models import SUBSYSTEMS
from watcher.subscribe import SLACK_IDS

MAX_VALUE = 2000  # a button's value (Block Kit's limit)
_TS = re.compile(r"[0-9]{1,12}\.[0-9]{1,9}")
_SLACK_HOSTS = ("slack.com", "slack-gov.com")


@dataclass(frozen=True)
class Click:
    action_id: str
    value: str  # a button's value, or the option a menu chose
    block_id: str
    user: str
    channel: str
    channel_name: str
    message_ts: str
    team: str = ""
    response_url: str = ""

    def ref(self) -> ButtonRef | None:
        """The memory a button names (in its value) or the controls name (in their block's
        id); None when neither names one."""
        text = (self.block_id.removeprefix(CONTROLS_BLOCK)
                if self.block_id.startswith(CONTROLS_BLOCK) else self.value)
        data = _object(text)
        notifier, thread = data.get("n"), data.get("t")
        if isinstance(notifier, str) and isinstance(thread, str):
            return ButtonRef(notifier, thread)
        return None

    def field(self, name: str) -> str:
        """One of the button value's own fields (``i`` an item, ``u`` a use), or ""."""
        found = _object(self.value).get(name)
        return found if isinstance(found, str) else ""


def _object(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _text(data: Mapping[str, Any], *path: str) -> str:
    node: Any = data
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, str) else ""


def read_click(payload: Mapping[str, Any], api_url: str) -> Click | str:
    """The click, or why it is none Slack sent for one of our buttons (one line)."""
    if payload.get("type") != "block_actions":
        return f"not a block_actions payload ({_text(payload, 'type')[:40] or 'no type'})"
    actions = payload.get("actions")
    if not isinstance(actions, list) or len(actions) != 1 or not isinstance(actions[0], dict):
        return "not exactly one action"
    action = actions[0]
    value = _text(action, "value") or _text(action, "selected_option", "value")
    click = Click(
        action_id=_text(action, "action_id"), value=value, block_id=_text(action, "block_id"),
        user=_text(payload, "user", "id"), team=_text(payload, "team", "id"),
        channel=_text(payload, "channel", "id") or _text(payload, "container", "channel_id"),
        channel_name=_text(payload, "channel", "name"),
        message_ts=_text(payload, "container", "message_ts") or _text(payload, "message", "ts"),
        response_url=_text(payload, "response_url"))
    return _problem(click, api_url) or click


def _problem(click: Click, api_url: str) -> str | None:
    if click.action_id not in ACTION_IDS:
        return "an action_id release-watch does not send"
    shapes = {"channel_id": click.channel, "user_id": click.user, "team_id": click.team}
    for name, value in shapes.items():
        if (value or name != "team_id") and not SLACK_IDS[name].fullmatch(value):
            return f"a {name} that is not a Slack id"
    if not _TS.fullmatch(click.message_ts):
        return "no message ts of Slack's form"
    if len(click.value) > MAX_VALUE or len(click.block_id) > MAX_BLOCK_ID:
        return "a value or block_id past Slack's limits"
    if len(click.channel_name) > 80:
        return "a channel name past 80 characters"
    if click.action_id in ("rw_mute", "rw_unmute") and click.value not in SUBSYSTEMS:
        return "a subsystem that is not one"
    if click.response_url and not response_url_ok(click.response_url, api_url):
        return "a response_url that does not lead to Slack"
    return None


def response_url_ok(url: str, api_url: str) -> bool:
    """https to Slack's hosts, or to the host ``[slack] api_url`` names (any scheme it uses:
    a test's fake is http on loopback)."""
    try:
        parts, api = urlsplit(url), urlsplit(api_url)
    except ValueError:
        return False
    host = parts.hostname or ""
    if parts.scheme == "https" and any(host == name or host.endswith("." + name)
                                       for name in _SLACK_HOSTS):
        return True
    return bool(host) and (parts.scheme, parts.netloc) == (api.scheme, api.netloc)
