"""What the composition root hands the daemon (``watcher.app.build_daemon``): how a runtime is
built from a configuration, which notifiers ``run`` validates it for, each job's notifiers with
the channels' subscriptions added, the ways ``/release-watch`` arrives, and how SIGHUP reads the
configuration again. The daemon calls these and imports none of what they build with, so it
never imports the root, which imports it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from watcher.config import Config
    from watcher.delivery import Notifier
    from watcher.deps import Dependencies, Runtime
    from watcher.subscribe import CommandTransports

# The configured notifiers and one per channel's subscription, as the runtime's store holds
# them now; the runtime's poller routes to all of them.
Subscribed = Callable[["Runtime", Mapping[str, "Notifier"], "Dependencies"], dict[str, "Notifier"]]


@dataclass(frozen=True)
class DaemonParts:
    # A store, client, analyzer and poller for a configuration: at start, and after each
    # SIGHUP whose configuration passed ``notifiers``.
    runtime: Callable[[Config, Dependencies], Runtime]
    # The notifiers ``run`` uses, built and checked as ``config check`` checks them; a
    # ConfigError with one line per problem.
    notifiers: Callable[[Config, Dependencies], dict[str, Notifier]]
    subscribed: Subscribed
    transports: CommandTransports  # Slack's adapters for /release-watch
    read_config: Callable[[], Config]  # SIGHUP: the configuration read again
