"""``release-watch run``: the long-running service.

``loop`` runs scheduled polls, digests, delivery retries and the heartbeat on APScheduler 3 until
SIGTERM or SIGINT; ``clock`` re-arms its jobs when the wall clock is stepped; ``commands``
answers ``/release-watch`` through the Slack adapters the composition root hands it;
``leader`` says which replica leads a shared store (PostgreSQL), and lets a one-shot
``poll`` lead it for its run. Digest
schedules are read by ``watcher.config`` (``cron``), for ``run`` and ``config check`` alike.
``parts`` is what the composition root (``watcher.app.build_daemon``) hands the daemon to build
and rebuild itself with, so nothing here imports the root.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.daemon.leader import leading as leading
    from watcher.daemon.loop import Daemon as Daemon
    from watcher.daemon.loop import run_daemon as run_daemon
    from watcher.daemon.parts import DaemonParts as DaemonParts

_EXPORTS = {
    "Daemon": "loop",
    "DaemonParts": "parts",
    "leading": "leader",
    "run_daemon": "loop",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
