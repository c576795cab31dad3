"""One poll of every watched repo: fetch → plan → record (events and deliveries) in the store.

Each repo is its own unit of failure: an error is recorded in that repo's state and the next
repo still runs. Nothing is sent from here; ``deliver`` sends what the store has queued.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from watcher.config import Config, RepoConfig
from watcher.crashpoints import crashpoint
from watcher.delivery import ImpactOf, NotifierConfig, route
from watcher.errors import StoreError, WatcherError
from watcher.github import (
    GitHubClient,
    Listing,
    check_many,
    deep_scan_due,
    first_deep_scan,
    page_urls,
    read_every_page,
    watched_repos,
)
from watcher.metrics import Metrics
from watcher.models import Event
from watcher.notes import Analyzer
from watcher.store import RepoState, Store

if TYPE_CHECKING:
    from watcher.plan import RepoPlan

logger = logging.getLogger(__name__)

PRUNE_EVERY = timedelta(hours=1)  # retention is a cheap indexed update, but need not run often


@dataclass
class RepoOutcome:
    """What one repo's poll did. Events themselves are not kept: they are in the store, and a
    poll of thousands of repos must not hold every release's items at once."""

    repo: str
    event_ids: list[str] = field(default_factory=list)
    not_modified: bool = False
    requests: int = 0
    error: WatcherError | None = None

    @property
    def result(self) -> str:
        """``failed``; ``unchanged`` (a 304, or the batched check said so); or ``changed``
        (read and planned, whether or not it made an event)."""
        if self.error is not None:
            return "failed"
        return "unchanged" if self.not_modified else "changed"
    baseline: int | None = None  # a first poll: the releases recorded as the repo's history


@dataclass
class PollReport:
    outcomes: list[RepoOutcome] = field(default_factory=list)

    @property
    def event_count(self) -> int:
        return sum(len(outcome.event_ids) for outcome in self.outcomes)

    @property
    def failed(self) -> list[RepoOutcome]:
        return [outcome for outcome in self.outcomes if outcome.error is not None]


@dataclass
class StateBatch:
    """Repo states a poll changed without recording releases, written together at its end in
    one transaction: those where only the poll timestamps moved as one narrow update, the
    others (a failure, a recovery) as rows."""

    touched: list[RepoState] = field(default_factory=list)
    changed: list[RepoState] = field(default_factory=list)
    etags: dict[str, str] = field(default_factory=dict)
    last_pages: set[str] = field(default_factory=set)

    def add(self, old: RepoState, new: RepoState) -> None:
        (self.touched if new.same_but_timestamps(old) else self.changed).append(new)


EventsSeen = Callable[[RepoOutcome, list[Event]], None]


@dataclass
class _Pending:
    """A repo between its fetch and its recording: the state read before the fetch, the
    fetch, and the batched check's fingerprint of its newest releases (None: unchecked)."""

    repo: RepoConfig
    state: RepoState
    fetch: Future[Listing]
    fingerprint: str | None = None
    deep: bool = False  # every page read (github.deep_scan)
    baseline: bool = False  # ... for the repo's baseline, its first deep scan


class Poller:
    def __init__(self, config: Config, store: Store, client: GitHubClient, analyzer: Analyzer,
                 notifiers: list[NotifierConfig], *, clock: Callable[[], datetime],
                 impact: Callable[[bool], ImpactOf] | None = None,
                 metrics: Metrics | None = None) -> None:
        """``impact``: with ``[impact]`` configured, the impact step for one poll (given
        ``dry_run``): each poll scans the code afresh, reading only the files that changed.
        ``metrics``: told each poll's duration, outcome per repo and events (/metrics)."""
        self.config = config
        self.metrics = metrics or Metrics()
        self.store = store
        self.client = client
        self.analyzer = analyzer
        self.notifiers = notifiers
        self.clock = clock
        self._pruned_at: datetime | None = None
        self.impact = impact
        self._impact_now: ImpactOf | None = None

    def watched(self, names: list[str] | None = None, *, dry_run: bool = False
                ) -> tuple[list[RepoConfig], list[WatcherError]]:
        """The repos to poll: those named (``--repo``), else ``[[repos]]`` plus ``[[orgs]]``."""
        if names:
            return [self.config.repo(name) for name in names], []
        failures: list[WatcherError] = []
        cached = {org.name: self.store.org_state(org.name) for org in self.config.orgs}
        repos, refreshed = watched_repos(self.config, self.client, cached, self.clock,
                                         failures=failures)
        if not dry_run:
            for org, state in refreshed.items():
                self.store.put_org_state(org, state)
        return repos, failures

    def poll(self, repos: list[RepoConfig], *, dry_run: bool = False,
             on_events: EventsSeen | None = None) -> PollReport:
        """Fetch repos concurrently (``github.concurrency`` at once, a bounded window ahead),
        then plan and record them one at a time in config order, so events queue in the same
        order every run and only one repo's releases and items are in memory at a time.
        ``on_events`` sees each repo's events as they are planned (the dry run prints them)."""
        with self.metrics.poll_timer():
            report = self._poll_all(repos, dry_run, on_events)
        if not dry_run:  # counted as the store has them: the repos' states commit at the end
            self.metrics.repos_polled(((o.repo, o.result) for o in report.outcomes),
                                      self.clock())
        return report

    def _poll_all(self, repos: list[RepoConfig], dry_run: bool,
                  on_events: EventsSeen | None) -> PollReport:
        report = PollReport()
        batch = StateBatch()
        self._impact_now = self.impact(dry_run) if self.impact is not None else None
        workers = max(1, min(self.config.github.concurrency, len(repos)))
        # The store is read here, in two statements, not by the workers (they only speak
        # HTTP) nor once per repo while they run.
        states = self.store.repo_states([repo.name for repo in repos])
        etags = self.store.etags([self._first_page(repo) for repo in repos])
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fetch") as pool:
            checked = self._batch_check(repos, pool)
            started = self.clock()
            window: deque[_Pending] = deque()
            upcoming = iter(repos)

            def submit() -> None:
                repo = next(upcoming, None)
                if repo is not None:
                    window.append(self._start(repo, states.pop(repo.name), etags,
                                              checked.get(repo.name), pool, started))

            for _ in range(2 * workers):
                submit()
            while window:
                pending = window.popleft()
                submit()
                report.outcomes.append(self._poll_one(pending, batch, dry_run, on_events))
        if not dry_run:
            self._finish(batch)
        return report

    def _batch_check(self, repos: list[RepoConfig], pool: ThreadPoolExecutor
                     ) -> dict[str, str | None]:
        github = self.config.github
        if len(repos) <= github.graphql_threshold or not self.client.authenticated:
            return {}
        return check_many(self.client, [repo.name for repo in repos],
                                      first=github.per_page, batch=github.graphql_batch,
                                      pool=pool)

    def _start(self, repo: RepoConfig, state: RepoState, etags: dict[str, str],
               fingerprint: str | None, pool: ThreadPoolExecutor, now: datetime) -> _Pending:
        """A repo's REST read on its way in a worker (every page, when its deep scan is due),
        or already answered by the batched check.

        A repo's baseline (its first poll) reads every page a deep scan would, with
        ``github.deep_scan`` on: a release on a page the baseline did not read would be taken
        as history when a deep scan first reads it, so an edit made to it in between would
        never be announced. Every release within the deep scan's reach is known from the
        first poll, and the baseline counts as the repo's first deep scan."""
        github = self.config.github
        baseline = state.baseline_at is None and github.deep_scan > 0
        if baseline or deep_scan_due(state, now, github.deep_scan):
            # A baseline never reads fewer pages than a routine poll would, nor sends ETags:
            # whatever the store kept from before is no evidence of what it knows now.
            pages = (max(github.deep_scan_pages, github.max_pages) if baseline
                     else github.deep_scan_pages)
            urls = page_urls(self.client, repo.name, github.per_page, pages)
            deep = pool.submit(read_every_page, self.client, repo.name,
                               etags={} if baseline else self.store.etags(urls),
                               per_page=github.per_page,
                               last_pages=set() if baseline else self.store.last_pages(urls),
                               pages=pages)
            return _Pending(repo, state, deep, fingerprint, deep=True, baseline=baseline)
        if fingerprint is not None and fingerprint == state.fingerprint:
            done: Future[Listing] = Future()
            done.set_result(Listing(not_modified=True))
            return _Pending(repo, state, done, fingerprint)
        first = self._first_page(repo)
        known = {first: etags[first]} if state.baseline_at is not None and first in etags else {}
        return _Pending(repo, state, pool.submit(self._fetch, repo, known), fingerprint)

    def _first_page(self, repo: RepoConfig) -> str:
        return self.client.releases_url(repo.name, self.config.github.per_page)

    def _fetch(self, repo: RepoConfig, etags: dict[str, str]) -> Listing:
        github = self.config.github
        return self.client.list_releases(repo.name, etags=etags, per_page=github.per_page,
                                         max_pages=github.max_pages)

    def _poll_one(self, pending: _Pending, batch: StateBatch, dry_run: bool,
                  on_events: EventsSeen | None) -> RepoOutcome:
        repo, state = pending.repo, pending.state
        outcome = RepoOutcome(repo.name)
        try:
            listing = pending.fetch.result()
            crashpoint("poll:fetched")
            events = self._poll(pending, listing, outcome, batch, dry_run)
            if on_events is not None:
                on_events(outcome, events)
        except StoreError:
            raise  # the store is everyone's: no other repo can be recorded either
        except WatcherError as error:
            outcome.error = error
            logger.error("%s", error)
        except Exception as error:  # a bug tripped by one repo's data must not stop the others
            outcome.error = WatcherError(f"{repo.name}: unexpected {type(error).__name__}: "
                                         f"{error}")
            logger.exception("%s", outcome.error)
        if outcome.error is not None:
            batch.changed.append(state.model_copy(update={
                "last_poll": self.clock(), "last_error": str(outcome.error),
                "consecutive_failures": state.consecutive_failures + 1}))
        return outcome

    def _poll(self, pending: _Pending, listing: Listing, outcome: RepoOutcome,
              batch: StateBatch, dry_run: bool) -> list[Event]:
        repo, state = pending.repo, pending.state
        outcome.requests = listing.requests
        now = self.clock()
        if listing.not_modified:
            outcome.not_modified = True
            succeeded = self._succeeded(self._note_move(state, listing), now, deep=pending.deep,
                                        baseline=pending.baseline)
            if state.fingerprint is None and pending.fingerprint is not None:
                # The first fingerprint is taken on trust; a later one only with a REST read
                # that changed, so a REST replica lagging behind GraphQL cannot hide an edit.
                succeeded = succeeded.model_copy(update={"fingerprint": pending.fingerprint})
            if not (state.package_pending and self._impact_now is not None):
                batch.add(state, succeeded)
                batch.etags.update(listing.etags)  # a deep scan's empty page past the last one
                batch.last_pages |= listing.last_pages
                return []
        # Only now: a poll where nothing changed never needs the planner (nor the diff), unless
        # a release waits for its package: then its known releases are planned again as listed.
        from watcher.plan import RepoPolicy, deletion_candidates, plan_repo

        known = self.store.release_records(repo.name)
        deleted = []
        # The fingerprint a REST read that changed vouches for; an unchanged one keeps its own.
        fingerprint = pending.fingerprint
        if listing.not_modified:
            listing = replace(listing, releases=[record.release for record in known.values()])
            fingerprint = state.fingerprint or pending.fingerprint
        for release_id in deletion_candidates(known, listing.releases, listing.complete):
            outcome.requests += 1
            if self.client.get_release(repo.name, release_id) is None:
                deleted.append(release_id)
        policy = RepoPolicy(include_prereleases=repo.include_prereleases,
                            first_run=state.baseline_at is None,
                            first_run_announce=self.config.poll.first_run_announce
                            if repo.first_run_announce is None else repo.first_run_announce)
        plan = plan_repo(repo.name, known, listing.releases, deleted, policy, self.analyzer, now,
                         self._impact_now)
        outcome.event_ids = [event.id for event in plan.events]
        outcome.baseline = plan.baseline
        if plan.baseline is not None and not dry_run:
            from watcher.present import plural

            logger.info("baseline: %s recorded for %s", plural(plan.baseline, "release"),
                        repo.name)
        noted = self._note_move(state, listing)  # after get_release: it may redirect too
        if not dry_run:
            self._record(self._succeeded(noted, now, deep=pending.deep,
                                         baseline=pending.baseline).model_copy(
                update={"fingerprint": fingerprint,
                        "package_pending": plan.pending(known)}), plan, listing, now)
            self.metrics.events_recorded(plan.events)
        return plan.events

    def _note_move(self, state: RepoState, listing: Listing) -> RepoState:
        """GitHub answered for the repo from another name (renamed or transferred) and the
        poll followed it there; the config should name the new one. Said in the log once,
        when first seen; kept in the repo's state for ``status``."""
        moved = self.client.take_move(state.repo)
        if not listing.requests:  # answered by the batched check: nothing was asked over REST
            return state
        if moved is not None and moved != state.moved_to:
            logger.warning("%s: GitHub answers for it as %s now (renamed or transferred); "
                           "polled there, but the config should name %s", state.repo, moved,
                           moved)
        if moved == state.moved_to:  # as every poll finds it: no copy of the state
            return state
        return state.model_copy(update={"moved_to": moved})

    def recipients(self, event: Event, mode: str | None = None) -> list[str]:
        return [n.name for n in self.notifiers
                if (mode is None or n.mode == mode) and route(event, n) is not None]

    def _record(self, state: RepoState, plan: RepoPlan, listing: Listing,
                now: datetime) -> None:
        """Records, events, deliveries and the ETag that vouches for them: all or nothing."""
        with self.store.transaction():
            for record in plan.records:
                self.store.put_release(record)
            for release_id in plan.deleted:
                self.store.delete_release(state.repo, release_id)
            for event in plan.events:
                if not self.store.add_event(event, self.recipients(event, "immediate"), now,
                                            self.recipients(event, "digest")):
                    logger.info("%s: event %s was recorded before; not queued again",
                                state.repo, event.id)
            crashpoint("store:mid-transaction")
            self.store.put_etags(listing.etags, listing.last_pages)
            self.store.put_repo_state(state.model_copy(update={
                "releases_known": self.store.releases_known(state.repo),
                "baseline_at": state.baseline_at or now}))
        crashpoint("poll:recorded")

    def _succeeded(self, state: RepoState, now: datetime, *, deep: bool,
                   baseline: bool = False) -> RepoState:
        """``baseline``: the repo's first poll read every page (its first deep scan). The
        next deep scan falls at the repo's place in the day, within one ``deep_scan`` of
        now, so a watch list baselined on one poll is not deep-scanned all on one poll."""
        update: dict[str, object] = {"last_poll": now, "last_success": now,
                                     "consecutive_failures": 0, "last_error": None}
        if deep and not baseline:
            update["deep_scanned_at"] = now
        elif baseline or state.deep_scanned_at is None:  # new, or from a schema-1 store
            update["deep_scanned_at"] = first_deep_scan(
                state.repo, now, self.config.github.deep_scan)
        return state.model_copy(update=update)

    def _finish(self, batch: StateBatch) -> None:
        """The poll's one transaction for what did not change releases: repo states, the rate
        limit GitHub last reported, and (hourly at most) retention."""
        now = self.clock()
        with self.store.transaction():
            self.store.touch_repos(batch.touched)
            self.store.put_etags(batch.etags, batch.last_pages)
            for state in batch.changed:
                self.store.put_repo_state(state)
            reading = self.client.last_rate_limit
            if reading is not None:
                seen = {"remaining": reading.remaining, "limit": reading.limit,
                        "reset": reading.reset}
                if seen != self.store.meta("rate_limit"):  # a 304 leaves it as it was
                    self.store.put_meta("rate_limit", seen)
        if self._pruned_at is None or now - self._pruned_at >= PRUNE_EVERY:
            retention = timedelta(seconds=self.config.store.retention)
            pruned = self.store.prune(now - retention)
            self._pruned_at = now
            if pruned:
                logger.info("retention: dropped the bodies of %d events older than %s", pruned,
                            retention)
