"""``release-watch run``: scheduled polls, digests and delivery retries until SIGTERM/SIGINT.

APScheduler 3.x runs the jobs on a single worker thread, so they never overlap; each job also
takes the store's writer lock, so a ``release-watch poll`` run by hand waits its turn. Jobs
coalesce, run one instance at most, and have a misfire grace time, so a laptop waking from
sleep runs one catch-up poll, not fifty.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from handlers.base import Notifier
from watcher.app import Dependencies, Runtime, build_runtime
from watcher.config import Config, format_duration
from watcher.daemon.schedule import digest_trigger
from watcher.delivery import deliver_pending, send_digests
from watcher.errors import StoreDamaged, StoreReadOnly, WatcherError
from watcher.store import FileLock, daemon_lock, writer_lock
from watcher.validate import validated_notifiers

logger = logging.getLogger(__name__)

EXIT_TIMED_OUT = 1  # SIGTERM, then a job still running past poll.shutdown_timeout


class Daemon:
    def __init__(self, config: Config, deps: Dependencies) -> None:
        self.config = config
        self.deps = deps
        self.busy = threading.Lock()        # held while a job runs
        self.stopping = threading.Event()
        self.scheduler: BackgroundScheduler | None = None
        self.runtime: Runtime | None = None
        self.notifiers: dict[str, Notifier] = {}
        self._lock: FileLock | None = None
        self.broken: WatcherError | None = None  # a store no job can use: the daemon stops

    # ---- life cycle --------------------------------------------------------------------------
    def start(self) -> None:
        """Validate everything first; schedule nothing if anything is wrong."""
        notifiers = validated_notifiers(self.config, self.deps)  # as `config check` does
        triggers = {name: digest_trigger(n.config.digest_schedule, n.config.digest_timezone)
                    for name, n in notifiers.items()
                    if n.config.mode == "digest" and n.config.digest_schedule}
        store_path = self.config.store_path()
        # The store first: a daemon.lock made before it would look like the trace of a store
        # that lost its database (watcher/store/storedir.py).
        self.runtime = build_runtime(self.config, self.deps)
        try:
            self._lock = daemon_lock(store_path)
        except WatcherError:
            self.runtime.close()
            raise
        self.notifiers = notifiers
        poll = self.config.poll
        scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(max_workers=1)},
            job_defaults={"coalesce": True, "max_instances": 1,
                          "misfire_grace_time": int(max(poll.interval, 60))},
            timezone=UTC)
        scheduler.add_job(self._poll_job, IntervalTrigger(seconds=poll.interval,
                                                          jitter=poll.jitter or None),
                          id="poll", name="poll", next_run_time=datetime.now(UTC))
        scheduler.add_job(self._retry_job, IntervalTrigger(seconds=poll.retry_interval),
                          id="deliver", name="delivery retries")
        for name, trigger in triggers.items():
            scheduler.add_job(self._digest_job, trigger, args=[name], id=f"digest:{name}",
                              name=f"digest {name}")
        self.scheduler = scheduler
        scheduler.start()
        logger.info("daemon started (pid %d): %d repos every %s, %d digest schedules, store %s",
                    os.getpid(), len(self.config.repos), format_duration(poll.interval),
                    len(triggers), store_path)

    def stop(self) -> bool:
        """Stop scheduling, let the job in flight finish (bounded); True if it finished."""
        self.stopping.set()
        if self.scheduler is not None and self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        finished = self.busy.acquire(timeout=self.config.poll.shutdown_timeout)
        if not finished:
            logger.warning("a job was still running after poll.shutdown_timeout=%s; exiting "
                           "now (the store is consistent: every write is a transaction, and a "
                           "delivery counts only once sent, so at most the message in flight "
                           "is sent again after a restart)",
                           format_duration(self.config.poll.shutdown_timeout))
        for notifier in self.notifiers.values():
            notifier.close()
        if self.runtime is not None and finished:
            self.runtime.close()
        if self._lock is not None:
            self._lock.release()
        logger.info("daemon stopped")
        return finished

    # ---- jobs ----------------------------------------------------------------------------------
    @contextmanager
    def _job(self, name: str) -> Iterator[bool]:
        """Run a job unless stopping; never let one failure kill the scheduler thread."""
        if self.stopping.is_set() or not self.busy.acquire(blocking=False):
            yield False
            return
        try:
            with writer_lock(self.config.store_path(), wait=self.config.poll.lock_wait):
                yield True
        except (StoreDamaged, StoreReadOnly) as error:
            logger.error("%s job: %s; stopping the daemon", name, error)
            self.broken = error  # no job can do anything useful on this store
        except WatcherError as error:
            logger.error("%s job: %s", name, error)
        except Exception:
            logger.exception("%s job failed unexpectedly", name)
        finally:
            self.busy.release()
            self._heartbeat()

    def _poll_job(self) -> None:
        with self._job("poll") as running:
            if running:
                assert self.runtime is not None
                repos, _ = self.runtime.poller.watched()
                report = self.runtime.poller.poll(repos)
                delivery = deliver_pending(self.runtime.store, self.notifiers)
                logger.info("poll: %d events, %d sent, %d repos failed", report.event_count,
                            delivery.sent, len(report.failed))

    def _retry_job(self) -> None:
        with self._job("delivery") as running:
            if running:
                assert self.runtime is not None
                if self.runtime.store.pending_count():
                    deliver_pending(self.runtime.store, self.notifiers, quiet_repeats=True)

    def _digest_job(self, name: str) -> None:
        with self._job(f"digest {name}") as running:
            if running:
                assert self.runtime is not None
                send_digests(self.runtime.store, self.notifiers, self.deps.clock(), only=name)

    def _heartbeat(self) -> None:
        """What `status` shows of the daemon: pid, last heartbeat, next runs."""
        if self.runtime is None or self.scheduler is None or not self.scheduler.running:
            return
        next_runs = {job.name: job.next_run_time.isoformat()
                     for job in self.scheduler.get_jobs() if job.next_run_time}
        try:
            self.runtime.store.put_daemon_state({
                "pid": os.getpid(), "heartbeat": datetime.now(UTC).isoformat(),
                "next_runs": next_runs})
        except Exception:  # status is best effort; never let it stop a job
            logger.debug("could not record the daemon heartbeat", exc_info=True)


def run_daemon(config: Config, deps: Dependencies,
               install_signals: Callable[[Callable[[int, Any], None]], None] | None = None) -> int:
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        if stop.is_set():
            logger.warning("second signal: exiting at once")
            os._exit(1)
        logger.info("signal %d: finishing the work in flight", signum)
        stop.set()

    # Before anything starts, so a SIGTERM during start-up is a clean stop too.
    if install_signals is None:
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    else:
        install_signals(on_signal)
    daemon = Daemon(config, deps)
    daemon.start()
    while not stop.wait(0.5) and daemon.broken is None:
        pass
    if not daemon.stop():
        # The job in flight (a Slack post, a retry's wait) would go on as long as it takes;
        # past poll.shutdown_timeout the process ends here, whatever that job is doing.
        for handler in logging.getLogger().handlers:
            handler.flush()
        os._exit(EXIT_TIMED_OUT)
    return 1 if daemon.broken is not None else 0
