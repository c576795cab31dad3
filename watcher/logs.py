"""Logging setup: plain text or JSON lines on stderr, with every known secret masked, and the
credentials any URL carries (``user:pass@``, ``?token=``)."""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from urllib.parse import quote, urlsplit

from watcher.untrusted import escape_controls

MASK = "***"
_SHORTEST = 4  # a secret shorter than this is masked nowhere: it would mask ordinary words
_FRAGMENT = 8  # a piece of a secret this long identifies it on its own
# What an HTTP client leaves unencoded in a URL it prints (RFC 3986 §2.2 reserved, §2.3
# unreserved, and "%"), as requests' requote_uri does.
_URL_SAFE = "/:?#[]@!$&'()*+,;=%~"


# Credentials a URL carries whatever the configuration says of them: the user information
# before the host (RFC 3986 §3.2.1, ``https://user:pass@host``), and the query parameters
# services take tokens in (``?token=``, ``&access_token=``, ``api_key``, ``sig``...).
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@]+@")
_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:[a-z0-9_.-]*[_.-])?(?:access_?token|token|api_?key|apikey|key|secret|"
    r"password|passwd|pwd|auth|sig|signature|credentials?)=)[^&#\s\"'<>]+")


def mask_url_credentials(text: str) -> str:
    """``text`` with every URL's credentials shown as ``***``: its user and password
    (``https://***@host/``) and the values of its token-like query parameters (``?token=***``),
    wherever a URL sits in the text (a config value, an error quoting a request)."""
    if "://" not in text and "=" not in text:
        return text
    return _QUERY_SECRET.sub(rf"\1{MASK}", _USERINFO.sub(rf"\1{MASK}@", text))


def _request_target(url: str) -> str:
    """What follows the host of ``url``: its path, query and fragment."""
    rest = url.split("://", 1)[1]
    starts = [index for index in (rest.find(mark) for mark in "/?#") if index >= 0]
    return rest[min(starts):] if starts else ""


def secret_forms(secret: str) -> set[str]:
    """Every form in which ``secret`` may show up in a message. The whole, and each
    whitespace-separated fragment long enough to identify it: a URL with a stray space or tab
    is printed in halves, or repr'd with its tab as ``\\t``. For a URL, also what an HTTP client
    prints of it (the request target, ``/services/T…/B…/…``, as is and percent-encoded) and its
    password."""
    if len(secret.strip()) < _SHORTEST:
        return set()
    forms, pieces = {secret, secret.strip()}, [secret]
    if "://" in secret:
        try:
            password = urlsplit(secret.strip()).password or ""
        except ValueError:
            password = ""
        pieces += [_request_target(secret.strip()), password]
    for piece in pieces:
        for variant in (piece, quote(piece, safe=_URL_SAFE)):
            if len(variant) >= _FRAGMENT:
                forms.add(variant)
            forms.update(part for part in variant.split() if len(part) >= _FRAGMENT)
    return {form for form in forms if len(form) >= _SHORTEST}


class RedactSecrets(logging.Filter):
    """Replaces every form of a secret (``secret_forms``) that slipped into a record with
    ``***``: in its message and arguments, its traceback and its stack. It sits on the handler,
    not on a logger, so it sees the records of every logger that reach the handler (apprise's,
    slack-sdk's, urllib3's), not only ours."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets: list[str] = []
        self.add(secrets)

    def add(self, values: Iterable[str]) -> None:
        forms = set(self.secrets)
        for value in values:
            forms |= secret_forms(value)
        # Longest first: a whole secret goes before its fragments can cut it into pieces.
        self.secrets = sorted(forms, key=lambda form: (-len(form), form))

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return mask_url_credentials(text)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if self.secrets or mask_url_credentials(message) != message:
            record.msg, record.args = self.redact(message), None
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = self.redact(record.exc_text)
            if record.stack_info:
                record.stack_info = self.redact(record.stack_info)
        return True


def _iso_seconds(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _exception_text(formatter: logging.Formatter, record: logging.LogRecord) -> str:
    """The traceback as ``RedactSecrets`` left it (masked), else as the formatter writes it."""
    assert record.exc_info is not None
    return record.exc_text or formatter.formatException(record.exc_info)


class TextFormatter(logging.Formatter):
    """``2026-11-30T13:00:00Z warning watcher.delivery.deliver: message``: UTC, ISO 8601, so
    lines from journald, docker and a laptop sort and compare alike. One event is one line: a
    release tag holding a line break or an escape sequence shows them escaped, so it can neither
    forge a log line nor drive a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        line = (f"{_iso_seconds(record.created)} {record.levelname.lower()} {record.name}: "
                f"{escape_controls(record.getMessage())}")
        if record.exc_info:  # the traceback keeps its lines, not their controls
            line += "\n" + "\n".join(escape_controls(part) for part in
                                      _exception_text(self, record).split("\n"))
        return line


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {"time": datetime.fromtimestamp(record.created, UTC).isoformat(),
                 "level": record.levelname.lower(), "logger": record.name,
                 "message": escape_controls(record.getMessage())}
        if record.exc_info:
            entry["exception"] = _exception_text(self, record)
        return json.dumps(entry, ensure_ascii=False)


class QuietRetries(logging.Filter):
    """slack-sdk logs "Failed to send a request" at ERROR before its retry handlers try again,
    so a request that then succeeded would read as a failure. Ours is the word on whether a
    delivery failed (after the retries); slack-sdk's own errors are shown with --verbose."""

    def __init__(self, verbose: bool) -> None:
        super().__init__()
        self.verbose = verbose

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("slack_sdk") and record.levelno >= logging.ERROR:
            record.levelno, record.levelname = logging.INFO, "INFO"
            return self.verbose
        return True


def setup_logging(*, verbose: bool, log_format: str, secrets: Iterable[str] = ()) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter())
    handler.addFilter(RedactSecrets(secrets))
    handler.addFilter(QuietRetries(verbose))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    # httpx logs each request at INFO, with URLs; keep that for --verbose only.
    logging.getLogger("httpx").setLevel(logging.INFO if verbose else logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)
    # APScheduler narrates every job run at INFO; our jobs log what matters themselves.
    logging.getLogger("apscheduler").setLevel(logging.DEBUG if verbose else logging.WARNING)
    # apprise says why a send failed as a warning; the apprise notifier puts that reason into
    # its own error, so apprise's lines are shown on their own only with --verbose.
    logging.getLogger("apprise").propagate = verbose
    # markdown-it narrates every block rule it tries: thousands of lines per release.
    logging.getLogger("markdown_it").setLevel(logging.INFO)
    # slack-sdk's DEBUG lines carry whole payloads and an incoming webhook's URL (a secret).
    logging.getLogger("slack_sdk").setLevel(logging.INFO)


def register_secrets(values: Iterable[str]) -> None:
    """Mask more secrets from now on, e.g. webhook URLs read from the config file."""
    values = list(values)
    for handler in logging.getLogger().handlers:
        for log_filter in handler.filters:
            if isinstance(log_filter, RedactSecrets):
                log_filter.add(values)


def redact(text: str) -> str:
    """``text`` with every secret registered for the logs masked: for what is printed without
    going through a log record (an error on stderr)."""
    for handler in logging.getLogger().handlers:
        for log_filter in handler.filters:
            if isinstance(log_filter, RedactSecrets):
                text = log_filter.redact(text)
    return mask_url_credentials(text)
