"""Sends what the store's outbox holds, oldest first; a delivery leaves the outbox only after
its notifier returned, i.e. the event is safely delivered."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from handlers.base import Notifier
from watcher.errors import HandlerError
from watcher.routing import route
from watcher.store import Store

logger = logging.getLogger(__name__)


@dataclass
class DeliveryReport:
    sent: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # notifier → first error this run
    dropped: int = 0


def deliver_pending(store: Store, notifiers: dict[str, Notifier]) -> DeliveryReport:
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
        try:
            notifier.send(view)
        except HandlerError as error:
            failed = store.delivery_failed(delivery, str(error), permanent=error.permanent)
            report.failed[delivery.notifier] = str(error)
            logger.error("%s (attempt %d; %s)", error, failed.attempts,
                         "fix the cause, it stays queued" if error.permanent
                         else "will retry on the next run")
            continue
        except Exception as error:  # a bug in one handler must not stop the others
            store.delivery_failed(delivery, f"{type(error).__name__}: {error}", permanent=False)
            report.failed[delivery.notifier] = f"{type(error).__name__}: {error}"
            logger.exception("notifier %r failed unexpectedly", delivery.notifier)
            continue
        store.delivered(delivery)
        report.sent += 1
    return report
