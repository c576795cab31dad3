"""The commands that do real work, one module each: ``poll``, ``digest``, ``status``,
``config_check``, ``store`` (check and reinit), ``offline`` (classify and diff), ``impact``
and ``atlas`` (build and diff).
``watcher.cli.commandline`` imports a command's module only when that command runs, so
``--help`` and a light command never load what a heavy one needs. Nothing here is imported by
the rest of the core: the judgement ``status --check`` exits by is ``watcher.health``'s, which
the daemon's ``/readyz`` answers from too.
"""

from __future__ import annotations

_EXPORTS: dict[str, str] = {}
__all__: list[str] = []
