"""What the outside world provides (output, sleep, clocks, transport, secrets), in a module
light enough for `status --check` and `--help`: nothing heavy is imported until it is used."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING

from watcher.metrics import Metrics

if TYPE_CHECKING:
    import httpx

    from watcher.config import Secrets


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class Dependencies:
    """What the outside world provides; tests swap these."""

    stdout: IO[str] = field(default_factory=lambda: sys.stdout)
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], datetime] = utcnow
    epoch: Callable[[], float] = time.time
    transport: httpx.BaseTransport | None = None
    secrets: Secrets | None = None
    # Where notifiers' secrets are read from (handlers.secrets); tests pass a dict.
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    # What the poller, client and delivery count for /metrics: nothing, unless the daemon
    # listens ([server] listen; watcher.server).
    metrics: Metrics = field(default_factory=Metrics)

    def get_secrets(self) -> Secrets:
        if self.secrets is None:
            from watcher.config import Secrets

            self.secrets = Secrets()
        return self.secrets
