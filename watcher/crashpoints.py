"""Deterministic crash injection for the crash-safety tests.

With ``RELEASE_WATCH_CRASH_AT=NAME:N`` in the environment, the N-th pass through
``crashpoint(NAME)`` kills the process with SIGKILL, exactly as ``kill -9`` would at that
moment. Unset (always, outside those tests) a crashpoint costs one dictionary look-up.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

_passes: Counter[str] = Counter()


def crashpoint(name: str) -> None:
    target = os.environ.get("RELEASE_WATCH_CRASH_AT")
    if not target:
        return
    wanted, _, count = target.rpartition(":")
    if wanted != name:
        return
    _passes[name] += 1
    if _passes[name] == int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)
