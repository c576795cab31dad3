"""One ``/release-watch`` command as Slack sends it (over Socket Mode or to the request URL):
its fields, checked against what Slack can send before anything is read from them, and the
ephemeral answer, its controls neutralised. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from watcher.subscribe.parse import escape
from watcher.untrusted import clean_line, clean_text

# Slack's clients keep one message to 4,000 characters (api.slack.com/rtm, Limits: "Clients
# should limit messages sent to channels to 4000 characters"; the Web API truncates a message's
# text past 40,000, api.slack.com/changelog/2018-04-truncating-really-long-messages), and a
# slash command is typed as one message; any command of ours is a few dozen characters.
MAX_TEXT = 4000
MAX_NAME = 80  # characters of a channel name (Slack's limit for channel names)
# Slack's ids: "C" public channels, "G" private ones and group DMs, "D" direct messages; "U"
# users ("W" on Enterprise Grid); "T" workspaces, "E" Enterprise Grid organisations; the rest
# upper-case letters and digits, 8 to 11 of them today, bounded here since none is longer.
SLACK_IDS = {
    "channel_id": re.compile(r"[CDG][A-Z0-9]{2,31}"),
    "user_id": re.compile(r"[UW][A-Z0-9]{2,31}"),
    "team_id": re.compile(r"[TE][A-Z0-9]{2,31}"),
}
_COMMAND = re.compile(r"/[^\s<>&`]{1,31}")  # a slash command's name (Slack: 32 characters)


@dataclass(frozen=True)
class SlashCommand:
    """The fields of Slack's slash-command payload that matter here
    (api.slack.com/interactivity/slash-commands#app_command_handling)."""

    text: str
    channel_id: str
    channel_name: str = ""
    user_id: str = ""
    team_id: str = ""
    command: str = "/release-watch"

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> SlashCommand:
        def text(key: str, default: str = "") -> str:
            value = payload.get(key)
            return value if isinstance(value, str) else default

        return cls(
            text=text("text"),
            channel_id=text("channel_id"),
            channel_name=text("channel_name"),
            user_id=text("user_id"),
            team_id=text("team_id"),
            command=text("command") or "/release-watch",
        )

    @property
    def channel(self) -> str:
        """How answers name the channel: Slack shows ``<#C…>`` as its current name."""
        return f"<#{self.channel_id}>"

    def problem(self) -> str | None:
        """Why this is no command Slack sent (an id of a shape Slack never issues, text past
        what Slack's clients send); None when it may be one. One line, the fields escaped."""
        if len(self.text) > MAX_TEXT:
            return (f"That command is {len(self.text):,} characters long; Slack sends at most "
                    f"{MAX_TEXT:,}, and a command needs a few dozen. Nothing was done.")
        for name, shape in SLACK_IDS.items():
            value = getattr(self, name)
            if (value or name != "team_id") and not shape.fullmatch(value):
                return (f"The command came with a {name} that is not a Slack id "
                        f"({escape(clean_line(value[:40])) or 'none'}); nothing was done.")
        if len(self.channel_name) > MAX_NAME:
            return (f"The command came with a channel name past {MAX_NAME} characters; "
                    "nothing was done.")
        if not _COMMAND.fullmatch(self.command):
            return "The command came with a command name Slack does not send; nothing was done."
        return None


@dataclass(frozen=True)
class Answer:
    text: str

    def payload(self) -> dict[str, Any]:
        """Only the person who typed the command sees it; controls, bidi overrides included,
        show as visible escapes (``\\x1b``, ``\\u202e``), line breaks stay."""
        return {"response_type": "ephemeral", "text": clean_text(self.text)}
