"""One poll of every watched repo: fetch → plan → record (events and deliveries) in the store.

Each repo is its own unit of failure: an error is recorded in that repo's state and the next
repo still runs. Nothing is sent from here; ``deliver`` sends what the store has queued.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

from handlers.base import NotifierConfig
from watcher.config import Config, RepoConfig
from watcher.crashpoints import crashpoint
from watcher.errors import WatcherError
from watcher.github import GitHubClient, Listing
from watcher.models import Event
from watcher.notes.analyze import Analyzer
from watcher.orgs import watched_repos
from watcher.plan import RepoPlan, RepoPolicy, deletion_candidates, plan_repo
from watcher.routing import route
from watcher.store import RepoState, Store

logger = logging.getLogger(__name__)


@dataclass
class RepoOutcome:
    repo: str
    events: list[Event] = field(default_factory=list)
    not_modified: bool = False
    requests: int = 0
    error: WatcherError | None = None


@dataclass
class PollReport:
    outcomes: list[RepoOutcome] = field(default_factory=list)

    @property
    def events(self) -> list[Event]:
        return [event for outcome in self.outcomes for event in outcome.events]

    @property
    def failed(self) -> list[RepoOutcome]:
        return [outcome for outcome in self.outcomes if outcome.error is not None]


def utcnow() -> datetime:
    return datetime.now(UTC)


class Poller:
    def __init__(self, config: Config, store: Store, client: GitHubClient, analyzer: Analyzer,
                 notifiers: list[NotifierConfig], clock: Callable[[], datetime] = utcnow) -> None:
        self.config = config
        self.store = store
        self.client = client
        self.analyzer = analyzer
        self.notifiers = notifiers
        self.clock = clock

    def watched(self, names: list[str] | None = None, *, dry_run: bool = False
                ) -> tuple[list[RepoConfig], list[WatcherError]]:
        """The repos to poll: those named (``--repo``), else ``[[repos]]`` plus ``[[orgs]]``."""
        if names:
            return [self.config.repo(name) for name in names], []
        failures: list[WatcherError] = []
        repos = watched_repos(self.config, self.client, self.store, self.clock, dry_run=dry_run,
                              failures=failures)
        return repos, failures

    def poll(self, repos: list[RepoConfig], *, dry_run: bool = False) -> PollReport:
        """Fetch every repo concurrently (bounded by ``github.concurrency``), then plan and
        record them one by one in config order, so events queue in the same order every run."""
        report = PollReport()
        workers = max(1, min(self.config.github.concurrency, len(repos)))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fetch") as pool:
            # The store is read here, not in the workers: they only speak HTTP (a store read
            # in a fresh thread would open a fresh SQLite connection on every poll).
            states = [self.store.repo_state(repo.name) for repo in repos]
            fetches = [pool.submit(self._fetch, repo, self._etags(repo, state))
                       for repo, state in zip(repos, states, strict=True)]
            for repo, state, fetch in zip(repos, states, fetches, strict=True):
                report.outcomes.append(self.poll_repo(repo, dry_run=dry_run, fetched=fetch,
                                                      state=state))
        return report

    def _etags(self, repo: RepoConfig, state: RepoState) -> dict[str, str]:
        if state.baseline_at is None:
            return {}
        return self.store.etags([self.client.releases_url(repo.name, self.config.github.per_page)])

    def _fetch(self, repo: RepoConfig, etags: dict[str, str]) -> Listing:
        github = self.config.github
        return self.client.list_releases(repo.name, etags=etags, per_page=github.per_page,
                                         max_pages=github.max_pages)

    def poll_repo(self, repo: RepoConfig, *, dry_run: bool = False,
                  fetched: Future[Listing] | None = None,
                  state: RepoState | None = None) -> RepoOutcome:
        outcome = RepoOutcome(repo.name)
        state = state or self.store.repo_state(repo.name)
        try:
            listing = (fetched.result() if fetched is not None
                       else self._fetch(repo, self._etags(repo, state)))
            self._poll(repo, state, listing, outcome, dry_run)
        except WatcherError as error:
            outcome.error = error
            logger.error("%s", error)
        except Exception as error:  # a bug tripped by one repo's data must not stop the others
            outcome.error = WatcherError(f"{repo.name}: unexpected {type(error).__name__}: "
                                         f"{error}")
            logger.exception("%s", outcome.error)
        if outcome.error is not None and not dry_run:
            self._record_failure(state, outcome.error)
        return outcome

    def _poll(self, repo: RepoConfig, state: RepoState, listing: Listing, outcome: RepoOutcome,
              dry_run: bool) -> None:
        outcome.requests = listing.requests
        crashpoint("poll:fetched")
        now = self.clock()
        if listing.not_modified:
            outcome.not_modified = True
            if not dry_run:
                self._record_success(state, now)
            return
        known = self.store.release_records(repo.name)
        deleted = []
        for release_id in deletion_candidates(known, listing.releases, listing.complete):
            outcome.requests += 1
            if self.client.get_release(repo.name, release_id) is None:
                deleted.append(release_id)
        policy = RepoPolicy(include_prereleases=repo.include_prereleases,
                            first_run=state.baseline_at is None,
                            first_run_announce=self.config.poll.first_run_announce
                            if repo.first_run_announce is None else repo.first_run_announce)
        plan = plan_repo(repo.name, known, listing.releases, deleted, policy, self.analyzer, now)
        outcome.events = plan.events
        if not dry_run:
            self._record(state, plan, listing.etags, now)

    def recipients(self, event: Event, mode: str | None = None) -> list[str]:
        return [n.name for n in self.notifiers
                if (mode is None or n.mode == mode) and route(event, n) is not None]

    def _record(self, state: RepoState, plan: RepoPlan, etags: dict[str, str],
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
            self.store.put_etags(etags)
            self.store.put_repo_state(self._succeeded(state, now).model_copy(update={
                "release_ids": plan.release_ids,
                "baseline_at": state.baseline_at or now}))
        crashpoint("poll:recorded")

    def _succeeded(self, state: RepoState, now: datetime) -> RepoState:
        reading = self.client.last_rate_limit
        update: dict[str, object] = {"last_poll": now, "last_success": now,
                                     "consecutive_failures": 0, "last_error": None}
        if reading is not None:
            update |= {"rate_limit_remaining": reading.remaining,
                       "rate_limit_limit": reading.limit, "rate_limit_reset": reading.reset}
        return state.model_copy(update=update)

    def _record_success(self, state: RepoState, now: datetime) -> None:
        self.store.put_repo_state(self._succeeded(state, now))

    def _record_failure(self, state: RepoState, error: WatcherError) -> None:
        current = self.store.repo_state(state.repo)
        self.store.put_repo_state(current.model_copy(update={
            "last_poll": self.clock(), "last_error": str(error),
            "consecutive_failures": current.consecutive_failures + 1}))
