"""The hooks the pipeline calls to be observed: the core's port for metrics.

The poller, the GitHub client, the delivery and the impact scan call these whether or not
anything listens; ``Metrics`` itself records nothing, so a hook costs one method call. The
daemon's listener hands in ``watcher.server.PrometheusMetrics``, which overrides every hook, so
the core never imports the server.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from watcher.models import Event


class Metrics:
    """The hooks, recording nothing. The poller, client and delivery call these whether or not
    anything listens; ``PrometheusMetrics`` overrides every one."""

    def github_response(self, endpoint: str, status: int | None) -> None:
        """One GitHub request answered (``status``) or failed on the way (None)."""

    def rate_limit(self, remaining: int, limit: int | None) -> None:
        """GitHub's core rate limit as its last answer reported it."""

    def poll_timer(self) -> AbstractContextManager[None]:
        return nullcontext()

    def repos_polled(self, outcomes: Iterable[tuple[str, str]], now: datetime) -> None:
        """A poll's ``(repo, outcome)`` pairs, outcome one of ``POLL_OUTCOMES``."""

    def events_recorded(self, events: Iterable[Event]) -> None:
        """Events a poll recorded (a dry run records none)."""

    def delivery_timer(self, notifier: str) -> AbstractContextManager[None]:
        return nullcontext()

    def delivered(self, notifier: str, outcome: str) -> None:
        """One delivery of an event to ``notifier``: ``sent`` or ``failed``."""

    def digest_delivered(self, notifier: str, outcome: str) -> None:
        """One digest to ``notifier``: ``sent`` or ``failed``."""

    def impact_scanned(self, root: str, files: int, seconds: float) -> None:
        """One scan of an ``[impact] code`` root: files found, seconds taken."""
