"""The notifier interface, as plugins written before the core owned it import it.

The port lives in the core (``watcher.delivery``: ``notifier``, ``plugins``, ``secrets``); this
module re-exports it under the names the README's "Write your own notifier" has always used, so
``from handlers.base import Notifier, NotifierConfig, Progress, secret_field`` keeps working.
"""

from __future__ import annotations

from watcher.delivery import (
    ENTRY_POINT_GROUP,
    EVENT_TYPES,
    HandlerContext,
    MemoryProgress,
    Notifier,
    NotifierConfig,
    Progress,
    available_types,
    notifier_class,
    notifier_config,
    secret_field,
)
from watcher.errors import HandlerError

__all__ = ["ENTRY_POINT_GROUP", "EVENT_TYPES", "HandlerContext", "HandlerError",
           "MemoryProgress", "Notifier", "NotifierConfig", "Progress", "available_types",
           "notifier_class", "notifier_config", "secret_field"]
