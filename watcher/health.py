"""Whether the bot is healthy, and what the store knows to say so: the judgement
``release-watch status --check`` exits by and the daemon's ``/readyz`` answers with.

Read from the store without writing to it (``status`` works on a read-only store): one row per
repo, of the outbox its counts per notifier, each notifier's oldest delivery and the failing
ones, so nothing grows with history or the queue. Healthy means polls succeed and what they
found reaches people. Recorded errors are masked as the logs mask secrets.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watcher.config import format_duration
from watcher.logs import RedactSecrets, mask_url_credentials
from watcher.store import Shape, Store, check_usable, open_store, running_daemon

if TYPE_CHECKING:
    from watcher.config import Config
    from watcher.deps import Dependencies

__all__ = ["STALE_INTERVALS", "ago", "collect", "failing_repos", "health", "status_report"]

STALE_INTERVALS = 3


def ago(when: datetime | None, now: datetime) -> str:
    """``2026-11-30 13:00:00Z (5m ago)``, or ``never``."""
    if when is None:
        return "never"
    seconds = int((now - when).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{when:%Y-%m-%d %H:%M:%SZ} ({seconds // size}{unit} ago)"
    return f"{when:%Y-%m-%d %H:%M:%SZ} ({seconds}s ago)"


def collect(config: Config, store: Store) -> dict[str, Any]:
    """Reads one row per repo, and of the outbox its counts per notifier, each notifier's
    oldest delivery and the failing ones: nothing here grows with history or the queue."""
    repos = []
    watched = {r.name for r in config.repos}
    for org in config.orgs:
        watched.update((store.org_state(org.name) or {}).get("repos", []))
    rate = store.meta("rate_limit") or {}
    rate_limit = {"remaining": rate.get("remaining"), "limit": rate.get("limit"),
                  "reset": rate.get("reset")}
    for name in sorted({*store.repos(), *watched}):
        state = store.repo_state(name)
        repos.append({
            "repo": name, "watched": name in watched,
            "last_poll": state.last_poll, "last_success": state.last_success,
            "consecutive_failures": state.consecutive_failures, "last_error": state.last_error,
            "releases_known": state.releases_known, "rate_limit": rate_limit,
            "moved_to": state.moved_to,
        })
    pending = store.pending_by_notifier()  # counted in SQL: no queued record is parsed
    by_notifier = {notifier: number for notifier, (number, _) in pending.items()}
    oldest = {notifier: queued for notifier, (_, queued) in pending.items()}
    failing = [{"notifier": d.notifier, "event": d.event_id, "attempts": d.attempts,
                "error": d.last_error, "permanent": d.permanent_failure}
               for d in store.failing_deliveries()]
    digests = store.digest_sizes()
    for name in digests:
        digest = store.digest_delivery(name, ids=False)  # its state, not its queue
        if digest is not None and digest.attempts:
            failing.append({"notifier": name, "event": "digest", "attempts": digest.attempts,
                            "error": digest.last_error, "permanent": digest.permanent_failure})
    url = config.store_url()
    where = str(config.store_path()) if url is None else mask_url_credentials(url)
    return {"store": where, "repos": repos, "daemon": store.daemon_state(),
            "leader": store.leader(),
            "rate_limit": rate_limit, "digest_queues": digests,
            "subscriptions": _subscriptions(config, store),
            "pending_deliveries": sum(by_notifier.values()), "pending_by_notifier": by_notifier,
            "oldest_undelivered": oldest, "failing_deliveries": failing}


def _subscriptions(config: Config, store: Store) -> list[dict[str, Any]]:
    """The channels' ``/release-watch`` subscriptions: notifiers the config does not name."""
    subscriptions = store.subscriptions()
    if not subscriptions:
        return []
    from watcher.subscribe import subscription_rows

    watched = [repo.name for repo in config.repos] + [f"every repository of {org.name}"
                                                      for org in config.orgs]
    return subscription_rows(subscriptions, watched)


def health(data: dict[str, Any], config: Config, now: datetime) -> tuple[bool, str]:
    """Healthy when polls succeed and what they found reaches people: a probe must go red when
    Slack has been refusing every message, not only when GitHub is unreachable, and when one
    repo fails every poll (a typo'd or renamed one answers 404 for ever) while the others keep
    the last success fresh."""
    problems = _poll_problems(data, config, now) + _delivery_problems(data, config, now)
    if problems:
        return False, "; ".join(problems)
    latest = max(r["last_success"] for r in data["repos"] if r["last_success"] is not None)
    return True, f"last successful poll {ago(latest, now)}"


def failing_repos(data: dict[str, Any], config: Config) -> list[dict[str, Any]]:
    """The watched repos that failed ``poll.max_failed_polls`` polls in a row, and why."""
    limit = config.poll.max_failed_polls
    return [{"repo": r["repo"], "consecutive_failures": r["consecutive_failures"],
             "last_error": r["last_error"]}
            for r in data["repos"] if r["watched"] and r["consecutive_failures"] >= limit]


def _poll_problems(data: dict[str, Any], config: Config, now: datetime) -> list[str]:
    problems = []
    successes = [r["last_success"] for r in data["repos"] if r["last_success"] is not None]
    limit = timedelta(seconds=STALE_INTERVALS * config.poll.interval)
    if not successes:
        problems.append("no successful poll yet")
    elif now - max(successes) > limit:
        problems.append(f"last successful poll {ago(max(successes), now)} is older than "
                        f"{_span(limit)}")
    for repo in failing_repos(data, config):
        why = str(repo["last_error"] or "no error recorded").removeprefix(f"{repo['repo']}: ")
        problems.append(f"{repo['repo']} failed {repo['consecutive_failures']} polls in a row "
                        f"(poll.max_failed_polls = {config.poll.max_failed_polls}): {why}")
    return problems


def _delivery_problems(data: dict[str, Any], config: Config, now: datetime) -> list[str]:
    problems = [f"notifier {f['notifier']!r} cannot deliver: {f['error']}"
                for f in data["failing_deliveries"] if f["permanent"]]
    named = {f["notifier"] for f in data["failing_deliveries"] if f["permanent"]}
    limit = timedelta(seconds=config.poll.delivery_age_limit)
    for notifier, queued in data["oldest_undelivered"].items():
        if notifier not in named and now - queued > limit:
            problems.append(f"notifier {notifier!r} has a message undelivered since "
                            f"{ago(queued, now)}, longer than {_span(limit)}")
    return problems


def _span(limit: timedelta) -> str:
    """A limit as people write it in the config: ``30m``, ``1h``, ``90s``."""
    return format_duration(limit.total_seconds())


def status_report(config: Config, deps: Dependencies, now: datetime,
                  store: Store | None = None) -> dict[str, Any]:
    """What ``status`` shows, with the judgement ``--check`` exits by (``healthy``, and
    ``health`` saying why): the daemon's ``/readyz`` answers from this same function.
    ``store``: one already open (the daemon's); else it is opened read-only, as a probe must."""
    path, url = config.store_path(), config.store_url()
    if store is not None:
        data = collect(config, store)
    elif url is None and check_usable(path).shape is Shape.ABSENT:  # lost: refused there
        data = {"store": str(path), "repos": [], "daemon": None, "rate_limit": {},
                "digest_queues": {}, "subscriptions": [], "pending_deliveries": 0,
                "pending_by_notifier": {},
                "oldest_undelivered": {}, "failing_deliveries": []}
    else:
        store = open_store(path, url, read_only=True)
        try:
            data = collect(config, store)
        finally:
            store.close()
    _mask_errors(data, config, deps)
    data["failing_repos"] = failing_repos(data, config)
    _daemon_liveness(data, path)
    healthy, why = health(data, config, now)
    data["healthy"], data["health"] = healthy, why
    return data


def _daemon_liveness(data: dict[str, Any], path: Path) -> None:
    """Whether a daemon runs on the store: the pid and heartbeat the last one recorded stay
    in the store after it stopped (or was killed), so they are no proof that it runs."""
    daemon = data["daemon"] or {}
    leader = data.get("leader")
    if leader is not None:  # a shared store: a daemon runs while its lease is fresh
        data["daemon"] = {**daemon, "running": leader["seconds_left"] > 0}
        return
    recorded = daemon.get("pid")
    pid = running_daemon(path, recorded if isinstance(recorded, int) else None)
    if pid is not None and pid != recorded:  # started since, no job finished yet
        daemon = {"pid": pid}
    data["daemon"] = {**daemon, "running": pid is not None}


def _mask_errors(data: dict[str, Any], config: Config, deps: Dependencies) -> None:
    """Recorded errors with every secret masked, as the logs mask them: an exception's text
    may quote one (http.client names a webhook URL's path when it refuses it), and the store
    keeps what it was given. The secrets are read only when there is an error to show."""
    repos = [repo for repo in data["repos"] if repo["last_error"]]
    failing = [entry for entry in data["failing_deliveries"] if entry["error"]]
    if not repos and not failing:
        return
    masking = _masking(config, deps)
    for repo in repos:
        repo["last_error"] = masking.redact(repo["last_error"])
    for entry in failing:
        entry["error"] = masking.redact(entry["error"])


def _masking(config: Config, deps: Dependencies) -> RedactSecrets:
    """The environment's tokens and every notifier's secrets."""
    from watcher.delivery import notifier_config, secret_values
    from watcher.errors import ConfigError

    secrets = deps.get_secrets()
    values = [secret.get_secret_value() for secret in
              (secrets.github_token, secrets.slack_bot_token, secrets.slack_webhook_url,
               secrets.slack_app_token, secrets.slack_signing_secret)
              if secret is not None]
    for raw in config.notifiers:
        try:
            _, notifier = notifier_config(raw, config.source, deps.environ)
        except ConfigError:
            continue  # `config check` says what is wrong with it
        values += secret_values(notifier)
    return RedactSecrets(values)
