"""From changes to messages sent: events, routes, deliveries and digests.

``events`` builds the contract's event objects from a release and its item changes; ``routing``
decides which notifier gets which event and which of its items (the per-notifier filters);
``deliver`` sends the store's outbox oldest first and digests when due, each delivery leaving the
store only after its notifier returned; ``digest`` summarises a period's queued events into a
``Digest`` (what a digest is lives in ``watcher.present``, exported here too for notifiers).

The notifier port is the core's: ``notifier`` is the interface every notifier implements (its
config, the context it is handed, a delivery's progress), ``plugins`` finds notifier classes in
the ``release_watch.notifiers`` entry-point group and validates their tables, ``secrets`` fills
their secret fields from the environment. Notifiers (``handlers/``) import these; nothing here
imports a notifier, and only the composition root (``watcher.app``) builds one.
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
    from watcher.delivery.events import ReleaseImpact as ReleaseImpact
    from watcher.delivery.events import added as added
    from watcher.delivery.events import event_item as event_item
    from watcher.delivery.events import make_event as make_event
    from watcher.delivery.events import previous as previous
    from watcher.delivery.events import whole_release as whole_release
    from watcher.delivery.notifier import EVENT_TYPES as EVENT_TYPES
    from watcher.delivery.notifier import HandlerContext as HandlerContext
    from watcher.delivery.notifier import MemoryProgress as MemoryProgress
    from watcher.delivery.notifier import Notifier as Notifier
    from watcher.delivery.notifier import NotifierConfig as NotifierConfig
    from watcher.delivery.notifier import Progress as Progress
    from watcher.delivery.plugins import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
    from watcher.delivery.plugins import available_types as available_types
    from watcher.delivery.plugins import notifier_class as notifier_class
    from watcher.delivery.plugins import notifier_config as notifier_config
    from watcher.delivery.quiet import NOT_QUIET as NOT_QUIET
    from watcher.delivery.quiet import Quiet as Quiet
    from watcher.delivery.quiet import QuietRow as QuietRow
    from watcher.delivery.quiet import channel_quiet as channel_quiet
    from watcher.delivery.quiet import release_ref as release_ref
    from watcher.delivery.routing import route as route
    from watcher.delivery.secrets import missing_secrets as missing_secrets
    from watcher.delivery.secrets import resolve_secrets as resolve_secrets
    from watcher.delivery.secrets import secret_field as secret_field
    from watcher.delivery.secrets import secret_values as secret_values

_EXPORTS = {
    "added": "events",
    "available_types": "plugins",
    "ENTRY_POINT_GROUP": "plugins",
    "EVENT_TYPES": "notifier",
    "HandlerContext": "notifier",
    "MemoryProgress": "notifier",
    "missing_secrets": "secrets",
    "Notifier": "notifier",
    "notifier_class": "plugins",
    "notifier_config": "plugins",
    "NotifierConfig": "notifier",
    "Progress": "notifier",
    "resolve_secrets": "secrets",
    "secret_field": "secrets",
    "secret_values": "secrets",
    "by_repo": "digest",
    "by_subsystem": "digest",
    "deliver_pending": "deliver",
    "Digest": "digest",
    "DIGEST_MAX_ITEMS": "digest",
    "event_item": "events",
    "ImpactOf": "events",
    "ReleaseImpact": "events",
    "whole_release": "events",
    "make_event": "events",
    "previous": "events",
    "route": "routing",
    "channel_quiet": "quiet",
    "NOT_QUIET": "quiet",
    "Quiet": "quiet",
    "QuietRow": "quiet",
    "release_ref": "quiet",
    "send_digests": "deliver",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
