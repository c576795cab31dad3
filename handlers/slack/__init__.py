"""The ``slack`` notifier: the Web API with a bot token (a parent message and its thread) or an
incoming webhook (one message).

``notifier`` sends and retries through slack-sdk; ``blocks`` plans an event's or a digest's
messages; ``followup`` plans what follows a release's first message (edits, promotion,
deletion) as thread replies; ``layout`` builds and packs blocks within Slack's limits; ``text``
turns untrusted release-note markdown into mrkdwn that cannot ping anyone or hide a link;
``check`` is ``auth.test`` for ``config check --online``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from handlers.slack.check import auth_test as auth_test
    from handlers.slack.notifier import SlackNotifier as SlackNotifier

_EXPORTS = {
    "auth_test": "check",
    "SlackNotifier": "notifier",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
