"""How ``/release-watch`` reaches the daemon: the port its Slack adapters implement.

Slack delivers a slash command over Socket Mode (a connection the app opens, no public URL) or
to a request URL it signs. Both adapters are Slack's business (``handlers.slack``); the daemon
knows them by these types only, and the composition root (``watcher.app``) hands them in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from watcher.server import Handler

# A Socket Mode envelope's answer, given its ``envelope_id``: Slack delivers an envelope again
# when its acknowledgement was late, and the daemon does what it asks once.
RespondEnvelope = Callable[[Mapping[str, Any], str], dict[str, Any]]
# A signed request's answer, given its signature and until when that signature is valid; None
# when the store has seen the signature before (a replay, refused).
RespondOnce = Callable[[Mapping[str, Any], str, float], dict[str, Any] | None]


class SocketConnection(Protocol):
    """A Socket Mode connection answering commands on threads of its own until closed."""

    def start(self) -> None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class CommandTransports:
    """The ways ``/release-watch`` reaches the daemon, Slack's adapters
    (``handlers.slack``), handed in by the composition root so the daemon imports no notifier:
    ``socket_mode(app_token, api_url, respond, wait)`` opens a Socket Mode connection (``respond``
    given each envelope's payload and id) and
    ``request_url(signing_secret, respond_once, epoch)`` is the endpoint for
    ``/slack/commands``."""

    socket_mode: Callable[[str, str, RespondEnvelope, Callable[[float], bool]], SocketConnection]
    request_url: Callable[[str, RespondOnce, Callable[[], float]], Handler]
