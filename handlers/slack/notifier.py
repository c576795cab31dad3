"""The ``slack`` notifier: Web API with a bot token (parent message + thread), or an incoming
webhook (one message). Built on slack-sdk's clients and retry handlers.

Delivery rules:
  * a delivery's messages go out in order; after each, its progress (messages sent, parent ts)
    is saved, so a retry continues with the next message instead of posting the parent again;
  * 429s wait for ``Retry-After`` (slack-sdk's RateLimitErrorRetryHandler, with our injected
    sleep), connection and 5xx errors get slack-sdk's bounded retries; what still fails is a
    transient HandlerError and the delivery stays queued for the next run;
  * errors that retrying cannot fix (a revoked token, a missing channel) are permanent
    HandlerErrors carrying the fix; they also stay queued, so fixing the cause sends them;
  * posts to one channel are paced (``min_interval``, about one a second as Slack asks).
"""

from __future__ import annotations

import logging
import random
import unicodedata
from collections.abc import Callable
from typing import Any, Literal
from urllib.error import URLError
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, model_validator
from slack_sdk import WebClient, WebhookClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry import (
    ConnectionErrorRetryHandler,
    HttpRequest,
    HttpResponse,
    RateLimitErrorRetryHandler,
    RetryHandler,
    RetryState,
)
from slack_sdk.http_retry.builtin_handlers import ServerErrorRetryHandler

from handlers.base import Notifier, NotifierConfig, Progress
from handlers.slack.blocks import SlackMessage, plan_event, plan_texts
from handlers.slack.digest_plan import plan_digest
from handlers.slack.followup import (
    FOLLOW_UPS,
    first_message,
    plan_follow_up,
    thread_key,
    updated_first_message,
)
from handlers.slack.items import Style
from handlers.slack.layout import MESSAGE_CHARS
from handlers.slack.recount import parent_counts
from watcher.config import Duration
from watcher.crashpoints import crashpoint
from watcher.delivery import Digest
from watcher.errors import HandlerError
from watcher.models import Event

logger = logging.getLogger(__name__)

# Error codes that no retry can fix, with what the operator should do
# (api.slack.com/methods/chat.postMessage#errors).
PERMANENT = {
    "invalid_auth": "the bot token is invalid or revoked: set a valid SLACK_BOT_TOKEN",
    "not_authed": "no bot token was sent: set SLACK_BOT_TOKEN",
    "account_inactive": "the bot token belongs to a deactivated app or user: reinstall the app",
    "token_revoked": "the bot token was revoked: reinstall the app and update SLACK_BOT_TOKEN",
    "token_expired": "the bot token expired: refresh it and update SLACK_BOT_TOKEN",
    "missing_scope": "the app lacks the chat:write scope: add it and reinstall",
    "no_permission": "the app may not post there: check its scopes and the channel settings",
    "channel_not_found": "the channel does not exist or the app cannot see it: check `channel`",
    "not_in_channel": "the app is not a member: /invite the app in that channel",
    "is_archived": "the channel is archived: unarchive it or change `channel`",
    "msg_too_long": "a message exceeded Slack's size limit: please report this as a bug",
    "msg_blocks_too_long": "a message's blocks were too large: lower max_message_chars",
    "invalid_blocks": "Slack rejected the message layout: please report this as a bug",
    "restricted_action": "a workspace policy blocks posting: ask a Slack admin",
}
WEBHOOK_PERMANENT = {404: "the webhook URL is unknown or was removed: create a new one",
                     403: "the webhook may not post (action_prohibited): check the app",
                     410: "the webhook's channel is archived or gone: create a new webhook",
                     400: "Slack rejected the message: please report this as a bug"}


class SlackNotifierConfig(NotifierConfig):
    channel: str | None = Field(
        default=None, description="channel name (#releases) or id, for bot-token delivery")
    delivery: Literal["bot", "webhook"] | None = Field(
        default=None, description="bot: SLACK_BOT_TOKEN, parent message and thread; webhook: "
                                  "one message per event; default: webhook if webhook_url set")
    webhook_url: SecretStr | None = Field(
        default=None, description="incoming webhook URL (else env SLACK_WEBHOOK_URL); secret")
    max_message_chars: int = Field(
        default=MESSAGE_CHARS, ge=2_000, le=40_000,
        description="block JSON per message; Slack refuses a message's blocks past about "
                    "12,000 characters (msg_blocks_too_long)")
    max_messages_per_event: int = Field(
        default=20, ge=2, le=500,
        description="messages one event may post (parent and thread replies); the items "
                    "past them are counted, with a link to the release notes")
    min_interval: Duration = Field(default=1.0, ge=0, description="pause between posts")
    retries: int = Field(default=3, ge=0, le=10, description="retries of a 429, 5xx or "
                                                             "connection error per message")
    reply_broadcast: bool = Field(
        default=False, description="a release's edit, replied in its thread, is also shown "
                                   "in the channel")
    max_retry_wait: Duration = Field(
        default=120.0, ge=0, description="longest Retry-After to wait for; longer: next run")

    @model_validator(mode="after")
    def _delivery_needs(self) -> SlackNotifierConfig:
        if self.delivery is None:
            object.__setattr__(self, "delivery", "webhook" if self.webhook_url else "bot")
        if self.delivery == "bot" and not self.channel:
            raise ValueError("a bot-token Slack notifier needs a channel")
        return self


_LOOPBACK = {"localhost", "127.0.0.1", "::1"}
# Controls and invisible format characters (bidi overrides, zero-width spaces): Cc and Cf.
_CONTROL_CATEGORIES = {"Cc", "Cf"}


def webhook_url_problem(url: str, what: str) -> str | None:
    """Why ``url`` cannot be an incoming webhook, without repeating it (it is the secret).
    Plain http is allowed only to this machine (a local relay, the tests' fake Slack).

    A space, tab, line break or other control character anywhere in it (a stray one from
    copying, a trailing newline from a file) is refused: no URL holds one raw (RFC 3986 §2),
    and an HTTP library that refuses it quotes the URL's secret path in its error."""
    if any(char.isspace() or unicodedata.category(char) in _CONTROL_CATEGORIES for char in url):
        return (f"{what} contains a space, tab, line break or control character: set it to the "
                "URL exactly as Slack shows it")
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return f"{what} is not a URL"
    if parts.scheme == "https" and host:
        return None
    if parts.scheme == "http" and host in _LOOPBACK:
        return None
    return f"{what} is not an https:// URL (Slack's look like https://hooks.slack.com/services/...)"


_GONE = {"thread_not_found", "message_not_found", "cant_update_message"}


class _ThreadGone(Exception):
    """The release's first message is no longer there to reply to or update."""


def error_code(error: SlackApiError) -> str:
    """Slack's ``error`` field (``channel_not_found``, ``invalid_auth``…), or "" if none."""
    return str(error.response.get("error", "")) if error.response is not None else ""


class _PacedRateLimit(RateLimitErrorRetryHandler):
    """slack-sdk's 429 handler, with an injected sleep and a ceiling on the wait."""

    def __init__(self, sleep: Callable[[float], None], max_wait: float, retries: int) -> None:
        super().__init__(max_retry_count=retries)
        self.sleep = sleep
        self.max_wait = max_wait

    @staticmethod
    def _retry_after(response: HttpResponse) -> float:
        for name, values in response.headers.items():
            if name.lower() == "retry-after" and values and str(values[0]).strip().isdigit():
                return float(values[0])
        return 1.0 + random.random()

    def _can_retry(self, *, state: RetryState, request: HttpRequest,
                   response: HttpResponse | None = None, error: Exception | None = None) -> bool:
        return (super()._can_retry(state=state, request=request, response=response, error=error)
                and response is not None and self._retry_after(response) <= self.max_wait)

    def prepare_for_next_attempt(self, *, state: RetryState, request: HttpRequest,
                                 response: HttpResponse | None = None,
                                 error: Exception | None = None) -> None:
        assert response is not None
        state.next_attempt_requested = True
        self.sleep(self._retry_after(response))
        state.increment_current_attempt()


def _with_sleep(handler_class: type[RetryHandler], sleep: Callable[[float], None],
                retries: int) -> RetryHandler:
    """A slack-sdk retry handler whose backoff sleeps through ``sleep`` (tests never wait)."""

    class Sleeping(handler_class):  # type: ignore[misc, valid-type]
        def prepare_for_next_attempt(self, *, state: RetryState, request: HttpRequest,
                                     response: HttpResponse | None = None,
                                     error: Exception | None = None) -> None:
            state.next_attempt_requested = True
            sleep(self.interval_calculator.calculate_sleep_duration(state.current_attempt))
            state.increment_current_attempt()

    return Sleeping(max_retry_count=retries)


class SlackNotifier(Notifier):
    Config = SlackNotifierConfig

    def __init__(self, config: NotifierConfig, context: Any) -> None:
        super().__init__(config, context)
        self._client: WebClient | WebhookClient | None = None
        self._last_post = float("-inf")

    @property
    def settings(self) -> SlackNotifierConfig:
        assert isinstance(self.config, SlackNotifierConfig)
        return self.config

    @property
    def threads(self) -> bool:
        return self.settings.delivery == "bot"

    def _retry_handlers(self) -> list[Any]:
        sleep, retries = self.context.sleep, self.settings.retries
        return [_PacedRateLimit(sleep, self.settings.max_retry_wait, retries),
                _with_sleep(ConnectionErrorRetryHandler, sleep, retries),
                _with_sleep(ServerErrorRetryHandler, sleep, retries)]

    def _web(self) -> WebClient:
        if self._client is None:
            token = self.context.secrets.slack_bot_token
            if token is None or not token.get_secret_value():
                raise HandlerError(f"slack notifier {self.name!r}: SLACK_BOT_TOKEN is not set",
                                   notifier=self.name, permanent=True)
            self._client = WebClient(token=token.get_secret_value(),
                                     base_url=self.context.slack_api_url, timeout=30,
                                     retry_handlers=self._retry_handlers())
        assert isinstance(self._client, WebClient)
        return self._client

    def _webhook(self) -> WebhookClient:
        if self._client is None:
            url = self.settings.webhook_url or self.context.secrets.slack_webhook_url
            if url is None or not url.get_secret_value():
                raise HandlerError(f"slack notifier {self.name!r}: no webhook_url and "
                                   "SLACK_WEBHOOK_URL is not set", notifier=self.name,
                                   permanent=True)
            what = (self.config.secret_sources.get("webhook_url", "webhook_url")
                    if self.settings.webhook_url else "SLACK_WEBHOOK_URL")
            if (problem := webhook_url_problem(url.get_secret_value(), what)) is not None:
                # `poll` does not run `config check` first: refuse here too, before slack-sdk
                # would quote the URL in an error that is logged and stored.
                raise HandlerError(f"slack notifier {self.name!r}: {problem}",
                                   notifier=self.name, permanent=True)
            self._client = WebhookClient(url.get_secret_value(), timeout=30,
                                         retry_handlers=self._retry_handlers())
        assert isinstance(self._client, WebhookClient)
        return self._client

    # ---- the Notifier interface ------------------------------------------------------------
    def problems(self) -> list[str]:
        problems = super().problems()
        if self.settings.delivery == "bot":
            token = self.context.secrets.slack_bot_token
            if token is None or not token.get_secret_value():
                problems.append('SLACK_BOT_TOKEN is not set (a bot token with chat:write; or set '
                                'delivery = "webhook" and a webhook URL)')
            return problems
        url = self.settings.webhook_url
        what = self.config.secret_sources.get("webhook_url", "webhook_url")
        if url is None:
            url, what = self.context.secrets.slack_webhook_url, "SLACK_WEBHOOK_URL"
        if url is None or not url.get_secret_value():
            problems.append("no webhook URL: set webhook_url or SLACK_WEBHOOK_URL")
        elif (problem := webhook_url_problem(url.get_secret_value(), what)) is not None:
            problems.append(problem)
        return problems

    def plan(self, event: Event) -> list[SlackMessage]:
        return plan_event(event, threads=self.threads,
                          max_chars=self.settings.max_message_chars,
                          threshold=self.config.min_confidence,
                          code_link=self.context.code_link,
                          max_messages=self.settings.max_messages_per_event)

    def send(self, event: Event, progress: Progress) -> None:
        """A release's first message in the channel is remembered; what happens to the
        release later (an edit, a release, a deletion) is a reply in that message's thread,
        and the message is updated. Without a thread (webhook, or the first message unknown)
        an event is posted on its own."""
        key = thread_key(event)
        first = progress.recall(key) if self.threads else None
        if first and event.event in FOLLOW_UPS:
            try:
                self._follow_up(event, first, progress)
                return
            except _ThreadGone:
                logger.info("%s: the first message of %s %s is gone; posting on its own",
                            self.name, event.repo, event.tag)
                progress.remember(key, {})
                progress.save(sent=0)
        counts = parent_counts(event, Style(self.config.min_confidence, event.repo,
                                            self.context.code_link))
        self._post_all(self.plan(event), progress, remember=key if self.threads else None,
                       counts=counts)

    def _follow_up(self, event: Event, first: dict[str, Any], progress: Progress) -> None:
        replies = plan_follow_up(event, max_chars=self.settings.max_message_chars,
                                 threshold=self.config.min_confidence,
                                 code_link=self.context.code_link,
                                 max_messages=self.settings.max_messages_per_event)
        for index in range(int(progress.state.get("sent", 0)), len(replies)):
            self._pace()
            self._post_web(replies[index], first["channel"], first["ts"],
                           broadcast=index == 0 and self.settings.reply_broadcast)
            crashpoint("slack:posted")  # the documented duplicate window
            progress.save(sent=index + 1)
        if not progress.state.get("first_updated"):
            updated = updated_first_message(first, event,
                                            max_chars=self.settings.max_message_chars,
                                            threshold=self.config.min_confidence,
                                            code_link=self.context.code_link)
            self._update_web(first["channel"], first["ts"], updated)
            progress.remember(thread_key(event), updated)
            progress.save(first_updated=True)

    def send_digest(self, digest: Digest, progress: Progress) -> None:
        self._post_all(self._plan_digest(digest), progress)

    def preview(self, event: Event) -> str:
        return plan_texts(self.plan(event))

    def preview_digest(self, digest: Digest) -> str:
        return plan_texts(self._plan_digest(digest))

    def _plan_digest(self, digest: Digest) -> list[SlackMessage]:
        return plan_digest(digest, threads=self.threads,
                           max_chars=self.settings.max_message_chars,
                           threshold=self.config.min_confidence,
                           code_link=self.context.code_link)

    # ---- posting ---------------------------------------------------------------------------
    def _pace(self) -> None:
        """Called before each post: waits its turn, and starts none once the run is stopping."""
        self._stop_if_stopping()
        wait = self.settings.min_interval - (self.context.monotonic() - self._last_post)
        if wait > 0:
            self.context.sleep(wait)
            self._stop_if_stopping()
        self._last_post = self.context.monotonic()

    def _stop_if_stopping(self) -> None:
        # A retryable error: the delivery stays queued with what was sent saved, and the next
        # run resumes after it, where a post started now could be cut off by the shutdown
        # timeout and be sent again.
        if self.context.stopping():
            raise HandlerError(f"slack notifier {self.name!r}: stopping; the rest is sent "
                               "on the next run", notifier=self.name)

    def _post_all(self, messages: list[SlackMessage], progress: Progress, *,
                  remember: str | None = None, counts: dict[str, Any] | None = None) -> None:
        """``remember``: where to keep the first message, for the release's follow-ups, with
        ``counts``, what it counted (so they can keep it current)."""
        sent = int(progress.state.get("sent", 0))
        for index in range(sent, len(messages)):
            message = messages[index]
            self._pace()
            saved: dict[str, Any] = {"sent": index + 1}
            if self.threads:
                parent = progress.state.get("parent_ts")
                if message.in_thread and parent is None:
                    raise HandlerError(f"slack notifier {self.name!r}: thread reply without a "
                                       "parent message", notifier=self.name)
                channel = progress.state.get("channel_id") or self.settings.channel
                ts, channel_id = self._post_web(message, channel,
                                                parent if message.in_thread else None)
                if not message.in_thread:
                    saved |= {"parent_ts": ts, "channel_id": channel_id}
                    if remember is not None:
                        progress.remember(remember, first_message(channel_id, ts, message,
                                                                  counts))
            else:
                self._post_webhook(message)
            crashpoint("slack:posted")  # the documented duplicate window
            progress.save(**saved)  # one write: what was sent and where its thread is
            crashpoint("slack:progress-saved")

    def _post_web(self, message: SlackMessage, channel: str | None, thread_ts: str | None,
                  *, broadcast: bool = False) -> tuple[str, str]:
        try:
            response = self._web().chat_postMessage(
                channel=channel or "", text=message.text, blocks=message.blocks,
                thread_ts=thread_ts, reply_broadcast=broadcast or None, unfurl_links=False,
                unfurl_media=False)
        except SlackApiError as error:
            if thread_ts is not None and error_code(error) in _GONE:
                raise _ThreadGone from None
            raise self._api_error(error) from None
        except (SlackClientError, URLError, OSError) as error:
            raise self._unreachable(f"slack notifier {self.name!r}", error) from None
        return str(response["ts"]), str(response.get("channel") or channel)

    def _update_web(self, channel: str, ts: str, first: dict[str, Any]) -> None:
        """Rewrite the release's first message with its new status line (chat.update)."""
        try:
            self._pace()
            self._web().chat_update(channel=channel, ts=ts, text=first.get("text") or "",
                                    blocks=first.get("blocks"))
        except SlackApiError as error:
            if error_code(error) in _GONE:
                raise _ThreadGone from None
            raise self._api_error(error) from None
        except (SlackClientError, URLError, OSError) as error:
            raise self._unreachable(f"slack notifier {self.name!r}", error) from None

    def _unreachable(self, where: str, error: Exception) -> HandlerError:
        """A connection that failed, retries spent. The error names only its type: the text
        of a webhook's error can hold its URL, which is the secret."""
        return HandlerError(f"{where}: Slack unreachable ({type(error).__name__})",
                            notifier=self.name)

    def _api_error(self, error: SlackApiError) -> HandlerError:
        code = error_code(error)
        status = error.response.status_code if error.response is not None else 0
        where = f"slack notifier {self.name!r} ({self.settings.channel})"
        if code in PERMANENT:
            return HandlerError(f"{where}: {code}: {PERMANENT[code]}", notifier=self.name,
                                permanent=True)
        return HandlerError(f"{where}: Slack answered {code or f'HTTP {status}'}",
                            notifier=self.name)

    def _post_webhook(self, message: SlackMessage) -> None:
        where = f"slack notifier {self.name!r} (webhook)"
        try:
            response = self._webhook().send(text=message.text, blocks=message.blocks,
                                            unfurl_links=False, unfurl_media=False)
        except (SlackClientError, URLError, OSError) as error:
            raise self._unreachable(where, error) from None
        if response.status_code == 200:
            return
        body = (response.body or "").strip()[:80]
        if response.status_code in WEBHOOK_PERMANENT:
            raise HandlerError(f"{where}: HTTP {response.status_code} {body}: "
                               f"{WEBHOOK_PERMANENT[response.status_code]}", notifier=self.name,
                               permanent=True)
        raise HandlerError(f"{where}: HTTP {response.status_code} {body}", notifier=self.name)

    def close(self) -> None:
        self._client = None
