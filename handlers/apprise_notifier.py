"""The ``apprise`` notifier: e-mail, Discord, Microsoft Teams, Matrix, Telegram and about a
hundred more services through the apprise library, one apprise URL per destination
(appriseit.com/services lists the URL of each service).

It sends the console notifier's summaries (``handlers.console``): the first line as the title,
the rest as markdown or plain text. Each URL is a destination of its own: every URL is tried,
the ones that got the message are saved in the delivery's progress, and a retry sends only to
the ones still missing. apprise is an optional extra (``pip install 'release-watch[apprise]'``),
imported only when such a notifier is configured.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr

from handlers.base import Notifier, NotifierConfig, Progress, secret_field
from handlers.summary_text import title_and_body
from watcher.delivery import Digest
from watcher.errors import HandlerError
from watcher.logs import register_secrets
from watcher.models import Event
from watcher.present import format_digest, format_event

INSTALL = "pip install 'release-watch[apprise]'"
# "... error=404." is how apprise's plugins report an HTTP status (e.g. plugins/discord.py).
_HTTP_STATUS = re.compile(r"error=(\d{3})\b")
# Statuses that say the URL itself is wrong (unknown webhook, bad credentials): no retry helps.
_PERMANENT_STATUS = {400, 401, 403, 404, 410}


def apprise_library(notifier: str) -> ModuleType:
    try:
        import apprise
    except ImportError:
        raise HandlerError(f"the apprise notifier needs the apprise library: {INSTALL}",
                           notifier=notifier, permanent=True) from None
    return apprise


class AppriseConfig(NotifierConfig):
    urls: list[SecretStr] | None = secret_field(
        env="APPRISE_URLS", required=True,
        description="apprise URLs, e.g. discord://ID/TOKEN, mailtos://USER:PASSWORD@HOST, "
                    "msteams://..., tgram://...; from the environment: separated by spaces")
    format: Literal["markdown", "text"] = Field(
        default="markdown", description="body as markdown (converted for services that take "
                                        "HTML or text) or plain text")


class _Captured(logging.Handler):
    """apprise's own warnings during one call: the only place it says why a send failed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _apprise_warnings() -> Iterator[_Captured]:
    captured = _Captured()
    logger = logging.getLogger("apprise")
    logger.addHandler(captured)
    try:
        yield captured
    finally:
        logger.removeHandler(captured)


def _scheme(url: str) -> str:
    return url.split("://", 1)[0][:20] if "://" in url else "no scheme"


def _secret_parts(url: str) -> list[str]:
    """The URL and every longer part of it (tokens, passwords, ids), longest first: a plugin
    names them on their own (``tgram://BOT_TOKEN/CHAT_ID`` is posted to
    ``https://api.telegram.org/botBOT_TOKEN/...``)."""
    try:
        password = urlsplit(url).password or ""
    except ValueError:
        password = ""
    pieces = [url, password, *re.split(r"[/?&=:@]", url.split("://", 1)[-1])]
    return sorted({p for p in pieces if len(p) >= 6}, key=len, reverse=True)


def _mask(text: str, url: str) -> str:
    """``text`` with the URL and every longer part of it replaced."""
    for piece in _secret_parts(url):
        text = text.replace(piece, "***")
    return text


def _register_secrets(urls: list[str]) -> None:
    """Mask the URLs' parts in every log line: with --verbose apprise's own debug lines (and
    urllib3's) show the address a plugin posts to, built from them, never the URL as given."""
    register_secrets(part for url in urls for part in _secret_parts(url))


class AppriseNotifier(Notifier):
    Config = AppriseConfig

    @property
    def settings(self) -> AppriseConfig:
        assert isinstance(self.config, AppriseConfig)
        return self.config

    def _urls(self) -> list[str]:
        urls = [url.get_secret_value() for url in self.settings.urls or []]
        _register_secrets(urls)  # before apprise sees them, whichever path reads them first
        return urls

    def problems(self) -> list[str]:
        problems = super().problems()
        try:
            apprise = apprise_library(self.name)
        except HandlerError as error:
            return [*problems, str(error)]
        for index, url in enumerate(self._urls()):
            if apprise.Apprise.instantiate(url) is None:
                problems.append(f"urls[{index}] ({_scheme(url)}://...) is not a URL apprise "
                                "understands (appriseit.com/services shows each service's)")
        return problems

    def send(self, event: Event, progress: Progress) -> None:
        self._deliver(format_event(event), progress)

    def send_digest(self, digest: Digest, progress: Progress) -> None:
        self._deliver(format_digest(digest), progress)

    def _deliver(self, summary: str, progress: Progress) -> None:
        title, body = title_and_body(summary, markdown=self.settings.format == "markdown")
        done = set(progress.state.get("urls_sent", []))
        failures: list[HandlerError] = []
        for index, url in enumerate(self._urls()):
            if index in done:
                continue
            try:
                self._notify(index, url, title, body)
            except HandlerError as error:
                failures.append(error)
                continue
            done.add(index)
            progress.save(urls_sent=sorted(done))
        if failures:
            permanent = all(error.permanent for error in failures)
            raise HandlerError("; ".join(str(error) for error in failures), notifier=self.name,
                               permanent=permanent)

    def _notify(self, index: int, url: str, title: str, body: str) -> None:
        apprise = apprise_library(self.name)
        where = f"apprise notifier {self.name!r}: urls[{index}]"
        service = apprise.Apprise.instantiate(url)
        if service is None:
            raise HandlerError(f"{where} ({_scheme(url)}://...) is not a URL apprise understands",
                               notifier=self.name, permanent=True)
        if "overflow=" not in url:
            # A summary longer than a service takes (Discord: 2,000 characters) is cut, most
            # important first, instead of being refused for ever.
            service.overflow_mode = apprise.OverflowMode.TRUNCATE
        destination = apprise.Apprise()
        destination.add(service)
        body_format = (apprise.NotifyFormat.MARKDOWN if self.settings.format == "markdown"
                       else apprise.NotifyFormat.TEXT)
        with _apprise_warnings() as captured:
            try:
                sent = destination.notify(body=body, title=title, body_format=body_format)
            except Exception as error:  # a plugin's bug must not stop the other notifiers
                captured.messages.append(f"apprise raised {type(error).__name__}")
                sent = False
        if not sent:
            raise self._failure(where, service.service_name, url, captured.messages)

    def _failure(self, where: str, service: str, url: str, messages: list[str]) -> HandlerError:
        reason = _mask(messages[-1], url) if messages else "no reason given"
        status = _HTTP_STATUS.search(" ".join(messages))
        permanent = status is not None and int(status.group(1)) in _PERMANENT_STATUS
        return HandlerError(f"{where} ({service}) failed: {reason}", notifier=self.name,
                            permanent=permanent)
