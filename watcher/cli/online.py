"""``config check --online``: does what the config points at answer? GitHub's ``/rate_limit``
(which costs no quota) and Slack's ``auth.test``; one line each, and no message is sent."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from handlers.base import Notifier
from watcher.app import Dependencies
from watcher.config import Config
from watcher.github import GitHubClient


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
    """GET /rate_limit with the token and client polls use (docs.github.com/rest/rate-limit)."""
    github, token = config.github, deps.get_secrets().github_token
    name = f"github ({github.api_url})"
    try:
        with GitHubClient.make_http(github.api_url, token, github.timeout,
                                    transport=deps.transport) as http:
            response = http.get("/rate_limit")
    except httpx.HTTPError as error:
        return Check(name, False, f"cannot reach it ({type(error).__name__}): check "
                                  "github.api_url and the network")
    if response.status_code == 401:
        return Check(name, False, "401 Bad credentials: GITHUB_TOKEN is invalid or expired; "
                                  "create a new one (no scopes needed for public repos)")
    if response.status_code == 404 and token is not None:
        # GitHub Enterprise Server answers 404 when it has rate limiting turned off.
        return Check(name, True, "token accepted; this server has no rate limit")
    if response.status_code != 200:
        return Check(name, False, f"/rate_limit answered HTTP {response.status_code}: check "
                                  "github.api_url (GitHub Enterprise: https://HOST/api/v3)")
    try:
        limit = _core_limit(response.json())
    except (ValueError, TypeError, AttributeError):
        return Check(name, False, "/rate_limit did not answer JSON: is github.api_url an API?")
    who = "GITHUB_TOKEN accepted" if token else "no GITHUB_TOKEN (set one for 5,000 an hour)"
    return Check(name, True, f"{who}; {limit}")


def check_slack(config: Config, deps: Dependencies) -> Check:
    token = deps.get_secrets().slack_bot_token
    name = f"slack ({config.slack.api_url})"
    if token is None or not token.get_secret_value():
        return Check(name, None, "SLACK_BOT_TOKEN is not set and no notifier needs it")
    from handlers.slack import auth_test

    works, detail = auth_test(config.slack.api_url, token)
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
    if uses_bot or deps.get_secrets().slack_bot_token is not None:
        checks.append(check_slack(config, deps))
    return checks + untested(notifiers)
