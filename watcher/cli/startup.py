"""The console script's start-up with CPython's cyclic collector paused.

Starting a command imports a few hundred modules and builds the configuration's models:
hundreds of thousands of objects that all live as long as the process, which the collector
would scan again and again as they pile up (its generations fill every few hundred
allocations), and once more for each full collection of the run. ``pause`` turns it off for
the start-up; ``settle`` moves everything made so far into the permanent generation
(``gc.freeze``), which no later collection scans, and turns it back on, so whatever the
command itself makes is collected as always. Only the console script's process pauses
(``entry``: before anything else is imported; in process, ``main`` and the tests, both are
no-ops). A command that reads no configuration (``--help``, ``atlas diff`` of two bundled
releases, ``config check``) ends before it would settle: it is short, and runs paused.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Turn the collector off for the start-up, unless it is off already."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def settle() -> None:
    """The start-up is over: freeze what it made, and collect as usual from now on."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
