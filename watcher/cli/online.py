"""``config check --online``: does what the config points at answer? GitHub's ``/rate_limit``
(which costs no quota), each configured repo and organisation (one conditional request each,
with the ETag the last poll kept: a ``304`` costs no quota), and Slack's ``auth.test``; one line
each (the repos that exist in one line together), and no message is sent."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from watcher.app import Dependencies
from watcher.config import Config
from watcher.delivery import Notifier
from watcher.errors import GitHubError, RateLimitError, WatcherError
from watcher.github import GitHubClient, Pacer, RetryPolicy, why_unreachable
from watcher.present import plural
from watcher.store import Shape, Store, check_usable


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool | None  # None: not checked, and the line says why
    detail: str

    def line(self) -> str:
        verdict = {True: "ok", False: "FAILED", None: "not checked"}[self.ok]
        return f"{self.name}: {verdict}: {self.detail}"


def _core_limit(data: Any) -> str:
    core = (data.get("resources") or {}).get("core") or data.get("rate") or {}
    if not {"remaining", "limit"} <= set(core):
        return "rate limit unknown"
    reset = datetime.fromtimestamp(float(core.get("reset", 0)), UTC)
    return (f"{core['remaining']} of {core['limit']} requests left this hour (resets "
            f"{reset:%Y-%m-%dT%H:%M:%SZ})")


def check_github(config: Config, deps: Dependencies) -> Check:
    """GET /rate_limit with the token and client polls use (docs.github.com/rest/rate-limit).
    A 404 there is never "ok": a wrong github.api_url answers so, and so does a GitHub
    Enterprise Server with rate limiting turned off, which the API root tells apart."""
    github, token = config.github, deps.get_secrets().github_token
    name = f"github ({github.api_url})"
    try:
        with GitHubClient.make_http(github.api_url, token, github.timeout,
                                    transport=deps.transport) as http:
            response = http.get("/rate_limit")
            root = http.get("/") if response.status_code == 404 else None
    except httpx.RequestError as error:
        return Check(name, False, f"cannot reach it: {why_unreachable(error, github.api_url)}")
    if response.status_code == 401:
        return Check(name, False, "401 Bad credentials: GITHUB_TOKEN is invalid or expired; "
                                  "create a new one (no scopes needed for public repos)")
    if root is not None and _is_github_root(root):
        return Check(name, None, "/rate_limit answered 404 but the API root is GitHub's: a "
                                 "GitHub Enterprise Server without rate limits; the repo "
                                 "checks below test the token")
    if response.status_code != 200:
        return Check(name, False, f"/rate_limit answered HTTP {response.status_code}: "
                                  "github.api_url is not a GitHub API (GitHub.com: "
                                  "https://api.github.com; GitHub Enterprise: https://HOST/api/v3)")
    try:
        limit = _core_limit(response.json())
    except (ValueError, TypeError, AttributeError):
        return Check(name, False, "/rate_limit did not answer JSON: is github.api_url an API?")
    who = "GITHUB_TOKEN accepted" if token else "no GITHUB_TOKEN (set one for 5,000 an hour)"
    return Check(name, True, f"{who}; {limit}")


def _is_github_root(response: httpx.Response) -> bool:
    """GitHub's API root (``GET /``) lists its endpoints' URL templates."""
    try:
        body = response.json()
    except ValueError:
        return False
    return response.status_code == 200 and isinstance(body, dict) and "repository_url" in body


def _kept_etags(config: Config, urls: list[str]) -> dict[str, str]:
    """The ETags the last poll kept for these pages, read without writing to the store."""
    path = config.store_path()
    try:
        if check_usable(path).shape is not Shape.READY:
            return {}
        store = Store.open(path, read_only=True)
    except WatcherError:
        return {}  # a store that cannot be read: the requests are plain ones
    try:
        return store.etags(urls)
    finally:
        store.close()


def check_watch_list(config: Config, deps: Dependencies) -> list[Check]:
    """Each ``[[repos]]`` and ``[[orgs]]`` entry exists: a 404 names it; a repo GitHub
    answers for under another name says which."""
    github = config.github
    pacer = Pacer(github.max_requests_per_minute, clock=deps.epoch, sleep=deps.sleep)
    with GitHubClient.make_http(github.api_url, deps.get_secrets().github_token,
                                github.timeout, transport=deps.transport) as http:
        client = GitHubClient(http, api_url=github.api_url, sleep=deps.sleep, clock=deps.epoch,
                              policy=RetryPolicy(retries=0, max_rate_limit_wait=0.0),
                              pacer=pacer)
        urls = {repo.name: client.releases_url(repo.name, github.per_page)
                for repo in config.repos}
        etags = _kept_etags(config, list(urls.values()))
        checks, found = [], 0
        for label, look in [*((f"repo {name}", _repo_look(client, name, url, etags.get(url)))
                              for name, url in urls.items()),
                            *((f"org {org.name}", _org_look(client, org.name))
                              for org in config.orgs)]:
            try:
                moved = look()
            except RateLimitError as error:
                checks.append(Check(label, None, f"{error}; the rest are not checked either"))
                break
            except GitHubError as error:
                checks.append(Check(label, False, _without_label(str(error), error)))
                continue
            if moved:
                checks.append(Check(label, True, moved))
            found += 1
    if found == len(urls) + len(config.orgs):
        orgs = f" and {plural(len(config.orgs), 'org')}" if config.orgs else ""
        every = "" if len(urls) + len(config.orgs) == 1 else "all "
        checks.insert(0, Check("watch list", True,
                               f"{every}{plural(len(urls), 'repo')}{orgs} found"))
    return checks


def _without_label(message: str, error: GitHubError) -> str:
    return message.removeprefix(f"{error.repo}: ") if error.repo else message


def _repo_look(client: GitHubClient, name: str, url: str,
               etag: str | None) -> Callable[[], str | None]:
    def look() -> str | None:
        client.releases_page(name, url, etag)
        moved = client.take_move(name)
        return (None if moved is None else
                f"GitHub answers for it as {moved} (renamed or transferred): name {moved} in "
                "the config")
    return look


def _org_look(client: GitHubClient, org: str) -> Callable[[], str | None]:
    def look() -> None:
        try:
            client.list_org_repos(org, etags={}, max_pages=1)
        except GitHubError as error:
            if error.status == 404:
                raise GitHubError("no such organisation, or none of its repositories is "
                                  "visible to this token", repo=None, status=404) from None
            raise
    return look


def check_slack(config: Config, deps: Dependencies) -> Check:
    token = deps.get_secrets().slack_bot_token
    name = f"slack ({config.slack.api_url})"
    if token is None or not token.get_secret_value():
        return Check(name, None, "SLACK_BOT_TOKEN is not set and no notifier needs it")
    from watcher.app import slack_auth_test

    works, detail = slack_auth_test(config.slack.api_url, token)
    return Check(name, works, detail)


def untested(notifiers: dict[str, Notifier]) -> list[Check]:
    """Destinations only a real message would test (webhooks, apprise URLs, plugins)."""
    checks = []
    for notifier in notifiers.values():
        config = notifier.config
        if config.type in ("console", "jsonl") or getattr(config, "delivery", None) == "bot":
            continue
        checks.append(Check(f"notifier {config.name!r} ({config.type})", None,
                            "only a real message tests it; `release-watch poll --dry-run` "
                            "shows what it would get"))
    return checks


def online_checks(config: Config, deps: Dependencies,
                  notifiers: dict[str, Notifier]) -> list[Check]:
    uses_bot = any(getattr(n.config, "delivery", None) == "bot" for n in notifiers.values())
    checks = [check_github(config, deps)]
    if checks[0].ok is False:
        checks.append(Check("watch list", None, "GitHub did not answer as it should (the "
                                                "line above)"))
    else:
        checks += check_watch_list(config, deps)
    if uses_bot or deps.get_secrets().slack_bot_token is not None:
        checks.append(check_slack(config, deps))
    return checks + untested(notifiers)
