"""The daemon's package worker: the package step (``watcher.impact.atlas.PackageStep``) on a
thread of its own, never on the scheduler's one worker thread, where it would hold up the
polls. A poll announces a release from its notes and hands the atlases it lacks to the step;
the poll job then wakes this worker, which fetches and builds them one version at a time, each
a job with a deadline (its budget's, plus a grace) in the daemon's ``JobWatch``. When one
arrives the next poll is brought forward, and the release's package diff is announced through
the ``package_pending`` path. Only the leader fetches; stopping aborts the fetch in flight
(its download cut, its build's child killed, its folder removed).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from watcher.crashpoints import hangpoint
from watcher.daemon.jobs import JobWatch
from watcher.impact.atlas import PackageStep

logger = logging.getLogger(__name__)

GRACE = 10.0  # seconds past its budget before a fetch counts as stuck: the budget's own
# limits are checked between reads and on the child's exit, so a fetch overruns them by little


class PackageWorker:
    def __init__(self, step: Callable[[], PackageStep | None], jobs: JobWatch, *,
                 leads: Callable[[], bool], arrived: Callable[[], None]) -> None:
        """``step``: the runtime's package step now (a reload makes another); ``arrived``:
        called when an atlas is stored (the daemon brings its next poll forward)."""
        self._step = step
        self._jobs = jobs
        self._leads = leads
        self._arrived = arrived
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._current: PackageStep | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="package-worker", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """A poll has run: there may be atlases to fetch."""
        self._wake.set()

    def stop(self, timeout: float) -> bool:
        """Abort the fetch in flight and end the thread; whether it ended within ``timeout``."""
        self._stopping.set()
        self._wake.set()
        current = self._current
        if current is not None:
            current.abort()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stopping.is_set():
                return
            try:
                self._fetch_wanted()
            except Exception:  # the thread must outlive any one failure
                logger.exception("the package worker failed unexpectedly")
            finally:
                self._current = None

    def _fetch_wanted(self) -> None:
        step = self._step()
        if step is None or not self._leads():
            return
        self._current = step
        arrived = False
        for package, version in step.take():
            if self._stopping.is_set() or not self._leads():
                return  # wanted again by the next poll that still lacks it
            if not step.due(package, version):
                continue
            index = step.source.index
            seconds = (index.budget.seconds if index is not None else 0.0) + GRACE
            with self._jobs.running(f"package {package} {version}", seconds,
                                    f"fetching the atlas of {package} {version}") as doing:
                step.source.doing = doing
                hangpoint("package:fetch")
                arrived = step.fetch(package, version) or arrived
        if arrived and not self._stopping.is_set():
            self._arrived()
