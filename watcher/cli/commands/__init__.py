"""The commands that do real work, one module each: ``poll``, ``digest``, ``status``,
``config_check``, ``store`` (check and reinit), ``offline`` (classify and diff), ``impact``
and ``atlas`` (build and diff).
``watcher.cli.commandline`` imports a command's module only when that command runs, so
``--help`` and a light command never load what a heavy one needs.

Exported: ``status_report``, the judgement ``status --check`` exits by, which the daemon's
``/readyz`` (``watcher.server``) answers from too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.cli.commands.status import status_report as status_report

_EXPORTS = {
    "status_report": "status",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
