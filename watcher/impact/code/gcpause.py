"""The cyclic garbage collector paused while a scan (or a whole offline run) makes millions of
objects and no garbage; a module of its own, so pausing it imports nothing else."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """A scan allocates millions of small objects (trees, rows) and no reference cycles: the
    cyclic collector, run every few hundred allocations, would only walk the whole heap again
    and again (a third of a cold scan's time). Collected as usual once the scan is done (or
    the offline ``impact`` command, which pauses it for its whole run)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
