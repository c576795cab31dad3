"""``release-watch run``: scheduled polls, digests and delivery retries until SIGTERM/SIGINT.

APScheduler 3.x runs the jobs on a single worker thread, so they never overlap; each job also
takes the store's writer lock, so a ``release-watch poll`` run by hand waits its turn. Jobs
coalesce, run one instance at most, and have a misfire grace time, so a laptop waking from
sleep runs one catch-up poll, not fifty.

On a shared store (PostgreSQL) every replica runs this and one leads
(``watcher.daemon.leader``): a standby's jobs come round and do nothing, and its notifiers'
``stopping`` is set, so a leader that lost its lease starts no further post either.

The main thread watches: for signals (SIGTERM/SIGINT stop, SIGHUP reloads the configuration),
for the wall clock being stepped, which APScheduler 3 schedules by, and for jobs running long
(``jobs``: each says in the log what it waits for; one past its deadline is stuck, and a
leader with a stuck job hands its lease over). With ``[impact]``, the package worker
(``packages``) reads the wheels of releases announced without their package, on a thread of
its own: no wheel ever delays a poll.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from watcher.config import Config, digest_trigger, format_duration
from watcher.daemon.clock import ClockWatch, rearm_after_step
from watcher.daemon.commands import SUBSCRIPTION_JOBS, SlackCommands, schedule_subscription_digests
from watcher.daemon.jobs import JobWatch
from watcher.daemon.leader import Leadership, MissedDigests, holder_name
from watcher.daemon.packages import PackageWorker
from watcher.daemon.parts import DaemonParts
from watcher.delivery import Notifier, deliver_pending, send_digests
from watcher.deps import Dependencies, Runtime
from watcher.errors import ConfigError, StoreDamaged, StoreReadOnly, WatcherError
from watcher.health import status_report
from watcher.present import plural
from watcher.server import Service
from watcher.store import FileLock, daemon_lock, writer_lock

logger = logging.getLogger(__name__)

EXIT_TIMED_OUT = 1  # SIGTERM, then a job still running past poll.shutdown_timeout
WATCH_EVERY = 0.5  # seconds between the main thread's looks at signals and the clock
# A scheduled job (a poll, a delivery run, a digest) is stuck past this, or three poll
# intervals if that is longer: GitHub's and Slack's timeouts, retries and rate-limit waits end
# a sound one well within it.
JOB_DEADLINE = 3600.0


class Daemon:
    def __init__(self, config: Config, deps: Dependencies, parts: DaemonParts, *,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        """``parts``: what the composition root builds for it (``watcher.app.build_daemon``)."""
        self.config = config
        self.parts = parts
        self.service = Service(config.server)  # [server] listen: /metrics, /healthz, /readyz...
        self.deps = replace(deps, metrics=self.service.metrics)
        self.busy = threading.Lock()        # held while a job runs
        self.stopping = threading.Event()
        self.scheduler: BackgroundScheduler | None = None
        self.runtime: Runtime | None = None
        self.notifiers: dict[str, Notifier] = {}
        self._lock: FileLock | None = None
        self.leadership = Leadership(None, config.store.lease)  # until start: the embedded way
        self.missed = MissedDigests()  # a standby's digest runs, owed if the leader died
        self.broken: WatcherError | None = None  # a store no job can use: the daemon stops
        self.clock_watch = ClockWatch(deps.clock, monotonic)
        self.slack = SlackCommands(lambda: self.config, self.deps, self.stopping,
                                   parts.transports, parts.subscribed)  # /release-watch
        self.jobs = JobWatch(monotonic=monotonic, tell_every=min(60.0, config.poll.interval))
        self.packages = PackageWorker(
            lambda: self.runtime.packages if self.runtime is not None else None, self.jobs,
            leads=lambda: self.leadership.leads(), arrived=self._package_arrived)

    # ---- life cycle --------------------------------------------------------------------------
    def start(self, *, paused: bool = False) -> None:
        """Validate everything first; schedule nothing if anything is wrong. ``paused``: jobs
        are scheduled but none runs (tests that move the clock themselves)."""
        notifiers, triggers = self._validated(self.config)
        store_path = self.config.store_path()
        # The store first: a daemon.lock made before it would look like the trace of a store
        # that lost its database (watcher/store/storedir.py).
        self.runtime = self.parts.runtime(self.config, self.deps)
        try:
            lease = self.runtime.store.lease(holder_name(), self.config.store.lease)
            if lease is None:  # the embedded store: one daemon, by its lock
                self._lock = daemon_lock(store_path)
            else:  # a shared store: every replica runs, the lease's holder leads
                self.leadership = Leadership(lease, self.config.store.lease,
                                             on_change=self._led, stuck=self.jobs.stuck)
                self.runtime.store.fenced_by(self.leadership.token)
                self.leadership.start()
            self.service.start(self)  # after the lock: a second daemon says that, not "port used"
        except WatcherError:
            if self._lock is not None:
                self._lock.release()
            self.leadership.stop()
            self.runtime.close()
            raise
        self.notifiers = notifiers
        self.slack.start(store_path, self.config.store_url())
        self.scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(max_workers=1)},
            job_defaults={"coalesce": True, "max_instances": 1}, timezone=UTC)
        self._schedule(None, self.config, triggers)
        self.clock_watch.step()  # from here on
        self.scheduler.start(paused=paused)
        if self.runtime.packages is not None:
            from watcher.impact.atlas import sweep

            sweep()  # the partial downloads of a daemon killed mid-fetch
        self.packages.start()
        logger.info("daemon started (pid %d): %s, store %s%s", os.getpid(),
                    self._describe(self.config, triggers), self.runtime.store.db.where,
                    f", {self.leadership.role}" if self.leadership.shared else "")

    @staticmethod
    def _describe(config: Config, triggers: dict[str, CronTrigger]) -> str:
        return (f"{plural(len(config.repos), 'repo')} every "
                f"{format_duration(config.poll.interval)}, "
                f"{plural(len(triggers), 'digest schedule')}")

    def _validated(self, config: Config) -> tuple[dict[str, Notifier], dict[str, CronTrigger]]:
        """What `config check` checks, for start and for SIGHUP alike; a ConfigError if not."""
        notifiers = self.parts.notifiers(config, self.deps)
        triggers = {name: digest_trigger(n.config.digest_schedule, n.config.digest_timezone)
                    for name, n in notifiers.items()
                    if n.config.mode == "digest" and n.config.digest_schedule}
        for notifier in notifiers.values():
            # Checked by deliveries between their calls (each Slack post): after SIGTERM none
            # starts another, rather than posting on until the shutdown timeout cuts one off.
            # A standby, or a leader whose lease is running out, starts none either.
            notifier.context = replace(notifier.context, stopping=self._holding_off)
        return notifiers, triggers

    def _schedule(self, old: Config | None, new: Config,
                  triggers: dict[str, CronTrigger]) -> None:
        """Add the jobs (``old`` None) or bring them in line with a reloaded config: a job
        whose schedule did not change keeps its next run time."""
        assert self.scheduler is not None
        poll, now = new.poll, self.deps.clock()
        # A laptop waking from sleep runs one catch-up job rather than skipping it.
        grace = int(max(poll.interval, 60))
        # Each job's first run is placed by the daemon's clock (injected, like every clock
        # here), not by APScheduler's own reading of it. The first poll is at start.
        jobs: list[tuple[str, str, Callable[..., None], Any, list[str], datetime]] = []
        if old is None or (old.poll.interval, old.poll.jitter) != (poll.interval, poll.jitter):
            first = now if old is None else now + timedelta(seconds=poll.interval)
            jobs.append(("poll", "poll", self._poll_job,
                         IntervalTrigger(seconds=poll.interval, jitter=poll.jitter or None), [],
                         first))
        if old is None or old.poll.retry_interval != poll.retry_interval:
            jobs.append(("deliver", "delivery retries", self._retry_job,
                         IntervalTrigger(seconds=poll.retry_interval), [],
                         now + timedelta(seconds=poll.retry_interval)))
        for job in self.scheduler.get_jobs():
            # cron is wall-clock: re-adding loses nothing; subscriptions' are not config
            if job.id.startswith("digest:") and not job.id.startswith(SUBSCRIPTION_JOBS):
                self.scheduler.remove_job(job.id)
        for name, trigger in triggers.items():
            jobs.append((f"digest:{name}", f"digest {name}", self._digest_job, trigger, [name],
                         trigger.get_next_fire_time(None, now)))
        for job_id, label, func, trigger, args, first in jobs:
            self.scheduler.add_job(func, trigger, args=args, id=job_id, name=label,
                                   misfire_grace_time=grace, replace_existing=True,
                                   next_run_time=first)

    def _holding_off(self) -> bool:
        """Whether no new side effect may start: stopping, or not (or no longer) leading."""
        return self.stopping.is_set() or not self.leadership.leads()

    def role(self) -> str:
        """``leader`` or ``standby`` (``/readyz``, ``/metrics``)."""
        return self.leadership.role

    def readiness(self) -> tuple[bool, str]:
        """``/readyz``: what ``status --check`` judges, by the same function, of this
        daemon's own store."""
        if self.runtime is None:
            return False, "starting"
        data = status_report(self.config, self.deps, self.deps.clock(), self.runtime.store)
        return bool(data["healthy"]), str(data["health"])

    def _led(self, leads: bool) -> None:
        """The lease was won: poll and deliver now rather than at the next interval (the
        takeover is the lease plus a renewal, not plus a poll interval as well), and send the
        digests the dead leader owed."""
        if not leads or self.scheduler is None or not self.scheduler.running:
            return
        owed: list[str] = []
        if self.runtime is not None:
            digests = [job.id.removeprefix("digest:") for job in self.scheduler.get_jobs()
                       if job.id.startswith("digest:")]
            try:
                owed = self.missed.owed(self.runtime.store, digests)
            except WatcherError as error:
                logger.warning("could not tell which digests the last leader owed: %s", error)
        self._run_now("poll", "deliver", *(f"digest:{name}" for name in owed))

    def _package_arrived(self) -> None:
        """An atlas was stored: poll now, so its release's package diff goes out now."""
        if self.scheduler is not None and self.scheduler.running and not self.stopping.is_set():
            self._run_now("poll")

    def _run_now(self, *job_ids: str) -> None:
        assert self.scheduler is not None
        for job_id in job_ids:
            with contextlib.suppress(LookupError):  # JobLookupError: not scheduled (yet)
                self.scheduler.modify_job(job_id, next_run_time=self.deps.clock())

    def stop(self) -> bool:
        """Stop scheduling, let the job in flight finish (bounded); True if it finished."""
        self.stopping.set()
        if self.scheduler is not None and self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        # The package step's fetch in flight is aborted, not awaited: its download is cut,
        # its build's child killed and its folder removed as its thread unwinds.
        self.packages.stop(timeout=min(5.0, self.config.poll.shutdown_timeout))
        finished = self.busy.acquire(timeout=self.config.poll.shutdown_timeout)
        if not finished:
            logger.warning("a job was still running after poll.shutdown_timeout=%s; exiting "
                           "now (the store is consistent: every write is a transaction, and a "
                           "delivery counts only once sent, so at most the message in flight "
                           "is sent again after a restart)",
                           format_duration(self.config.poll.shutdown_timeout))
        for notifier in self.notifiers.values():
            notifier.close()
        self.slack.close()
        if finished:  # nothing of ours runs: the lease is handed back for a standby to take
            self.leadership.stop()
        self.service.stop()  # before the store closes: /readyz and /metrics read it
        if self.runtime is not None and finished:
            self.runtime.close()
        if self._lock is not None:
            self._lock.release()
        logger.info("daemon stopped")
        return finished

    # ---- what the main thread watches ----------------------------------------------------------
    def watch_jobs(self) -> None:
        """Say what long jobs wait for; a stuck one is logged (and, leading a shared store,
        its lease handed over at the next renewal)."""
        self.jobs.tell()
        self.jobs.stuck()

    def watch_clock(self) -> None:
        """Re-arm the jobs when the wall clock was stepped (``watcher.daemon.clock``)."""
        step = self.clock_watch.step()
        if step and self.scheduler is not None and self.scheduler.running:
            rearm_after_step(self.scheduler, step, self.deps.clock())

    def reload(self, load: Callable[[], Config]) -> bool:
        """SIGHUP: read the configuration again and check it as `run` does at start; if it is
        sound, use it from the next job on (repos, notifiers, schedules), else keep the old
        one. One log line either way."""
        try:
            config = load()
            if (config.store_path(), config.store_url()) != (self.config.store_path(),
                                                             self.config.store_url()):
                raise ConfigError("[store] path or url changed: the daemon holds its store's "
                                  "lock or lease; restart it to use another store")
            notifiers, triggers = self._validated(config)
            runtime = self.parts.runtime(config, self.deps)
        except Exception as error:  # whatever it is, the running configuration carries on
            problem = str(error) if isinstance(error, WatcherError) else (
                f"unexpected {type(error).__name__}: {error}")
            logger.error("configuration not reloaded, the running one stays in use: %s",
                         "; ".join(problem.splitlines()))
            return False
        while not self.busy.acquire(timeout=WATCH_EVERY):  # the job in flight finishes first
            if self.stopping.is_set():
                runtime.close()
                return False
        try:
            old, old_runtime, old_notifiers = self.config, self.runtime, self.notifiers
            self.config, self.runtime, self.notifiers = config, runtime, notifiers
            runtime.store.fenced_by(self.leadership.token)
            self._schedule(old, config, triggers)
        finally:
            self.busy.release()
        for notifier in old_notifiers.values():
            notifier.close()
        if old_runtime is not None:
            old_runtime.close()
        self.service.reloaded(config.server)
        logger.info("configuration reloaded from %s: %s", config.source,
                    self._describe(config, triggers))
        return True

    # ---- jobs ----------------------------------------------------------------------------------
    @contextmanager
    def _job(self, name: str) -> Iterator[bool]:
        """Run a job unless stopping; never let one failure kill the scheduler thread."""
        if self._holding_off() or not self.busy.acquire(blocking=False):
            yield False  # a standby's jobs come round and do nothing
            return
        deadline = max(JOB_DEADLINE, 3 * self.config.poll.interval)
        try:
            with self.jobs.running(name, deadline, f"its {name} work"), self._writer(name):
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

    def _writer(self, name: str) -> AbstractContextManager[None]:
        """The embedded store's writer lock; a shared store's writers are its leader, fenced
        by its lease (a manual poll there waits for the writers' lock of each transaction)."""
        if self.leadership.shared:
            return nullcontext()
        return writer_lock(self.config.store_path(), wait=self.config.poll.lock_wait,
                           doing=f"the daemon's {name} job")

    def _poll_job(self) -> None:
        with self._job("poll") as running:
            if running:
                assert self.runtime is not None
                notifiers = self._notifiers_now()
                repos, _ = self.runtime.poller.watched()
                report = self.runtime.poller.poll(repos)
                delivery = deliver_pending(self.runtime.store, notifiers,
                                           metrics=self.deps.metrics)
                logger.info("poll: %s, %d sent, %s failed", plural(report.event_count, "event"),
                            delivery.sent, plural(len(report.failed), "repo"))
                self.packages.wake()  # the atlases it lacked, read apart from it

    def _retry_job(self) -> None:
        with self._job("delivery") as running:
            if running:
                assert self.runtime is not None
                if self.runtime.store.pending_count():
                    deliver_pending(self.runtime.store, self._notifiers_now(),
                                    quiet_repeats=True, metrics=self.deps.metrics)

    def _digest_job(self, name: str) -> None:
        if not self.leadership.leads():
            self.missed.missed(name, self.deps.clock())  # owed if the leader is gone
        with self._job(f"digest {name}") as running:
            if running:
                assert self.runtime is not None
                send_digests(self.runtime.store, self._notifiers_now(), self.deps.clock(),
                             only=name, metrics=self.deps.metrics)

    def _notifiers_now(self) -> dict[str, Notifier]:
        """The configured notifiers and the channels' subscriptions as the store holds them
        now (``/release-watch``), their digests scheduled; in a job, under the writer lock."""
        assert self.runtime is not None and self.scheduler is not None
        notifiers = self.slack.notifiers(self.runtime, self.notifiers)
        schedule_subscription_digests(self.scheduler, notifiers, self._digest_job,
                                      self.deps.clock(), int(max(self.config.poll.interval, 60)))
        return notifiers

    def _heartbeat(self) -> None:
        """What `status` shows of the daemon: pid, last heartbeat, next runs."""
        if (self.runtime is None or self.scheduler is None or not self.scheduler.running
                or not self.leadership.leads()):
            return
        next_runs = {job.name: job.next_run_time.isoformat()
                     for job in self.scheduler.get_jobs() if job.next_run_time}
        try:
            self.runtime.store.put_daemon_state({
                "pid": os.getpid(), "heartbeat": self.deps.clock().isoformat(),
                "next_runs": next_runs})
        except Exception:  # status is best effort; never let it stop a job
            logger.debug("could not record the daemon heartbeat", exc_info=True)


def run_daemon(daemon: Daemon,
               install_signals: Callable[[Callable[[int, Any], None]], None] | None = None,
               ) -> int:
    """Runs ``daemon`` (built, with no I/O yet: the signal handler needs its stopping flag)
    until SIGTERM or SIGINT. ``install_signals`` (tests) is handed the one handler, which
    tells SIGHUP (the configuration read again by ``DaemonParts.read_config``) from the
    rest."""
    stop = threading.Event()
    reload_wanted = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        if signum == signal.SIGHUP:
            reload_wanted.set()  # read in the main loop, not inside the handler
            return
        if stop.is_set():
            logger.warning("second signal: exiting at once")
            os._exit(1)
        logger.info("signal %d: finishing the work in flight", signum)
        daemon.stopping.set()  # at once: a delivery in flight starts no further post
        stop.set()

    # Before anything starts, so a SIGTERM during start-up is a clean stop too. SIGHUP's
    # default action would end the daemon without a word and leave its pid in `status`.
    if install_signals is None:
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, on_signal)
    else:
        install_signals(on_signal)
    daemon.start()
    while not stop.wait(WATCH_EVERY) and daemon.broken is None:
        daemon.watch_clock()
        daemon.watch_jobs()
        if reload_wanted.is_set():
            reload_wanted.clear()
            daemon.reload(daemon.parts.read_config)
    if not daemon.stop():
        # The job in flight (a Slack post, a retry's wait) would go on as long as it takes;
        # past poll.shutdown_timeout the process ends here, whatever that job is doing.
        for handler in logging.getLogger().handlers:
            handler.flush()
        os._exit(EXIT_TIMED_OUT)
    return 1 if daemon.broken is not None else 0
