"""What the ``/release-watch`` commands need to know of the running configuration: the watched
repositories, who may change subscriptions, whether anything can be posted at all, and the
configured Slack notifiers (read-only from Slack); and how a stored subscription becomes a
Slack notifier's keys, routed like a configured one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import SecretStr

from watcher.config import Config, Secrets
from watcher.delivery import notifier_config
from watcher.errors import ConfigError
from watcher.store import Subscription
from watcher.subscribe.vocabulary import Vocabulary
from watcher.subscribe.words import subscription_words


@dataclass(frozen=True)
class Configured:
    """A ``[[notifiers]]`` Slack notifier posting to a channel: shown by ``list``, never
    changed from Slack."""

    name: str
    channel: str  # as the config names it: "#releases", "releases" or an id
    words: str  # what it posts, as a subscription's would read

    def posts_to(self, channel_id: str, channel_name: str) -> bool:
        named = self.channel.removeprefix("#")
        return named == channel_id or (bool(channel_name) and named == channel_name)


@dataclass
class CommandSettings:
    repos: list[str]
    orgs: list[str] = field(default_factory=list)
    admins: list[str] = field(default_factory=list)
    can_post: bool = True  # a bot token is set: a subscription's posts can go out
    configured: list[Configured] = field(default_factory=list)
    extra_subsystems: list[str] = field(default_factory=list)
    _vocabulary: Vocabulary | None = field(default=None, init=False, repr=False)

    @property
    def vocabulary(self) -> Vocabulary:
        if self._vocabulary is None:
            self._vocabulary = Vocabulary(self.repos, self.orgs, self.extra_subsystems)
        return self._vocabulary

    def watched(self) -> list[str]:
        return [*self.repos, *(f"every repository of {org}" for org in self.orgs)]

    def may_change(self, user: str) -> bool:
        return not self.admins or user in self.admins


def settings_from(
    config: Config, secrets: Secrets, environ: Mapping[str, str] | None = None
) -> CommandSettings:
    settings = CommandSettings(
        repos=[repo.name for repo in config.repos],
        orgs=[org.name for org in config.orgs],
        admins=list(config.slack.admins),
        can_post=secret_value(secrets.slack_bot_token) is not None,
        extra_subsystems=[
            *config.classify.headings.values(),
            *(rule.subsystem for rule in config.classify.rules),
        ],
    )
    settings.configured = _configured(config, environ, settings.watched())
    return settings


def _configured(
    config: Config, environ: Mapping[str, str] | None, watched: list[str]
) -> list[Configured]:
    found = []
    for raw in config.notifiers:
        if raw.get("type") != "slack":
            continue
        try:
            _, cfg = notifier_config(raw, config.source, environ)
        except ConfigError:
            continue  # `config check` says what is wrong with it; `run` refuses it
        channel = getattr(cfg, "channel", None)
        if getattr(cfg, "delivery", None) != "bot" or not channel:
            continue  # an incoming webhook's channel is Slack's secret, not ours
        digest = cfg.digest_schedule if cfg.mode == "digest" else None
        words = subscription_words(
            cfg.repos, cfg.subsystems, cfg.kinds, digest, watched, cfg.digest_timezone
        )
        if cfg.events is not None:
            words += f" (only {', '.join(cfg.events)} events)"
        if cfg.affects_only:
            words += " (only items that touch the configured code)"
        found.append(Configured(cfg.name, str(channel), words))
    return found


def secret_value(secret: SecretStr | None) -> str | None:
    """A secret's value; an empty one counts as unset."""
    return secret.get_secret_value() if secret is not None and secret.get_secret_value() else None


def command_problems(secrets: Secrets) -> list[str]:
    """What would keep ``/release-watch`` from working, found offline (``config check`` and
    ``run`` alike); never quoting a secret."""
    problems = []
    app_token = secret_value(secrets.slack_app_token)
    if app_token is not None and not app_token.startswith("xapp-"):
        problems.append(
            "SLACK_APP_TOKEN is not an app-level token (those start with xapp-): "
            "make one in the app's Basic Information > App-Level Tokens, with the "
            "scope connections:write"
        )
    transport = app_token or secret_value(secrets.slack_signing_secret)
    if transport and secret_value(secrets.slack_bot_token) is None:
        problems.append(
            "SLACK_APP_TOKEN or SLACK_SIGNING_SECRET is set for /release-watch, but "
            "SLACK_BOT_TOKEN is not: subscriptions post with the bot token "
            "(xoxb-…); set it too"
        )
    return problems


def notifier_table(subscription: Subscription) -> dict[str, Any]:
    """The ``[[notifiers]]`` table a subscription stands for: a bot-token Slack notifier
    posting to the channel's id, with its filters and, for a digest, its schedule (UTC)."""
    table: dict[str, Any] = {
        "name": subscription.notifier_name,
        "type": "slack",
        "delivery": "bot",
        "channel": subscription.channel,
        "mode": subscription.mode,
    }
    for key in ("repos", "subsystems", "kinds", "digest_schedule"):
        value = getattr(subscription, key)
        if value is not None:
            table[key] = value
    return table
