"""The values the composition root (``watcher.app``), the daemon and the server share: what the
outside world provides (``Dependencies``: output, sleep, clocks, transport, secrets) and what
the root builds from a configuration (``Runtime``: store, client, analyzer, poller). Below all
three, so the daemon and the server name these types without importing the root that builds
them; light enough for `status --check` and `--help`: nothing heavy is imported until it is
used (the runtime's parts are named for type checking only)."""

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

    from watcher.config import Config, Secrets
    from watcher.github import GitHubClient
    from watcher.impact.atlas import PackageStep
    from watcher.notes import Analyzer
    from watcher.poller import Poller
    from watcher.store import Store


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

    def secret_values(self) -> list[str]:
        """The secrets' values, for logging to mask: those ``get_secrets`` holds, read from
        the environment without building the model until a command asks for it."""
        if self.secrets is None:
            from watcher.config import environment_secrets

            return environment_secrets(os.environ)
        secrets = self.secrets
        return [s.get_secret_value() for s in (secrets.github_token, secrets.slack_bot_token,
                                                secrets.slack_webhook_url,
                                                secrets.slack_app_token,
                                                secrets.slack_signing_secret) if s is not None]


@dataclass
class Runtime:
    """What ``watcher.app.build_runtime`` builds from a configuration for one poll or for the
    daemon's life (until a SIGHUP builds the next): all of it is closed together."""

    config: Config
    store: Store
    client: GitHubClient
    analyzer: Analyzer
    poller: Poller
    http: httpx.Client
    # With [impact]: the atlases the polls wanted, fetched apart from them.
    packages: PackageStep | None = None

    def close(self) -> None:
        if self.packages is not None and self.packages.source.index is not None:
            self.packages.source.index.close()
        self.http.close()
        self.store.close()
