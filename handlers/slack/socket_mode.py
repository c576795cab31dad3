"""Slash commands and clicks on buttons over Socket Mode (slack-sdk's built-in client): no
public URL needed. The app token (``SLACK_APP_TOKEN``, ``xapp-…``) opens a websocket
(``apps.connections.open`` on ``[slack] api_url``); Slack sends each ``/release-watch`` as an
envelope, and the envelope's acknowledgement, due within 3 seconds, carries the answer the
person sees (api.slack.com/apis/connections/socket#command); a click is an envelope of type
``interactive``, queued and acknowledged at once, then done.

slack-sdk reconnects a dropped connection by itself; only the first connection is ours to
retry, until it works or the token is refused. Slack delivers an envelope again (same
``envelope_id``, ``retry_attempt`` 1, 2, ...) when its acknowledgement came late; each envelope's
answer is given its id, so what it asks is done once.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable, Mapping
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.builtin import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

logger = logging.getLogger(__name__)

# An envelope's payload and id in, the answer its acknowledgement carries out.
Answer = Callable[[Mapping[str, Any], str], dict[str, Any]]
# A click's envelope (type ``interactive``), handed on once acknowledged: its payload and id.
OnClick = Callable[[Mapping[str, Any], str], None]
# apps.connections.open's errors no retry fixes, with what to do.
REFUSED = {
    "invalid_auth": "SLACK_APP_TOKEN is not valid: copy the app-level token (xapp-…) again",
    "not_authed": "SLACK_APP_TOKEN is empty: set the app-level token (xapp-…)",
    "not_allowed_token_type": "SLACK_APP_TOKEN must be the app-level token (xapp-…, scope "
    "connections:write), not the bot token",
    "token_revoked": "SLACK_APP_TOKEN was revoked: make a new app-level token",
    "missing_scope": "the app-level token lacks connections:write: add it to the token",
}
FIRST_WAITS = (1.0, 5.0, 15.0, 60.0)  # then every 5 minutes


class SocketModeCommands:
    """Connects, answers slash commands with ``answer``, and closes."""

    def __init__(
        self, app_token: str, api_url: str, answer: Answer, *, wait: Callable[[float], bool],
        on_click: OnClick | None = None,
    ) -> None:
        """``wait(seconds)``: sleeps between first attempts, True once the daemon stops;
        ``on_click``: where clicks on buttons go (none: acknowledged and dropped)."""
        self._token = app_token
        self._api_url = api_url
        self._answer = answer
        self._on_click = on_click
        self._wait = wait
        self._client: SocketModeClient | None = None
        self._thread: threading.Thread | None = None

    def __repr__(self) -> str:
        return "SocketModeCommands(app_token='**********')"

    def start(self) -> None:
        """Connect from a thread of its own: a slow or absent Slack never holds up the daemon."""
        client = SocketModeClient(
            app_token=self._token, logger=logger, web_client=WebClient(base_url=self._api_url)
        )
        client.socket_mode_request_listeners.append(self._on_request)
        self._client = client
        self._thread = threading.Thread(
            target=self._connect, args=(client,), name="slack-socket-mode", daemon=True
        )
        self._thread.start()

    def connected(self) -> bool:
        return self._client is not None and self._client.is_connected()

    def _connect(self, client: SocketModeClient) -> None:
        attempt = 0
        while True:
            try:
                client.connect()
                if client.is_connected():
                    logger.info("slack: Socket Mode connected; /release-watch is answered")
                else:  # slack-sdk logged why; its monitor opens a new connection by itself
                    logger.warning("slack: Socket Mode's websocket did not open; retrying")
                return
            except SlackApiError as error:
                code = str(error.response.get("error", ""))
                if code in REFUSED:
                    logger.error(
                        "slack: Socket Mode refused (%s): %s; /release-watch is not "
                        "answered until this is fixed and release-watch restarted",
                        code,
                        REFUSED[code],
                    )
                    return
                problem = f"Slack answered {code or error.response.status_code}"
            except Exception as error:  # a network failure: slack-sdk raises what it met
                problem = f"{type(error).__name__}: {error}"
            delay = FIRST_WAITS[attempt] if attempt < len(FIRST_WAITS) else 300.0
            logger.warning(
                "slack: Socket Mode cannot connect (%s); trying again in %.0fs", problem, delay
            )
            attempt += 1
            if self._wait(delay):
                return

    def _on_request(self, client: Any, request: SocketModeRequest) -> None:
        """Acknowledge every envelope; a slash command's acknowledgement is its answer (an
        envelope delivered again has the same ``envelope_id``: the answer knows it). A click
        (``interactive``) is handed on, which only checks it, records its envelope and queues
        it, then acknowledged with nothing: Slack wants that within 3 seconds, whatever the
        click takes."""
        if request.type == "interactive" and self._on_click is not None:
            try:
                self._on_click(request.payload, request.envelope_id)
            except Exception as error:  # acknowledged all the same: Slack would only resend it
                logger.error("slack: a click could not be taken: %s", type(error).__name__)
        payload = (self._answer(request.payload, request.envelope_id)
                   if request.type == "slash_commands" else None)
        client.send_socket_mode_response(SocketModeResponse(request.envelope_id, payload))

    def close(self) -> None:
        """Promptly: slack-sdk's own ``close`` waits out its reader's 3-second receive timeout
        and its queue's 1-second poll, so both are woken first (a SIGTERM has 5 seconds)."""
        client = self._client
        if client is None:
            return
        client.closed = True
        client.message_queue.put(None)  # an empty message: the queue reader looks up at once
        session = client.current_session
        if session is not None and session.sock is not None:
            with contextlib.suppress(OSError):
                session.sock.shutdown(socket.SHUT_RDWR)  # the blocked receive returns now
        client.close()
        if self._thread is not None:
            self._thread.join(timeout=5)
