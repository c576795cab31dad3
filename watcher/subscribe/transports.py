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
    from datetime import datetime

    from watcher.server import Handler
    from watcher.store import Store

# A Socket Mode envelope's answer, given its ``envelope_id``: Slack delivers an envelope again
# when its acknowledgement was late, and the daemon does what it asks once.
RespondEnvelope = Callable[[Mapping[str, Any], str], dict[str, Any]]
# A signed request's answer, given its signature and until when that signature is valid; None
# when the store has seen the signature before (a replay, refused).
RespondOnce = Callable[[Mapping[str, Any], str, float], dict[str, Any] | None]


# A Socket Mode envelope of a click, after its acknowledgement: its payload and id.
OnClick = Callable[[Mapping[str, Any], str], None]
# A click (a ``block_actions`` payload), given a key that makes it once (an envelope id, a
# signature) and until when that key is kept: True taken, None seen before, False refused.
TakeClick = Callable[[Mapping[str, Any], str, float], bool | None]


class Clicks(Protocol):
    """The buttons' side (``handlers.slack.clicks``): takes a click, does it on a thread of
    its own, and finishes what it took when closed."""

    def click(self, payload: Mapping[str, Any], key: str, until: float) -> bool | None: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class ClickSettings:
    """What the buttons need: the commands' own store connection, the bot token, ``[slack]
    api_url``, the clock and each codebase's link template (by its name)."""

    store: Store
    bot_token: str
    api_url: str
    clock: Callable[[], datetime]
    epoch: Callable[[], float]
    code_links: Mapping[str, str]


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
    ``/slack/commands``; ``socket_mode``'s connection also hands each click on a button to the
    ``respond`` given, as an envelope of type ``interactive``."""

    socket_mode: Callable[[str, str, RespondEnvelope, Callable[[float], bool], OnClick | None],
                          SocketConnection]
    request_url: Callable[[str, RespondOnce, Callable[[], float]], Handler]
    # The buttons: ``clicks(settings)`` does what a click asks; ``interactive_url(secret,
    # take, epoch)`` is the endpoint for ``/slack/interactive``; Socket Mode hands clicks to
    # ``on_click(payload, envelope_id)`` after acknowledging them.
    clicks: Callable[[ClickSettings], Clicks] | None = None
    interactive_url: Callable[[str, TakeClick, Callable[[], float]], Handler] | None = None
