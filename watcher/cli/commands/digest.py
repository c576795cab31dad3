"""``release-watch digest``: build and send the pending digests now."""

from __future__ import annotations

from collections.abc import Mapping

from watcher.app import Dependencies, build_notifiers, quiet_channels, subscribed_notifiers
from watcher.cli.commands.writer import one_writer
from watcher.config import Config
from watcher.delivery import Notifier, send_digests
from watcher.errors import ConfigError
from watcher.store import NOTIFIER_PREFIX, Shape, check_usable, open_store


def _require(notifier: str | None, notifiers: Mapping[str, Notifier]) -> None:
    digest_names = [name for name, n in notifiers.items() if n.config.mode == "digest"]
    if notifier is not None and notifier not in digest_names:
        known = ", ".join(digest_names) or "none (set mode = 'digest')"
        raise ConfigError(f"no digest notifier named {notifier!r}; digest notifiers: {known}")


def run_digest(config: Config, deps: Dependencies, *, notifier: str | None,
               dry_run: bool) -> int:
    notifiers = build_notifiers(config, deps)
    if notifier is None or not notifier.startswith(NOTIFIER_PREFIX):
        _require(notifier, notifiers)  # before the store: a typo costs nothing
    path, url = config.store_path(), config.store_url()
    if url is None and check_usable(path).shape is Shape.ABSENT:
        _require(notifier, notifiers)
        deps.stdout.write("no store yet: nothing has been polled, no digest to send\n")
        return 0
    store = open_store(path, url)
    try:
        # Channels' /release-watch subscriptions with --digest are digest notifiers too.
        notifiers |= subscribed_notifiers(config, deps, store, notifiers)
        quiet_channels(notifiers, store)  # what channels muted and snoozed with a button
        _require(notifier, notifiers)
        with one_writer(config, deps, store, "`release-watch digest`"):
            report = send_digests(store, notifiers, deps.clock(), only=notifier,
                                  dry_run=dry_run)
    finally:
        for handler in notifiers.values():
            handler.close()
        store.close()
    return 1 if report.failed else 0
