"""``release-watch run``: the long-running service.

``loop`` runs scheduled polls, digests, delivery retries and the heartbeat on APScheduler 3 until
SIGTERM or SIGINT; ``clock`` re-arms its jobs when the wall clock is stepped; ``schedule`` reads
digest crontab lines and timezones into APScheduler's own triggers, for ``run`` and
``config check`` alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.daemon.loop import run_daemon as run_daemon
    from watcher.daemon.schedule import digest_trigger as digest_trigger
    from watcher.daemon.schedule import digest_zone as digest_zone

_EXPORTS = {
    "digest_trigger": "schedule",
    "digest_zone": "schedule",
    "run_daemon": "loop",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
