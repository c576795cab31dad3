"""The jsonl notifier on a full disk: a failed append leaves nothing behind, so the retry's
line (the delivery stays queued) is whole and every line of the file is one readable event."""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from handlers.base import HandlerContext, MemoryProgress, notifier_config
from watcher.config import Secrets
from watcher.delivery.events import make_event
from watcher.errors import HandlerError
from watcher.models import EventItem, Release

NOW = datetime(2026, 11, 29, tzinfo=UTC)

# Runs in a process of its own: RLIMIT_FSIZE is what a full disk looks like to one writer
# (the kernel takes what fits, then refuses with EFBIG), and it can be lifted again.
FILL_UP = """
import json, resource, signal, sys
from pathlib import Path
from handlers.base import HandlerContext, MemoryProgress, notifier_config
from watcher.config import Secrets
from watcher.models import Event

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the kernel kills us at the limit
out, events = Path(sys.argv[1]), [Event.model_validate_json(line)
                                  for line in Path(sys.argv[2]).read_text().splitlines()]
cls, config = notifier_config({"name": "log", "type": "jsonl", "path": str(out)}, "t")
notifier = cls(config, HandlerContext(secrets=Secrets(), base_dir=out.parent, stdout=sys.stdout))
notifier.send(events[0], MemoryProgress())
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (out.stat().st_size + 100, hard))  # disk full
report = {}
try:
    notifier.send(events[1], MemoryProgress())
except Exception as error:
    report["failed"] = f"{type(error).__name__}: {error}"
report["after_failure"] = out.read_text()
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))  # space comes back
notifier.send(events[1], MemoryProgress())  # the retry
notifier.send(events[2], MemoryProgress())
print(json.dumps(report))
"""


def event(number: int, text: str):
    release = Release(id=number, tag_name=f"v2.{number}.0", body=text,
                      html_url=f"https://github.com/pytorch/pytorch/releases/tag/v2.{number}.0")
    items = [EventItem(subsystem="distributed", kind="bug_fix", text=line, section=["Bug fixes"],
                       prs=[index]) for index, line in enumerate(text.splitlines(), 1)]
    return make_event("published", "pytorch/pytorch", release, f"{number:064x}", items, NOW)


EVENTS = [event(1, "Fix a crash (#1)"),
          event(2, "\n".join(f"Fix the {n}th thing, é and 😀 included (#{n})"
                             for n in range(1, 200))),
          event(3, "Fix another crash (#3)")]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_full_disk_leaves_no_partial_line_and_the_retry_is_whole(tmp_path):
    out = tmp_path / "events.jsonl"
    given = tmp_path / "events.in"
    given.write_text("".join(e.model_dump_json() + "\n" for e in EVENTS))
    ran = subprocess.run([sys.executable, "-c", FILL_UP, str(out), str(given)],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert report["failed"].startswith("HandlerError: cannot append to")
    assert "too large" in report["failed"]  # EFBIG: what the kernel said, in one line
    first = json.dumps(EVENTS[0].to_json_dict(), ensure_ascii=False, separators=(",", ":"))
    assert report["after_failure"] == first + "\n"  # the partial line was taken back
    assert [e["id"] for e in lines(out)] == [e.id for e in EVENTS]  # every line whole


def test_if_even_the_cut_fails_the_retry_starts_on_a_line_of_its_own(tmp_path, monkeypatch):
    out = tmp_path / "events.jsonl"
    cls, config = notifier_config({"name": "log", "type": "jsonl", "path": str(out)}, "t")
    notifier = cls(config, HandlerContext(secrets=Secrets(), base_dir=tmp_path,
                                          stdout=io.StringIO()))
    notifier.send(EVENTS[0], MemoryProgress())
    real_write = os.write
    calls: list[int] = []

    def fills_up(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data[: len(data) // 2])  # what fitted

    def cannot_cut(fd: int, length: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "write", fills_up)
    monkeypatch.setattr(os, "ftruncate", cannot_cut)
    with pytest.raises(HandlerError, match="No space left on device"):
        notifier.send(EVENTS[1], MemoryProgress())
    monkeypatch.undo()  # space comes back
    assert not out.read_text().endswith("\n")  # half a line is left
    notifier.send(EVENTS[1], MemoryProgress())
    notifier.send(EVENTS[2], MemoryProgress())
    written = out.read_text(encoding="utf-8").splitlines()
    assert len(written) == 4
    readable = []
    for line in written:
        try:
            readable.append(json.loads(line)["id"])
        except ValueError:
            readable.append(None)
    assert readable == [EVENTS[0].id, None, EVENTS[1].id, EVENTS[2].id]
