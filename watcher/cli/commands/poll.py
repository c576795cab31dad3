"""``release-watch poll``: one poll, then deliver what is queued; then, with ``[impact]``, the
package step: the atlases the poll lacked fetched and built (each within its budget), and
what they add announced in the same run (the releases waiting for their package polled
again), so a cron user need not wait for the next run. ``--dry-run`` fetches nothing."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from watcher.app import build_notifiers, build_runtime, with_subscriptions
from watcher.cli import startup
from watcher.cli.commands.writer import one_writer
from watcher.config import Config, RepoConfig
from watcher.delivery import Notifier, deliver_pending, route
from watcher.deps import Dependencies, Runtime
from watcher.models import Event
from watcher.poller import RepoOutcome
from watcher.store import Shape, check_usable
from watcher.untrusted import clean_line

logger = logging.getLogger(__name__)


def run_poll(config: Config, deps: Dependencies, repo_names: list[str], *, dry_run: bool,
             short: bool = False) -> int:
    """``short``: console notifiers print each event short (``poll --short``)."""
    if short:
        config = config.model_copy(update={"notifiers": [
            {**raw, "short": True} if raw.get("type") == "console" else raw
            for raw in config.notifiers]})
    if dry_run:
        startup.settle()
        return _dry_run(config, deps, repo_names, short=short)
    with _progress_shown():
        return _poll(config, deps, repo_names)


# What a person running ``poll`` by hand is told on stderr though only warnings are shown by
# default: the outcome in one line, and a wait for GitHub's per-minute ceiling before it starts.
_PROGRESS = (__name__, "watcher.github.pacing")


@contextmanager
def _progress_shown() -> Iterator[None]:
    loggers = [logging.getLogger(name) for name in _PROGRESS]
    levels = [each.level for each in loggers]
    for each in loggers:
        if each.getEffectiveLevel() > logging.INFO:
            each.setLevel(logging.INFO)
    try:
        yield
    finally:
        for each, level in zip(loggers, levels, strict=True):
            each.setLevel(level)


def _poll(config: Config, deps: Dependencies, repo_names: list[str]) -> int:
    notifiers = build_notifiers(config, deps)
    runtime = build_runtime(config, deps)
    startup.settle()  # what start-up made lives as long as the process: never scanned again
    try:
        # Beside a running daemon this waits for its job to finish, then sees its records:
        # the same change is never polled and posted twice.
        with one_writer(config, deps, runtime.store, "`release-watch poll`"):
            notifiers = with_subscriptions(runtime, notifiers, deps)  # channels' /release-watch
            repos, org_failures = runtime.poller.watched(repo_names)
            report = runtime.poller.poll(repos)
            delivery = deliver_pending(runtime.store, notifiers)
            _say(deps.stdout, [baseline_line(outcome) for outcome in report.outcomes
                               if outcome.baseline is not None])
            arrived = _package_step(runtime, repos)
            if arrived:
                report.outcomes += runtime.poller.poll(arrived).outcomes
                later = deliver_pending(runtime.store, notifiers)
                delivery.sent += later.sent
                delivery.failed = {**later.failed, **delivery.failed}
    finally:
        for notifier in notifiers.values():
            notifier.close()
        runtime.close()
    from watcher.present import plural  # light (its words only), and only on this path

    unchanged = sum(1 for outcome in report.outcomes if outcome.not_modified)
    quiet = not (report.event_count or report.failed or delivery.sent or delivery.failed
                 or org_failures or any(o.baseline is not None for o in report.outcomes))
    if quiet:  # else a poll that found nothing looks like one that did nothing
        logger.info("nothing new (%s checked, %d unchanged)", plural(len(repos), "repo"),
                    unchanged)
    else:  # what was found shows on stdout, or in the notifiers; this with --verbose
        logger.debug("polled %s: %s, %s sent, %s failed", plural(len(repos), "repo"),
                    plural(report.event_count, "event"), plural(delivery.sent, "message"),
                    plural(len(report.failed), "repo"))
    return 1 if report.failed or delivery.failed or org_failures else 0


def _package_step(runtime: Runtime, repos: list[RepoConfig]) -> list[RepoConfig]:
    """The atlases the poll lacked, fetched and built after its deliveries (SIGTERM leaves
    nothing of them behind); the repos still waiting for a package once some arrived."""
    if runtime.packages is None:
        return []
    from watcher.impact.atlas import removed_on_sigterm

    with removed_on_sigterm():
        if not runtime.packages.run():
            return []
    states = runtime.store.repo_states([repo.name for repo in repos])
    return [repo for repo in repos if states[repo.name].package_pending]


def baseline_line(outcome: RepoOutcome, *, dry_run: bool = False) -> str:
    """A repo's first poll records its releases as history, silently: one line says so."""
    from watcher.present import plural

    count = plural(outcome.baseline or 0, "release")
    return (f"baseline: {count} {'would be ' if dry_run else ''}recorded for "
            f"{clean_line(outcome.repo)}")


def _say(out: IO[str], lines: list[str]) -> None:
    """Lines for the reader; one who stopped reading (``poll | head``) misses them, and the
    poll's deliveries still go out."""
    try:
        for line in lines:
            out.write(line + "\n")
        out.flush()
    except BrokenPipeError:
        pass


def _dry_run(config: Config, deps: Dependencies, repo_names: list[str], *,
             short: bool = False) -> int:
    """Poll against the real store without writing to it; a missing store is a first run in a
    throw-away directory, so the dry run shows what the first real poll would announce."""
    from watcher.present import format_event, hyperlinks_for, plural

    store_path = config.store_path()
    with tempfile.TemporaryDirectory(prefix="release-watch-dry-") as scratch:
        if check_usable(store_path).shape is Shape.ABSENT:
            config = config.model_copy(update={"store": config.store.model_copy(
                update={"path": str(Path(scratch) / "store")})})
        runtime = build_runtime(config, deps)
        notifiers = with_subscriptions(runtime, build_notifiers(config, deps), deps)
        try:
            repos, org_failures = runtime.poller.watched(repo_names, dry_run=True)
            out = deps.stdout

            links = hyperlinks_for(out)

            def show(outcome: RepoOutcome, events: list[Event]) -> None:
                if outcome.baseline is not None:
                    out.write(baseline_line(outcome, dry_run=True) + "\n")
                for event in events:
                    recipients = runtime.poller.recipients(event)
                    out.write(format_event(event, short=short, hyperlinks=links) + "\n")
                    out.write(f"  would go to: {', '.join(recipients) or 'no notifier'}\n\n")
                    for name in recipients:
                        _preview(notifiers[name], event, out)

            report = runtime.poller.poll(repos, dry_run=True, on_events=show)
            unchanged = sum(1 for outcome in report.outcomes if outcome.not_modified)
            out.write(f"dry run: {plural(len(repos), 'repo')}, "
                      f"{plural(report.event_count, 'event')}, "
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
