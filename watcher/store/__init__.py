"""The store: release-watch's memory on disk, and the only code that touches it.

``store`` is the one object the rest of the code uses (records, events, deliveries, ETags, queues
in one ledger, and diskcache keys for what is a cache); ``storedir`` says what is at
``store.path`` before anything opens it; ``db`` is the SQLite connection and its transactions;
``schema`` creates the ledger's tables and runs the upgrades (``migrate_v1``, ``migrate_v2``);
``cachekeys`` and ``cacherows`` are diskcache's keys and rows; ``records`` the values it keeps;
``locks`` the cross-process locks on the directory; ``backend`` the boundary both databases
meet (the embedded SQLite file, ``db``, and PostgreSQL, ``postgres`` with its ``pg_schema`` and
``tablekeys``), ``opening`` which one a configuration names, ``lease`` the leader's lease and
``copy`` an embedded store copied into PostgreSQL; ``digests``, ``pace``, ``seen``,
``subscriptions`` and ``notes`` are parts of ``Store`` (digest queues, the shared pacing window,
the signed requests seen, channels' Slack subscriptions, the notes ``upgrade`` fetched).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.store.backend import Lease as Lease
    from watcher.store.copy import copy_store as copy_store
    from watcher.store.db import DB_NAME as DB_NAME
    from watcher.store.db import Database as Database
    from watcher.store.locks import FileLock as FileLock
    from watcher.store.locks import daemon_lock as daemon_lock
    from watcher.store.locks import running_daemon as running_daemon
    from watcher.store.locks import writer_activity as writer_activity
    from watcher.store.locks import writer_lock as writer_lock
    from watcher.store.opening import atlases_read_only as atlases_read_only
    from watcher.store.opening import open_store as open_store
    from watcher.store.opening import shared as shared
    from watcher.store.postgres import Deposed as Deposed
    from watcher.store.postgres import require_psycopg as require_psycopg
    from watcher.store.quiet import QuietEntry as QuietEntry
    from watcher.store.records import Delivery as Delivery
    from watcher.store.records import DigestDelivery as DigestDelivery
    from watcher.store.records import ReleaseRecord as ReleaseRecord
    from watcher.store.records import RepoState as RepoState
    from watcher.store.schema import SCHEMA_VERSION as SCHEMA_VERSION
    from watcher.store.store import Store as Store
    from watcher.store.storedir import Shape as Shape
    from watcher.store.storedir import check_usable as check_usable
    from watcher.store.storedir import inspect as inspect
    from watcher.store.storedir import refuse_lost as refuse_lost
    from watcher.store.storedir import set_aside as set_aside
    from watcher.store.subscriptions import NOTIFIER_PREFIX as NOTIFIER_PREFIX
    from watcher.store.subscriptions import Subscription as Subscription

_EXPORTS = {
    "atlases_read_only": "opening",
    "check_usable": "storedir",
    "copy_store": "copy",
    "daemon_lock": "locks",
    "Database": "db",
    "DB_NAME": "db",
    "Deposed": "postgres",
    "Delivery": "records",
    "DigestDelivery": "records",
    "FileLock": "locks",
    "inspect": "storedir",
    "Lease": "backend",
    "NOTIFIER_PREFIX": "subscriptions",
    "open_store": "opening",
    "QuietEntry": "quiet",
    "refuse_lost": "storedir",
    "ReleaseRecord": "records",
    "require_psycopg": "postgres",
    "RepoState": "records",
    "running_daemon": "locks",
    "SCHEMA_VERSION": "schema",
    "set_aside": "storedir",
    "Shape": "storedir",
    "shared": "opening",
    "Store": "store",
    "Subscription": "subscriptions",
    "writer_activity": "locks",
    "writer_lock": "locks",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
