"""Deterministic crash injection for the crash-safety tests.

With ``RELEASE_WATCH_CRASH_AT=NAME:N`` in the environment, the N-th pass through
``crashpoint(NAME)`` kills the process with SIGKILL, exactly as ``kill -9`` would at that
moment. Unset (always, outside those tests) a crashpoint costs one dictionary look-up.

With ``RELEASE_WATCH_HANG_AT=NAME``, a pass through ``hangpoint(NAME)`` never returns, as a
call wedged where no timeout reaches would (a DNS look-up, a hung NFS read): what the
failover test makes of a leader's package job, to show the lease is not renewed for it.
"""

from __future__ import annotations

import os
import signal
import threading
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


def hangpoint(name: str) -> None:
    if os.environ.get("RELEASE_WATCH_HANG_AT") == name:
        threading.Event().wait()
