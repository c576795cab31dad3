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
from typing import Any, Literal
from urllib.error import URLError

from pydantic import Field, SecretStr, model_validator
from slack_sdk import WebClient, WebhookClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry import (
    ConnectionErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_handlers import ServerErrorRetryHandler

from handlers.slack.answers import (
    GONE,
    PERMANENT,
    WEBHOOK_PERMANENT,
    ThreadGone,
    error_code,
    webhook_url_problem,
)
from handlers.slack.buttons import ButtonRef
from handlers.slack.compose import (
    FOLLOW_UPS,
    Limits,
    event_messages,
    first_message,
    follow_up_messages,
    redrawn_first,
    thread_key,
)
from handlers.slack.digest_plan import DIGEST_MAX_REPOS, plan_digest
from handlers.slack.items import ANY_CODEBASE, Style
from handlers.slack.layout import MESSAGE_CHARS, SlackMessage, plan_texts
from handlers.slack.retries import PacedRateLimit, with_sleep
from watcher.config import Duration
from watcher.crashpoints import crashpoint
from watcher.delivery import Digest, Notifier, NotifierConfig, Progress
from watcher.errors import HandlerError
from watcher.logs import RedactSecrets
from watcher.models import Event

logger = logging.getLogger(__name__)

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
    digest_max_repos: int = Field(
        default=DIGEST_MAX_REPOS, ge=1, le=1_000,
        description="repositories a digest gives a parent message and thread of their own "
                    "(the most important); the others share one last message, a line each")
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
        return [PacedRateLimit(sleep, self.settings.max_retry_wait, retries),
                with_sleep(ConnectionErrorRetryHandler, sleep, retries),
                with_sleep(ServerErrorRetryHandler, sleep, retries)]

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

    def _limits(self) -> Limits:
        return Limits(self.threads, self.settings.max_message_chars,
                      self.settings.max_messages_per_event)

    def _style(self, event: Event) -> Style:
        """Bot-token messages carry buttons (``buttons``); a webhook's cannot take a click."""
        ref = ButtonRef(self.name, thread_key(event)) if self.threads else None
        if ref is not None and not ref.fits():
            ref = None  # a notifier name past 200 characters: its messages take no clicks
        return Style(self.config.min_confidence, event.repo, self._link_templates(),
                     buttons=ref, quiet=self.config.quiet)

    def _link_templates(self) -> dict[str, str]:
        """Each codebase's link template by its name, as ``HandlerContext.link_template``
        answers: a context that names no codebase links every use through ``code_link``."""
        if self.context.code_links or self.context.code_link is None:
            return dict(self.context.code_links)
        return {ANY_CODEBASE: self.context.code_link}

    def plan(self, event: Event) -> list[SlackMessage]:
        return event_messages(event, self._limits(), self._style(event))

    def send(self, event: Event, progress: Progress) -> None:
        """A release's first message in the channel is remembered; what happens to the
        release later (an edit, a release, a deletion) is a reply in that message's thread,
        and the message is redrawn. Without a thread (webhook, or the first message unknown)
        an event is posted on its own."""
        key = thread_key(event)
        first = progress.recall(key) if self.threads else None
        if first and event.event in FOLLOW_UPS:
            try:
                self._follow_up(event, first, progress)
                return
            except ThreadGone:
                logger.info("%s: the first message of %s %s is gone; posting on its own",
                            self.name, event.repo, event.tag)
                progress.remember(key, {})
                progress.save(sent=0)
        self._post_all(self.plan(event), progress,
                       remember=(key, event) if self.threads else None)

    def _follow_up(self, event: Event, first: dict[str, Any], progress: Progress) -> None:
        replies = follow_up_messages(event, self._limits(), self._style(event))
        for index in range(int(progress.state.get("sent", 0)), len(replies)):
            self._pace()
            self._post_web(replies[index], first["channel"], first["ts"],
                           broadcast=index == 0 and self.settings.reply_broadcast)
            crashpoint("slack:posted")  # the documented duplicate window
            progress.save(sent=index + 1)
        if not progress.state.get("first_updated"):
            updated = redrawn_first(first, event, self._limits(), self._style(event))
            self._update_web(first["channel"], first["ts"], updated)
            progress.remember(thread_key(event), updated)
            progress.save(first_updated=True)

    def send_digest(self, digest: Digest, progress: Progress) -> None:
        """A parent message per repository, each followed by its thread: ``_post_all`` saves
        after every message how many went out and the last parent's thread, so a retry
        resumes after the last message sent, under the right parent."""
        self._post_all(self._plan_digest(digest), progress)

    def preview(self, event: Event) -> str:
        return plan_texts(self.plan(event))

    def preview_digest(self, digest: Digest) -> str:
        return plan_texts(self._plan_digest(digest))

    def _plan_digest(self, digest: Digest) -> list[SlackMessage]:
        return plan_digest(digest, threads=self.threads,
                           max_chars=self.settings.max_message_chars,
                           threshold=self.config.min_confidence,
                           code_links=self._link_templates(),
                           max_repos=self.settings.digest_max_repos)

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
                  remember: tuple[str, Event] | None = None) -> None:
        """``remember``: where to keep the first message, for the release's follow-ups, and
        the event it announces."""
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
                        key, event = remember
                        progress.remember(key, first_message(channel_id, ts, message, event))
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
        except (SlackClientError, URLError, OSError) as error:
            failure = self._failure(error, thread=thread_ts is not None)
        else:
            return str(response["ts"]), str(response.get("channel") or channel)
        raise failure

    def _update_web(self, channel: str, ts: str, first: dict[str, Any]) -> None:
        """Rewrite the release's first message, drawn again (chat.update)."""
        self._pace()
        try:
            self._web().chat_update(channel=channel, ts=ts, text=first.get("text") or "",
                                    blocks=first.get("blocks"))
        except (SlackClientError, URLError, OSError) as error:
            failure = self._failure(error, thread=True)
        else:
            return
        raise failure

    def _failure(self, error: Exception, *, thread: bool) -> Exception:
        """What a failed Web API call raises: ``ThreadGone`` (``thread``: replying or updating
        in a release's thread, and its first message is gone), else a HandlerError. Raised by
        the caller after its ``except``, so that slack-sdk's error, whose text quotes Slack's
        whole answer (a token echoed in it too), is not kept as the HandlerError's context."""
        if not isinstance(error, SlackApiError):
            return self._unreachable(f"slack notifier {self.name!r}", error)
        if thread and error_code(error) in GONE:
            return ThreadGone()
        return self._api_error(error)

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
        # Quoted masked (a proxy's error page may quote the URL, the secret) before it is cut.
        url = self._webhook().url
        body = RedactSecrets([url]).redact((response.body or "").strip())[:80]
        if response.status_code in WEBHOOK_PERMANENT:
            raise HandlerError(f"{where}: HTTP {response.status_code} {body}: "
                               f"{WEBHOOK_PERMANENT[response.status_code]}", notifier=self.name,
                               permanent=True)
        raise HandlerError(f"{where}: HTTP {response.status_code} {body}", notifier=self.name)

    def close(self) -> None:
        self._client = None
