"""Logging setup: plain text or JSON lines on stderr, with every known secret masked."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable
from datetime import UTC, datetime

from watcher.untrusted import escape_controls


class RedactSecrets(logging.Filter):
    """Replaces any secret value that slipped into a message or its arguments with ``***``."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s and len(s) >= 4]

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            for secret in self.secrets:
                message = message.replace(secret, "***")
            record.msg, record.args = message, None
        return True


def _iso_seconds(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class TextFormatter(logging.Formatter):
    """``2026-11-30T13:00:00Z warning watcher.delivery.deliver: message``: UTC, ISO 8601, so
    lines from journald, docker and a laptop sort and compare alike. One event is one line: a
    release tag holding a line break or an escape sequence shows them escaped, so it can neither
    forge a log line nor drive a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        line = (f"{_iso_seconds(record.created)} {record.levelname.lower()} {record.name}: "
                f"{escape_controls(record.getMessage())}")
        if record.exc_info:  # --verbose only: the traceback keeps its lines, not their controls
            line += "\n" + "\n".join(escape_controls(part) for part in
                                      self.formatException(record.exc_info).split("\n"))
        return line


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {"time": datetime.fromtimestamp(record.created, UTC).isoformat(),
                 "level": record.levelname.lower(), "logger": record.name,
                 "message": escape_controls(record.getMessage())}
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
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
    for handler in logging.getLogger().handlers:
        for log_filter in handler.filters:
            if isinstance(log_filter, RedactSecrets):
                log_filter.secrets.extend(v for v in values if v and len(v) >= 4)
