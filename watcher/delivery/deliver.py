"""Sends what the store holds: the outbox oldest first, and digests. A delivery leaves the store
only after its notifier returned, i.e. the event is safely delivered; a handler that needs
several calls saves its progress after each, so a retry never repeats what already went out.

The one window where a duplicate is possible: the process dies after the receiver accepted a
message and before the store recorded it (one store write later). Then that one message
is sent again on the next run. On a shared store each delivery is claimed first, row by row,
under the leader's fencing token (``Store.claim``), and its record is written under it: a
deposed leader's late write is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from watcher.crashpoints import crashpoint
from watcher.delivery.notifier import Notifier
from watcher.delivery.routing import route
from watcher.errors import HandlerError
from watcher.metrics import Metrics
from watcher.models import Event
from watcher.store import Delivery, Deposed, DigestDelivery, Store

if TYPE_CHECKING:
    from watcher.delivery.digest import Digest

logger = logging.getLogger(__name__)

DIGEST_PAGE = 100  # queued events parsed at a time: a digest's memory does not grow with them


class StoreProgress:
    """A delivery's progress, written through to the store at every save."""

    def __init__(self, store: Store, delivery: Delivery) -> None:
        self.store = store
        self.key = delivery.id
        self.notifier = delivery.notifier
        self._state = dict(delivery.progress)

    @property
    def state(self) -> dict[str, Any]:
        return self._state

    def save(self, **updates: Any) -> None:
        self._state.update(updates)
        self.store.save_progress(self.key, updates)

    def recall(self, key: str) -> dict[str, Any] | None:
        return self.store.recall(self.notifier, key)

    def remember(self, key: str, value: dict[str, Any]) -> None:
        self.store.remember(self.notifier, key, value)


class DigestProgress:
    def __init__(self, store: Store, digest: DigestDelivery) -> None:
        self.store = store
        self.digest = digest

    @property
    def state(self) -> dict[str, Any]:
        return self.digest.progress

    def save(self, **updates: Any) -> None:
        self.digest = self.digest.model_copy(
            update={"progress": {**self.digest.progress, **updates}})
        self.store.put_digest_delivery(self.digest)

    def recall(self, key: str) -> dict[str, Any] | None:
        return self.store.recall(self.digest.notifier, key)

    def remember(self, key: str, value: dict[str, Any]) -> None:
        self.store.remember(self.digest.notifier, key, value)


@dataclass
class DeliveryReport:
    sent: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # notifier → first error this run
    dropped: int = 0


def _log_failure(error: HandlerError, attempts: int, previous_error: str | None, *,
                 quiet_repeats: bool) -> None:
    """One line per failing notifier and run. A run that retries on its own every minute
    (the daemon's delivery job) says a permanent failure once; a poll or digest says it every
    time, so nobody reads a run's exit status 1 with nothing on stderr."""
    if error.permanent and str(error) == previous_error and quiet_repeats:
        logger.info("%s (still failing, attempt %d)", error, attempts)
    elif error.permanent:
        logger.error("%s; it stays queued until this is fixed (attempt %d)", error, attempts)
    else:
        logger.warning("%s (attempt %d); will retry on the next run", error, attempts)


def _interrupted(notifier: Notifier, error: HandlerError, what: str) -> bool:
    """Whether the notifier stopped between two of its calls because the run is stopping:
    not a failure (no attempt counted, nothing for `status` to warn about); it stays queued
    with its progress saved and resumes on the next run."""
    if error.permanent or not notifier.context.stopping():
        return False
    logger.info("%s: stopping; %s stays queued and resumes on the next run", notifier.name,
                what)
    return True


def deliver_pending(store: Store, notifiers: dict[str, Notifier], *,
                    quiet_repeats: bool = False, metrics: Metrics | None = None
                    ) -> DeliveryReport:
    """The outbox, oldest first; each delivery's outcome and duration told to ``metrics``."""
    metrics = metrics or Metrics()
    report = DeliveryReport()
    for delivery in store.pending_deliveries():
        notifier = notifiers.get(delivery.notifier)
        if notifier is None:
            logger.warning("notifier %r is no longer configured; dropping its queued delivery "
                           "of %s", delivery.notifier, delivery.event_id)
            store.delivered(delivery)
            report.dropped += 1
            continue
        if delivery.notifier in report.failed:
            continue  # keep this notifier's messages in order: retry all of them next run
        event = store.event(delivery.event_id)
        view = route(event, notifier.config) if event is not None else None
        if view is None:
            store.delivered(delivery)  # filters changed since it was queued, or event pruned
            continue
        if notifier.context.stopping():
            break  # the run is stopping (SIGTERM): no new delivery starts; all stay queued
        if not store.claim(delivery):
            continue  # another process holds it this instant (a shared store), or it went
        crashpoint("deliver:before-send")
        try:
            with metrics.delivery_timer(delivery.notifier):
                notifier.send(view, StoreProgress(store, delivery))
        except Deposed:
            raise  # the lease went to another replica: nothing more is written here
        except HandlerError as error:
            if _interrupted(notifier, error, delivery.event_id):
                break
            metrics.delivered(delivery.notifier, "failed")
            failed = store.delivery_failed(delivery, str(error), permanent=error.permanent)
            report.failed[delivery.notifier] = str(error)
            _log_failure(error, failed.attempts, delivery.last_error,
                         quiet_repeats=quiet_repeats)
            continue
        except Exception as error:  # a bug in one handler must not stop the others
            message = f"{delivery.notifier}: unexpected {type(error).__name__}: {error}"
            metrics.delivered(delivery.notifier, "failed")
            store.delivery_failed(delivery, message, permanent=False)
            report.failed[delivery.notifier] = message
            logger.exception("%s", message)
            continue
        crashpoint("deliver:sent")  # the documented duplicate window
        store.delivered(delivery)
        crashpoint("deliver:marked")
        metrics.delivered(delivery.notifier, "sent")
        report.sent += 1
    return report


def digest_view(store: Store, notifier: Notifier, *, upto: int, since: datetime | None,
                until: datetime) -> Digest:
    """The notifier's digest of its queue up to position ``upto``, summarised in one pass
    that parses ``DIGEST_PAGE`` events at a time, its repositories in the watch list's order
    (``HandlerContext.watch_order``); the digest's ``events`` page through the queue again when
    a notifier sends them one by one, and ``Digest.keep_items_of`` reads only some
    repositories' events again, picked in SQL."""
    # Here, not at the top: a poll delivers what it queued, and only a digest that falls due
    # needs the summary and its wording (watcher.present), which a poll never loads.
    from watcher.delivery.digest import summarize_digest

    def routed(repos: Collection[str] | None = None) -> Iterator[Event]:
        for bodies in store.digest_pages(notifier.name, upto, DIGEST_PAGE, repos):
            for body in bodies:
                view = route(Event.model_validate_json(body), notifier.config)
                if view is not None:
                    yield view

    return summarize_digest(notifier.name, routed, since=since, now=until,
                            max_items=notifier.config.digest_max_items,
                            order=notifier.context.watch_order,
                            read_repos=routed,
                            read_ids=lambda: store.digest_queue(notifier.name, upto))


def send_digests(store: Store, notifiers: dict[str, Notifier], now: datetime, *,
                 only: str | None = None, dry_run: bool = False,
                 metrics: Metrics | None = None) -> DeliveryReport:
    """One digest per digest notifier; its queue is cleared only once the digest was sent."""
    metrics = metrics or Metrics()
    report = DeliveryReport()
    for name, notifier in notifiers.items():
        if notifier.config.mode != "digest" or (only is not None and name != only):
            continue
        if dry_run:
            preview = digest_view(store, notifier, upto=store.digest_upto(name),
                                  since=store.digest_since(name), until=now)
            text = notifier.preview_digest(preview)
            notifier.context.stdout.write(f"# digest for {name}\n{text}\n\n")
            continue
        if notifier.context.stopping():
            break  # as for deliveries: after SIGTERM no digest starts
        pending = store.start_digest(name, now, ids=False)
        digest = digest_view(store, notifier, upto=pending.upto, since=pending.since,
                             until=pending.until)
        if digest.empty and not notifier.config.send_empty_digest:
            store.digest_delivered(pending)
            continue
        progress = DigestProgress(store, pending)
        try:
            notifier.send_digest(digest, progress)
        except HandlerError as error:
            if _interrupted(notifier, error, f"the digest for {name}"):
                break
            metrics.digest_delivered(name, "failed")
            failed = progress.digest.model_copy(update={
                "attempts": pending.attempts + 1, "last_error": str(error),
                "permanent_failure": error.permanent})
            store.put_digest_delivery(failed)
            report.failed[name] = str(error)
            _log_failure(error, failed.attempts, pending.last_error, quiet_repeats=False)
            continue
        store.digest_delivered(progress.digest)
        metrics.digest_delivered(name, "sent")
        report.sent += 1
    return report
