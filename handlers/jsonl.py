"""The ``jsonl`` notifier: one event per line, exactly the contract's JSON shape."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from pathlib import Path

from pydantic import Field

from handlers.base import Notifier, NotifierConfig, Progress
from watcher.errors import HandlerError
from watcher.models import Event


class JsonlConfig(NotifierConfig):
    path: str = Field(description="file to append to; relative paths start at the config file")
    fsync: bool = Field(default=True,
                        description="flush each line to disk before it counts as sent")


class JsonlNotifier(Notifier):
    Config = JsonlConfig

    @property
    def path(self) -> Path:
        assert isinstance(self.config, JsonlConfig)
        path = Path(os.path.expandvars(self.config.path)).expanduser()
        return path if path.is_absolute() else self.context.base_dir / path

    def send(self, event: Event, progress: Progress) -> None:
        assert isinstance(self.config, JsonlConfig)
        line = json.dumps(event.to_json_dict(), ensure_ascii=False, separators=(",", ":"))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                _append_line(fd, (line + "\n").encode("utf-8"), fsync=self.config.fsync)
            finally:
                os.close(fd)
        except OSError as error:
            raise HandlerError(f"cannot append to {self.path}: {error.strerror}",
                               notifier=self.name) from None


def _append_line(fd: int, data: bytes, *, fsync: bool) -> None:
    """Appends ``data`` (one line) whole, or leaves the file as it was: a disk that fills up
    half-way through would leave a partial line, and the retry's line glued after it would
    be unreadable too. Should even the cut fail, the next line starts on a line of its own.
    (A pipe or a terminal cannot be cut back; there the line is only written.)"""
    size = os.lseek(fd, 0, os.SEEK_END) if stat.S_ISREG(os.fstat(fd).st_mode) else None
    if size and os.pread(fd, 1, size - 1) != b"\n":
        data = b"\n" + data  # what a failed append could not take back
    try:
        written = 0
        while written < len(data):  # a write may take only part (a full disk, a size limit)
            taken = os.write(fd, data[written:])
            if not taken:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            written += taken
        if fsync:
            os.fsync(fd)
    except OSError:
        if size is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
        raise
