"""What Slack's answers mean: the error codes no retry can fix, each with the fix to name;
which URL can be an incoming webhook (without ever repeating it: it is the secret)."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

from slack_sdk.errors import SlackApiError

# Error codes that no retry can fix, with what the operator should do
# (api.slack.com/methods/chat.postMessage#errors).
PERMANENT = {
    "invalid_auth": "the bot token is invalid or revoked: set a valid SLACK_BOT_TOKEN",
    "not_authed": "no bot token was sent: set SLACK_BOT_TOKEN",
    "account_inactive": "the bot token belongs to a deactivated app or user: reinstall the app",
    "token_revoked": "the bot token was revoked: reinstall the app and update SLACK_BOT_TOKEN",
    "token_expired": "the bot token expired: refresh it and update SLACK_BOT_TOKEN",
    "missing_scope": "the app lacks the chat:write scope: add it and reinstall",
    "no_permission": "the app may not post there: check its scopes and the channel settings",
    "channel_not_found": "the channel does not exist or the app cannot see it: check `channel`",
    "not_in_channel": "the app is not a member: /invite the app in that channel",
    "is_archived": "the channel is archived: unarchive it or change `channel`",
    "msg_too_long": "a message exceeded Slack's size limit: please report this as a bug",
    "msg_blocks_too_long": "a message's blocks were too large: lower max_message_chars",
    "invalid_blocks": "Slack rejected the message layout: please report this as a bug",
    "restricted_action": "a workspace policy blocks posting: ask a Slack admin",
}
WEBHOOK_PERMANENT = {404: "the webhook URL is unknown or was removed: create a new one",
                     403: "the webhook may not post (action_prohibited): check the app",
                     410: "the webhook's channel is archived or gone: create a new webhook",
                     400: "Slack rejected the message: please report this as a bug"}


_LOOPBACK = {"localhost", "127.0.0.1", "::1"}
# Controls and invisible format characters (bidi overrides, zero-width spaces): Cc and Cf.
_CONTROL_CATEGORIES = {"Cc", "Cf"}


def webhook_url_problem(url: str, what: str) -> str | None:
    """Why ``url`` cannot be an incoming webhook, without repeating it (it is the secret).
    Plain http is allowed only to this machine (a local relay, the tests' fake Slack).

    A space, tab, line break or other control character anywhere in it (a stray one from
    copying, a trailing newline from a file) is refused: no URL holds one raw (RFC 3986 §2),
    and an HTTP library that refuses it quotes the URL's secret path in its error."""
    if any(char.isspace() or unicodedata.category(char) in _CONTROL_CATEGORIES for char in url):
        return (f"{what} contains a space, tab, line break or control character: set it to the "
                "URL exactly as Slack shows it")
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return f"{what} is not a URL"
    if parts.scheme == "https" and host:
        return None
    if parts.scheme == "http" and host in _LOOPBACK:
        return None
    return f"{what} is not an https:// URL (Slack's look like https://hooks.slack.com/services/...)"


GONE = {"thread_not_found", "message_not_found", "cant_update_message"}


class ThreadGone(Exception):
    """The release's first message is no longer there to reply to or update."""


_CODE = re.compile(r"[a-z][a-z0-9_]{0,79}")


def error_code(error: SlackApiError) -> str:
    """Slack's ``error`` field (``channel_not_found``, ``invalid_auth``…), or "" if none or
    not a code: for an answer that is not JSON (a proxy's page, a 5xx) slack-sdk puts the
    whole body there, and a body may quote the token back."""
    code = str(error.response.get("error", "")) if error.response is not None else ""
    return code if _CODE.fullmatch(code) else ""
