"""The folders a wheel is downloaded and built in: one per fetch, under the system's temporary
folder, named with the process's id (``release-watch-wheel-PID-XXXX``) and removed on every way
out of it. A process killed outright (``kill -9``, a host's OOM killer, a daemon exiting past
its shutdown timeout) cannot remove its own: ``sweep`` removes the folders of processes that
are gone, at the start of the next fetch or daemon. A one-shot command (``poll``, ``atlas
build``) fetches ``removed_on_sigterm``: SIGTERM, whose default ends a process without running
a ``finally``, then unwinds the fetch, so nothing of it stays."""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

logger = logging.getLogger(__name__)

PREFIX = "release-watch-wheel-"
_OWNED = re.compile(rf"^{re.escape(PREFIX)}(?P<pid>\d+)-")


@contextmanager
def scratch(root: Path | None = None) -> Iterator[Path]:
    """A new folder of this process's own, removed with what is in it when the block ends."""
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=root))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class _Terminated(BaseException):
    """SIGTERM, raised where the main thread is, so every ``finally`` on the way runs."""


@contextmanager
def removed_on_sigterm() -> Iterator[None]:
    """SIGTERM unwinds the block (the partial download, its folder and the build's child
    removed on the way), then the process exits 143 as SIGTERM's default would have. Outside
    the main thread (the daemon's worker: the daemon stops it itself) it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminated(signum: int, frame: object) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        yield
    except _Terminated:
        logger.warning("stopped by SIGTERM: the package step's download and build in flight "
                       "were removed")
        raise SystemExit(128 + signal.SIGTERM) from None
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the folders left by processes that no longer run; the ones removed."""
    base = root or Path(tempfile.gettempdir())
    removed = []
    for folder in base.glob(f"{PREFIX}*"):
        match = _OWNED.match(folder.name)
        if match is None or not folder.is_dir() or _alive(int(match["pid"])):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    if removed:
        logger.info("removed %d partial download folder(s) of processes that ended without "
                    "removing them (%s)", len(removed), ", ".join(f.name for f in removed))
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: running, and not ours to judge
        return True
    return True
