"""Which replica leads: on a shared store (PostgreSQL) exactly one daemon polls, runs the
schedule and delivers, the one holding the store's lease (``watcher/store/lease.py``); every
replica serves ``/healthz``, ``/readyz``, ``/metrics``, slash commands and feeds. The embedded
store has one daemon (its ``daemon.lock``), which always leads.

The lease is renewed every third of ``[store] lease`` on a thread of its own. A leader counts
its lease from the moment it *asked* for it (before the server's clock started it), and stops
starting side effects two thirds of the way through it: a renewal that failed once still leaves
a third of the lease, and by the time the lease can have expired on the server (and a standby
taken it), nothing new has started here. A write already under way is fenced: it carries the
token and is refused once another term began (``watcher.store.Deposed``).

The lease is tied to the leader's jobs making progress, not only to its lease thread running:
while a job is past its deadline (``stuck``, ``jobs.JobWatch``) the lease is handed back and
not renewed, so a standby takes over from a leader whose work is wedged; once the job ends,
this replica competes for it again.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from watcher.errors import StoreBusy, WatcherError
from watcher.store import Lease, Store

logger = logging.getLogger(__name__)

TRUSTED = 2 / 3  # of the lease, from the moment it was asked for: when a leader stops starting
SAME_RUN = timedelta(minutes=1)  # a digest sent this close to a missed run was that run


def holder_name() -> str:
    """This process, as the lease names its holder: host, pid and a random part (a pid
    reused by a restarted container is still another holder)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Leadership:
    def __init__(self, lease: Lease | None, seconds: float, *,
                 monotonic: Callable[[], float] = time.monotonic,
                 on_change: Callable[[bool], None] | None = None,
                 stuck: Callable[[], str | None] | None = None) -> None:
        """``lease`` None: the embedded store, always led by its one daemon. ``stuck``: why
        this replica must not lead now (a job past its deadline), or None."""
        self._lease = lease
        self.seconds = seconds
        self._monotonic = monotonic
        self._on_change = on_change
        self._stuck = stuck
        self._gave_up: str | None = None
        self._token: int | None = None
        self._until = 0.0
        self._led = lease is None  # as last told to on_change
        self._failing = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def shared(self) -> bool:
        return self._lease is not None

    def token(self) -> int | None:
        """The fencing token while this replica may act on it; None otherwise (and always for
        the embedded store, whose writes need none)."""
        with self._lock:
            return self._token if self._monotonic() < self._until else None

    def leads(self) -> bool:
        return self._lease is None or self.token() is not None

    @property
    def role(self) -> str:
        return "leader" if self.leads() else "standby"

    def renew(self) -> bool:
        """One try at taking or renewing the lease; whether this replica leads after it."""
        if self._lease is None:
            return True
        if self._given_up():
            self._tell()
            return False
        asked = self._monotonic()
        try:
            token = self._lease.acquire()
        except WatcherError as error:  # the server unreachable: the lease runs out on its own
            if not self._failing:
                logger.warning("cannot renew the leader's lease: %s", error)
            self._failing = True
        else:
            if self._failing:
                logger.info("the store answers again")
            self._failing = False
            with self._lock:
                if token is None:
                    self._token = None
                else:
                    self._token, self._until = token, asked + self.seconds * TRUSTED
        self._tell()
        return self.leads()

    def _given_up(self) -> bool:
        """While a job is stuck: the lease handed back (once) and not renewed."""
        assert self._lease is not None
        why = self._stuck() if self._stuck is not None else None
        if why is None:
            if self._gave_up is not None:
                logger.info("the stuck job has ended; this replica competes for the lease "
                            "again")
            self._gave_up = None
            return False
        if self._gave_up is None:
            logger.warning("handing back the leader's lease: %s; a standby takes over",
                           why)
            try:
                if self.token() is not None:
                    self._lease.release()
            except WatcherError as error:
                logger.warning("could not hand the lease back (it lapses on its own): %s",
                               error)
        self._gave_up = why
        with self._lock:
            self._token = None
        return True

    def _tell(self) -> None:
        leads = self.leads()
        if leads == self._led:
            return
        self._led = leads
        if leads:
            logger.info("this replica leads now (lease term %s): it polls, runs the schedule "
                        "and delivers", self._token)
        else:
            logger.warning("this replica is a standby now: another holds the lease, or it "
                           "could not be renewed in time; it starts nothing more")
        if self._on_change is not None:
            self._on_change(leads)

    def start(self, *, tried: bool = False) -> None:
        """The first try now (the role is known from the start; ``tried``: it was made
        already), then one every third of the lease on a thread of its own."""
        if self._lease is None:
            return
        if not tried:
            self.renew()
        self._thread = threading.Thread(target=self._run, name="leader-lease", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            try:
                self.renew()
            except Exception:  # the thread must outlive any one failure
                logger.exception("the leader's lease thread failed unexpectedly")

    def stop(self) -> None:
        """Renew no more; a leader lets its lease lapse at once, so a standby takes over at
        its next try instead of waiting the lease out."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.seconds)
        if self._lease is None:
            return
        try:
            if self.token() is not None:
                self._lease.release()
        except WatcherError as error:
            logger.warning("could not hand the lease back (it lapses on its own): %s", error)
        with self._lock:
            self._token = None
        self._lease.close()


class MissedDigests:
    """Digest runs that came round while this replica stood by (each replica schedules every
    digest; a standby's run does nothing). When it takes over, a digest is sent now if one is
    in flight (its leader died mid-digest), or if its last run here was missed and no digest
    went out since (its leader died just before the run); not when the leader sent it."""

    def __init__(self) -> None:
        self._at: dict[str, datetime] = {}

    def missed(self, name: str, at: datetime) -> None:
        self._at[name] = at  # the latest run missed is the one that may be owed

    def owed(self, store: Store, names: Iterable[str]) -> list[str]:
        """Of the digest notifiers ``names``, those to send now; forgets the missed runs."""
        owed = []
        for name in names:
            missed = self._at.get(name)
            since = store.digest_since(name)
            if store.digest_delivery(name, ids=False) is not None or (
                    missed is not None and (since is None or since < missed - SAME_RUN)):
                owed.append(name)
        self._at.clear()
        return owed


@contextmanager
def leading(store: Store, seconds: float, *, wait: float, sleep: Callable[[float], None],
            monotonic: Callable[[], float] = time.monotonic,
            on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Lead a shared store for one run (``release-watch poll`` by hand): take its lease,
    waiting up to ``wait`` seconds while another holds it, renew it while the run lasts, its
    writes fenced by it, and hand it back at the end. A running daemon renews its lease for
    as long as it runs, so beside one this gives up: the daemon polls that store already."""
    lease = store.lease(holder_name(), seconds)
    leadership = Leadership(lease, seconds, monotonic=monotonic)
    deadline = monotonic() + wait
    told = False
    while not leadership.renew():
        if monotonic() >= deadline:
            leadership.stop()
            raise StoreBusy(f"another replica leads the store {store.db.where} (a daemon: it "
                            f"polls and delivers already); gave up after {wait:.0f}s")
        if not told and on_wait is not None:
            on_wait("waiting for the store's leader to hand over its lease")
            told = True
        sleep(min(1.0, seconds / 3))
    store.fenced_by(leadership.token)
    leadership.start(tried=True)
    try:
        yield
    finally:
        leadership.stop()
