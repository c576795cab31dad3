"""The command line (``release-watch``, also ``python -m watcher``): the composition root's
front door.

``entry`` is the console script: the collector paused for the start-up (``startup``), the
process ended once the command's output is written (``teardown``). ``commandline`` parses the
command line with click and runs one command (``options``: the global options and the state
they lead to; ``groups``: the ``atlas``, ``config`` and ``store`` groups); each command that
does real work is a module of ``commands``, imported only when it runs; ``inputs`` reads what
the operator names (a file or standard input), ``outputs`` writes what several commands print
alike, ``reporting`` declares the options ``impact`` and ``upgrade`` share; ``online`` is
``config check --online``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.cli.commandline import main as main
    from watcher.cli.entry import console_script as console_script

_EXPORTS = {
    "console_script": "entry",
    "main": "commandline",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
