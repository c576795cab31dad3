"""``release-watch poll``: one poll, then deliver what is queued."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import IO

from handlers.base import Notifier
from watcher.app import Dependencies, build_notifiers, build_runtime
from watcher.config import Config
from watcher.delivery import deliver_pending, route
from watcher.models import Event
from watcher.poller import RepoOutcome
from watcher.store import Shape, check_usable, writer_lock

logger = logging.getLogger(__name__)


def run_poll(config: Config, deps: Dependencies, repo_names: list[str], *, dry_run: bool) -> int:
    if dry_run:
        return _dry_run(config, deps, repo_names)
    notifiers = build_notifiers(config, deps)
    runtime = build_runtime(config, deps)
    try:
        # Beside a running daemon this waits for its job to finish, then sees its records:
        # the same change is never polled and posted twice.
        with writer_lock(config.store_path(), wait=config.poll.lock_wait, sleep=deps.sleep,
                         on_wait=lambda why: logger.warning("%s", why)):
            repos, org_failures = runtime.poller.watched(repo_names)
            report = runtime.poller.poll(repos)
            delivery = deliver_pending(runtime.store, notifiers)
    finally:
        for notifier in notifiers.values():
            notifier.close()
        runtime.close()
    logger.info("polled %d repos: %d events, %d messages sent, %d repos failed",
                len(repos), report.event_count, delivery.sent, len(report.failed))
    return 1 if report.failed or delivery.failed or org_failures else 0


def _dry_run(config: Config, deps: Dependencies, repo_names: list[str]) -> int:
    """Poll against the real store without writing to it; a missing store is a first run in a
    throw-away directory, so the dry run shows what the first real poll would announce."""
    from watcher.present import format_event

    store_path = config.store_path()
    with tempfile.TemporaryDirectory(prefix="release-watch-dry-") as scratch:
        if check_usable(store_path).shape is Shape.ABSENT:
            config = config.model_copy(update={"store": config.store.model_copy(
                update={"path": str(Path(scratch) / "store")})})
        runtime = build_runtime(config, deps)
        notifiers = build_notifiers(config, deps)
        try:
            repos, org_failures = runtime.poller.watched(repo_names, dry_run=True)
            out = deps.stdout

            def show(_: RepoOutcome, events: list[Event]) -> None:
                for event in events:
                    recipients = runtime.poller.recipients(event)
                    out.write(format_event(event) + "\n")
                    out.write(f"  would go to: {', '.join(recipients) or 'no notifier'}\n\n")
                    for name in recipients:
                        _preview(notifiers[name], event, out)

            report = runtime.poller.poll(repos, dry_run=True, on_events=show)
            unchanged = sum(1 for outcome in report.outcomes if outcome.not_modified)
            out.write(f"dry run: {len(repos)} repos, {report.event_count} events, "
                      f"{unchanged} unchanged, {len(report.failed)} failed; nothing sent or "
                      "recorded\n")
        finally:
            runtime.close()
    return 1 if report.failed or org_failures else 0


def _preview(notifier: Notifier, event: Event, out: IO[str]) -> None:
    """What this notifier would be sent: Slack shows the exact Block Kit payloads."""
    if notifier.config.mode == "digest":
        out.write(f"--- {notifier.name}: queued for its next digest\n\n")
        return
    view = route(event, notifier.config)
    if view is not None and notifier.config.type != "console":
        out.write(f"--- {notifier.name} ({notifier.config.type}) would receive:\n")
        out.write(notifier.preview(view) + "\n\n")
