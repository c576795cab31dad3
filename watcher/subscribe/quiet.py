"""What each Slack channel muted and snoozed (the store's ``rw_channel_quiet``), handed to every
notifier posting to that channel, for one job: read afresh for each poll, delivery and digest,
so a click takes effect from the next event on without a restart, whichever notifier posts
there (a ``[[notifiers]]`` one, by the channel's id or name, or a subscription)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from watcher.delivery import NOT_QUIET, Notifier, QuietRow, channel_quiet


def quiet_notifiers(notifiers: Mapping[str, Notifier], entries: Iterable[QuietRow]) -> None:
    """Each notifier with a channel routes with that channel's mutes and snoozes from now on;
    one whose channel has none any more routes without."""
    quiet = channel_quiet(entries)
    for notifier in notifiers.values():
        channel = getattr(notifier.config, "channel", None)
        if not isinstance(channel, str):
            continue  # a console, a feed, a webhook: no channel to have clicked in
        wanted = quiet.get(channel.removeprefix("#"), NOT_QUIET)
        if notifier.config.quiet != wanted:
            notifier.config = notifier.config.quieted(wanted)
