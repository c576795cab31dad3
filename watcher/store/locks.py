"""Cross-process locks on the store directory, with ``flock`` so the kernel frees them when a
process dies (even by SIGKILL): no stale lock survives a crash.

* ``daemon.lock`` is held by a running daemon for its whole life: a second daemon on the same
  store refuses to start, and ``status`` tells a running daemon from one that is gone
  (``running_daemon``).
* ``writer.lock`` is held for each poll, delivery run or digest, by the daemon's jobs and by
  commands run by hand, so a manual ``poll`` beside the daemon waits its turn instead of
  polling (and posting) the same change at the same time.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from watcher.errors import StoreError, StoreReadOnly


class FileLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def try_acquire(self, doing: str = "") -> bool:
        """Take the lock without waiting; the file then says who holds it (the pid) and,
        on a second line, ``doing`` (what for)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise StoreReadOnly(f"cannot create the lock {self.path}: {error.strerror}; the "
                                "store must be writable by this user") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return False
            raise StoreError(f"cannot lock {self.path}: {error.strerror}") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n{doing}\n".encode() if doing else f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def holder(self) -> str:
        """The holder's pid, as the file says."""
        return self._lines()[0] or "unknown"

    def doing(self) -> str:
        """What the holder said it holds the lock for; "" when it said nothing."""
        return self._lines()[1]

    def _lines(self) -> tuple[str, str]:
        try:
            lines = self.path.read_text().splitlines()
        except OSError:
            lines = []
        first, second = [*lines, "", ""][:2]
        return first.strip(), second.strip()

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, run by another user
    return True


def _locked(path: Path) -> bool | None:
    """Whether someone holds the flock on ``path``; None when it cannot be told. Opened for
    reading only, so it works on a read-only store."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as error:
        return True if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK) else None
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def running_daemon(store_path: Path, recorded: int | None = None) -> int | None:
    """The pid of the daemon running on this store, or None: the pid in ``daemon.lock`` (else
    ``recorded``, what the daemon last wrote to the store) must be a live process that still
    holds the lock, which the kernel drops however the daemon ended. The lock is only looked
    at once the pid is alive (a pid reused by another program), never while a daemon that
    died is being replaced, so the look cannot get in the way of a daemon starting."""
    lock = store_path / "daemon.lock"
    try:
        text = lock.read_text().strip()
    except OSError:
        text = ""
    pid = int(text) if text.isdigit() else recorded
    if pid is None or pid <= 0 or not _alive(pid):
        return None
    return None if _locked(lock) is False else pid


def daemon_lock(store_path: Path) -> FileLock:
    lock = FileLock(store_path / "daemon.lock")
    if not lock.try_acquire():
        raise StoreError(f"another release-watch daemon (pid {lock.holder()}) is running on "
                         f"the store {store_path}; two daemons must never share a store")
    return lock


def writer_activity(store_path: Path) -> str | None:
    """What holds the store's writer lock now, as its holder said ("the daemon's poll job
    (pid 12)"); None when nothing does (or it cannot be told)."""
    lock = FileLock(store_path / "writer.lock")
    if _locked(lock.path) is not True:
        return None
    return f"{lock.doing() or 'a poll, delivery or digest'} (pid {lock.holder()})"


@contextmanager
def writer_lock(store_path: Path, *, wait: float, sleep: Callable[[float], None] = time.sleep,
                monotonic: Callable[[], float] = time.monotonic,
                on_wait: Callable[[str], None] | None = None,
                doing: str = "") -> Iterator[None]:
    """Hold the store's writer lock, waiting up to ``wait`` seconds for another holder;
    ``doing`` says what for, to whoever finds the store busy (``writer_activity``)."""
    lock = FileLock(store_path / "writer.lock")
    deadline = monotonic() + wait
    told = False
    while not lock.try_acquire(doing):
        if monotonic() >= deadline:
            raise StoreError(f"the store {store_path} is busy (pid {lock.holder()} is polling "
                             f"or delivering); gave up after {wait:.0f}s, try again later")
        if not told and on_wait is not None:
            on_wait(f"waiting for pid {lock.holder()}, which is polling or delivering")
            told = True
        sleep(0.2)
    try:
        yield
    finally:
        lock.release()
