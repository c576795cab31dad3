"""Subscriptions from Slack: ``/release-watch subscribe|unsubscribe|list|help``, typed in the
channel that is to get the news.

``command`` is what Slack sends for one command, checked, and its answer; ``vocabulary`` knows
the words (subsystems, kinds, watched repositories) and the nearest ones to a word it does not;
``parse`` reads a command's text; ``words`` says what a subscription posts;
``replies`` writes ``help`` and ``list``; ``settings`` is what the commands need of the
configuration, and how a subscription becomes a Slack notifier's table; ``service`` answers one
command, changing the store's subscriptions on the way; ``transports`` is the port the ways a
command arrives implement (Socket Mode, the HTTP request URL with its signature check: both in
``handlers/slack``, handed to the daemon by the composition root).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.subscribe.command import SLACK_IDS as SLACK_IDS
    from watcher.subscribe.command import Answer as Answer
    from watcher.subscribe.command import SlashCommand as SlashCommand
    from watcher.subscribe.parse import parse_command as parse_command
    from watcher.subscribe.quiet import quiet_notifiers as quiet_notifiers
    from watcher.subscribe.service import SlashCommands as SlashCommands
    from watcher.subscribe.settings import CommandSettings as CommandSettings
    from watcher.subscribe.settings import command_problems as command_problems
    from watcher.subscribe.settings import notifier_table as notifier_table
    from watcher.subscribe.settings import secret_value as secret_value
    from watcher.subscribe.settings import settings_from as settings_from
    from watcher.subscribe.transports import Clicks as Clicks
    from watcher.subscribe.transports import ClickSettings as ClickSettings
    from watcher.subscribe.transports import CommandTransports as CommandTransports
    from watcher.subscribe.transports import RespondEnvelope as RespondEnvelope
    from watcher.subscribe.transports import SocketConnection as SocketConnection
    from watcher.subscribe.vocabulary import Vocabulary as Vocabulary
    from watcher.subscribe.words import schedule_words as schedule_words
    from watcher.subscribe.words import subscription_rows as subscription_rows
    from watcher.subscribe.words import subscription_words as subscription_words

_EXPORTS = {
    "Answer": "command",
    "SLACK_IDS": "command",
    "command_problems": "settings",
    "CommandSettings": "settings",
    "ClickSettings": "transports",
    "Clicks": "transports",
    "CommandTransports": "transports",
    "RespondEnvelope": "transports",
    "SocketConnection": "transports",
    "notifier_table": "settings",
    "parse_command": "parse",
    "quiet_notifiers": "quiet",
    "schedule_words": "words",
    "secret_value": "settings",
    "settings_from": "settings",
    "SlashCommand": "command",
    "SlashCommands": "service",
    "subscription_rows": "words",
    "subscription_words": "words",
    "Vocabulary": "vocabulary",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
