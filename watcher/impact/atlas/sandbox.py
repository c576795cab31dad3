"""Builds an atlas in a child process with limits the wheel cannot get past, so the caller (the
daemon, ``atlas build``) survives whatever the wheel makes ``ast`` do.

The child is ``python -m watcher.impact.atlas.sandbox SPEC``: it limits itself first
(``resource``: its address space to ``memory``, its CPU time to ``cpu_seconds``, the files it
writes to ``memory``, no core dumps; and it dies with its parent), then builds the atlas
(``build.py``: the zip directory checked against the caps before anything is read) and writes
it to a file in its scratch folder. The parent waits at most ``build_seconds`` of wall-clock
time, kills it past that, and turns every way the child can end into one line: a handled error
(the child's own line), running out of memory, a signal (SIGXCPU at the CPU limit, SIGXFSZ,
SIGSEGV from a C stack overflow). The child's peak RSS comes back with the atlas.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import resource
import select
import signal
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from watcher.impact.atlas.budget import Budget, megabytes
from watcher.impact.atlas.codec import loads
from watcher.impact.atlas.errors import AtlasError, OverBudget, WheelUnreadable, WrongVersion
from watcher.impact.atlas.model import Atlas
from watcher.impact.atlas.scratch import scratch

logger = logging.getLogger(__name__)

_HANDLED, _NO_MEMORY = 3, 4  # the child's exit codes besides 0
_KINDS: dict[str, type[AtlasError]] = {"OverBudget": OverBudget, "WrongVersion": WrongVersion}
_PR_SET_PDEATHSIG = 1  # prctl(2)
_CPU_GRACE = 5  # seconds between SIGXCPU (the soft limit) and SIGKILL (the hard one)


@dataclass(frozen=True)
class Built:
    """An atlas built in the child: its file's bytes (as the store keeps them), the atlas read
    from them, and what building it cost."""

    atlas: Atlas
    data: bytes
    seconds: float
    peak_rss: int  # bytes


class BoundedBuilder:
    """Builds atlases in a child process within ``budget``; ``abort`` (from another thread:
    the daemon stopping, SIGTERM) kills the build in flight."""

    def __init__(self, budget: Budget | None = None, *, python: str = sys.executable) -> None:
        self.budget = budget or Budget()
        self.python = python
        self._lock = threading.Lock()
        self._running: subprocess.Popen[bytes] | None = None
        self._aborted = False
        self.peak_rss = 0  # bytes: the last build's child's, whatever its end

    def build(self, wheel: Path, package: str, *, expect: str | None = None) -> Built:
        """The atlas of ``package`` in ``wheel``; ``expect``: the version it must be of (its
        METADATA's), else ``WrongVersion``."""
        with scratch() as folder:
            started = time.monotonic()
            status = self._run(wheel, package, folder)
            seconds = time.monotonic() - started
            out = folder / "atlas.json.gz"
            if status != 0 or not out.is_file():
                raise self._failure(wheel, status, folder)
            data = out.read_bytes()
        atlas = loads(data, origin=f"the atlas built from {wheel.name}")
        if expect is not None and atlas.version != expect:
            raise WrongVersion(f"{wheel.name}: its METADATA says {atlas.package} "
                               f"{atlas.version}, not the {expect} asked for; not kept")
        return Built(atlas, data, seconds, self.peak_rss)

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            if self._running is not None and self._running.returncode is None:
                self._running.kill()

    def _run(self, wheel: Path, package: str, folder: Path) -> int:
        spec = {"wheel": str(wheel), "package": package, "out": str(folder / "atlas.json.gz"),
                "error": str(folder / "error.json"), "parent": os.getpid(),
                "budget": dataclasses.asdict(self.budget)}
        with (folder / "stderr").open("wb") as stderr, self._lock:
            if self._aborted:
                raise AtlasError(f"{wheel.name}: the build was stopped (shutting down)")
            # stdout is a pipe the child never writes: its end (EOF) is the child's exit,
            # which select() waits for with a deadline, no polling.
            self._running = subprocess.Popen(
                [self.python, "-m", "watcher.impact.atlas.sandbox", json.dumps(spec)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,
                start_new_session=False)
        process = self._running
        try:
            return self._wait(process, wheel)
        except BaseException:  # SIGTERM's exception, an abort: the child goes too
            if process.returncode is None:
                process.kill()
                process.wait()
            raise
        finally:
            with self._lock:
                self._running = None

    def _wait(self, process: subprocess.Popen[bytes], wheel: Path) -> int:
        """The child's exit status, once it is gone (killed past the deadline); its peak RSS
        kept in ``peak_rss``."""
        assert process.stdout is not None
        deadline = time.monotonic() + self.budget.build_seconds
        with process.stdout:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    process.kill()
                    self._reap(process)
                    raise OverBudget(f"{wheel.name}: the build took longer than "
                                     f"{self.budget.build_seconds:g}s (impact.build_timeout); "
                                     "stopped")
                readable, _, _ = select.select([process.stdout], [], [], left)
                if readable and not os.read(process.stdout.fileno(), 65536):
                    break  # EOF: the child is gone (or going)
        return self._reap(process)

    def _reap(self, process: subprocess.Popen[bytes]) -> int:
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        self.peak_rss = usage.ru_maxrss * 1024  # getrusage(2): kilobytes on Linux
        return process.returncode

    def _failure(self, wheel: Path, status: int, folder: Path) -> AtlasError:
        budget = self.budget
        if self._aborted:
            return AtlasError(f"{wheel.name}: the build was stopped (shutting down)")
        if status == _HANDLED:
            try:
                said = json.loads((folder / "error.json").read_text(encoding="utf-8"))
                return _KINDS.get(str(said["kind"]), WheelUnreadable)(str(said["message"]))
            except (OSError, ValueError, KeyError, TypeError):
                pass
        if status == _NO_MEMORY:
            return OverBudget(f"{wheel.name}: the build ran out of its "
                              f"{megabytes(budget.memory)} of memory (impact.build_memory)")
        if status in (-signal.SIGXCPU, -signal.SIGKILL) and not self._aborted:
            return OverBudget(f"{wheel.name}: the build used up its {budget.cpu_seconds:g}s of "
                              f"CPU (impact.build_cpu; signal {-status})")
        if status < 0:
            return WheelUnreadable(f"{wheel.name}: the build died of "
                                   f"{signal.Signals(-status).name}; nothing kept")
        return WheelUnreadable(f"{wheel.name}: the build failed (exit {status}): "
                               f"{_last_line(folder / 'stderr')}")


def _last_line(path: Path) -> str:
    try:
        with path.open("rb") as stream:
            stream.seek(max(0, stream.seek(0, os.SEEK_END) - 4096))
            tail = stream.read().decode("utf-8", "replace")
    except OSError:
        return "no word from it"
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no word from it"


# ---- the child ---------------------------------------------------------------------------------
def _limit(spec: dict[str, object]) -> None:
    """The child's own limits, set before it opens the wheel."""
    budget = Budget(**spec["budget"])  # type: ignore[arg-type]
    memory = int(budget.memory)
    cpu = max(1, int(budget.cpu_seconds))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + _CPU_GRACE))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if sys.platform == "linux":  # die with the parent, whatever kills it
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != spec["parent"]:  # it died before the line above
        raise SystemExit(1)


def _child(argument: str) -> int:
    spec = json.loads(argument)
    _limit(spec)
    from watcher.impact.atlas.build import build_atlas
    from watcher.impact.atlas.codec import dumps

    wheel = Path(spec["wheel"])
    try:
        atlas = build_atlas(wheel, spec["package"], Budget(**spec["budget"]))
        Path(spec["out"]).write_bytes(dumps(atlas))
    except MemoryError:
        return _NO_MEMORY
    except AtlasError as error:
        return _said(spec, type(error).__name__, str(error))
    except RecursionError:
        return _said(spec, "OverBudget", f"{wheel.name}: nested too deeply for Python to read")
    except (OSError, zipfile.BadZipFile, EOFError, ValueError) as error:  # a broken member
        return _said(spec, "WheelUnreadable", f"{wheel.name}: not a readable wheel ({error})")
    return 0


def _said(spec: dict[str, str], kind: str, message: str) -> int:
    Path(spec["error"]).write_text(json.dumps({"kind": kind, "message": message}),
                                   encoding="utf-8")
    return _HANDLED


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1]))
