"""From changes to messages sent: events, routes, deliveries and digests.

``events`` builds the contract's event objects from a release and its item changes; ``routing``
decides which notifier gets which event and which of its items (the per-notifier filters);
``deliver`` sends the store's outbox oldest first and digests when due, each delivery leaving the
store only after its notifier returned; ``digest`` summarises a period's queued events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.delivery.deliver import deliver_pending as deliver_pending
    from watcher.delivery.deliver import send_digests as send_digests
    from watcher.delivery.digest import DIGEST_MAX_ITEMS as DIGEST_MAX_ITEMS
    from watcher.delivery.digest import Digest as Digest
    from watcher.delivery.digest import by_repo as by_repo
    from watcher.delivery.digest import by_subsystem as by_subsystem
    from watcher.delivery.events import ImpactOf as ImpactOf
    from watcher.delivery.events import added as added
    from watcher.delivery.events import event_item as event_item
    from watcher.delivery.events import make_event as make_event
    from watcher.delivery.events import previous as previous
    from watcher.delivery.routing import route as route

_EXPORTS = {
    "added": "events",
    "by_repo": "digest",
    "by_subsystem": "digest",
    "deliver_pending": "deliver",
    "Digest": "digest",
    "DIGEST_MAX_ITEMS": "digest",
    "event_item": "events",
    "ImpactOf": "events",
    "make_event": "events",
    "previous": "events",
    "route": "routing",
    "send_digests": "deliver",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
