"""The console script (``release-watch``, ``python -m watcher``): CPython's cyclic collector is
paused before anything else is imported (``startup``), so the start-up of every command (click,
pydantic, the configuration's models, the command's own modules) is not scanned again and
again as it piles up; the command settles it once its configuration is read
(``State.config``), or, for a poll, once its runtime is built."""

from __future__ import annotations

from watcher.cli import startup


def console_script() -> None:
    startup.pause()
    from watcher.cli.commandline import console_script as run

    run()
