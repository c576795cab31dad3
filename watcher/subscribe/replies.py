"""The longer answers of ``/release-watch``: ``help`` (the commands, and the words they take
here) and ``list`` (what this channel gets: its subscriptions, and the configured notifiers
posting to it, marked read-only). Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher.models import KINDS, SUBSYSTEMS
from watcher.store import Subscription
from watcher.subscribe.parse import escape
from watcher.subscribe.settings import CommandSettings
from watcher.subscribe.words import subscription_words

if TYPE_CHECKING:
    from watcher.subscribe.command import SlashCommand


def words_of(sub: Subscription, settings: CommandSettings) -> str:
    return subscription_words(
        sub.repos, sub.subsystems, sub.kinds, sub.digest_schedule, settings.watched()
    )


def help_text(command: SlashCommand, settings: CommandSettings) -> str:
    name = escape(command.command)
    who = (
        "everyone in the channel"
        if not settings.admins
        else "the release-watch admins ("
        + ", ".join(f"<@{escape(a)}>" for a in settings.admins)
        + ")"
    )
    return "\n".join(
        [
            f"*{name}* posts what changed in new releases to this channel, by subsystem and kind.",
            f'• `{name} subscribe [OWNER/NAME] [subsystem ...] [kind ...] [--digest "cron"]`: '
            "this channel gets the items of those subsystems and kinds (none named: all of them) "
            "of that repository (none named: every watched one), each release as it is found, or "
            "in one digest on a schedule (cron in UTC; `--digest` alone is weekly, Mondays "
            "09:00). Example: "
            f"`{name} subscribe distributed bc_breaking`",
            f"• `{name} unsubscribe <the same words>`, `{name} unsubscribe N` (N from `list`) or "
            f"`{name} unsubscribe all`",
            f"• `{name} list`: what this channel gets",
            f"Subsystems: {', '.join(f'`{s}`' for s in SUBSYSTEMS)}, or finer, such as "
            "`distributed/fsdp` (names such as `FSDP` work too).",
            f"Kinds: {', '.join(f'`{k}`' for k in KINDS)}.",
            f"Repositories: {escape(', '.join(settings.watched()) or 'none')}.",
            f"Who may subscribe and unsubscribe: {who}. Only you see these answers.",
        ]
    )


def list_text(command: SlashCommand, settings: CommandSettings, mine: list[Subscription]) -> str:
    configured = [
        c for c in settings.configured if c.posts_to(command.channel_id, command.channel_name)
    ]
    if not mine and not configured:
        return (
            f"{command.channel} has no subscriptions. Try "
            f"`{escape(command.command)} subscribe distributed bc_breaking`."
        )
    lines = [f"{command.channel} gets:"]
    lines += [
        f"• {sub.id}: {words_of(sub, settings)} (subscribed"
        + (f" by <@{escape(sub.created_by)}>" if sub.created_by else "")
        + f" on {sub.created_at:%Y-%m-%d})"
        for sub in mine
    ]
    lines += [
        f"• `{escape(c.name)}` from the config file, read-only here: {c.words}" for c in configured
    ]
    if mine:
        lines.append(f"`{escape(command.command)} unsubscribe N` removes subscription N.")
    return "\n".join(lines)
