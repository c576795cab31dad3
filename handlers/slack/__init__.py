"""The ``slack`` notifier: the Web API with a bot token (a parent message and its thread) or an
incoming webhook (one message).

``notifier`` sends through slack-sdk, with ``retries`` (its retry handlers, our sleep) and
``answers`` (which errors no retry fixes, and the fix to name); ``items`` renders items;
``blocks`` plans an event's messages and ``digest_plan`` a digest's; ``followup`` plans what
follows a release's first message (edits, promotion, deletion) as thread replies, and
``recount`` keeps that first message's counts current; ``layout`` builds and packs blocks
within Slack's limits; ``text`` turns untrusted release-note markdown into mrkdwn that cannot
ping anyone or hide a link; ``check`` is ``auth.test`` for ``config check --online``.
``/release-watch`` arrives over ``socket_mode`` (the default, no public URL) or at the
``request_url`` endpoint, whose Slack signature is checked before anything is done; so do
clicks on the buttons a release's message carries (``buttons``), read by ``actions``, done
by ``clicks`` (``all_uses`` lists every use of an item).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from handlers.slack.check import auth_test as auth_test
    from handlers.slack.clicks import SlackActions as SlackActions
    from handlers.slack.notifier import SlackNotifier as SlackNotifier
    from handlers.slack.request_url import SignatureCheck as SignatureCheck
    from handlers.slack.request_url import interactive_endpoint as interactive_endpoint
    from handlers.slack.request_url import slash_command_endpoint as slash_command_endpoint
    from handlers.slack.socket_mode import SocketModeCommands as SocketModeCommands

_EXPORTS = {
    "auth_test": "check",
    "interactive_endpoint": "request_url",
    "SignatureCheck": "request_url",
    "SlackActions": "clicks",
    "SlackNotifier": "notifier",
    "slash_command_endpoint": "request_url",
    "SocketModeCommands": "socket_mode",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
