"""``/slack/commands``: the slash command's HTTP request URL, for those who prefer it to Socket
Mode. Slack signs every request with the app's signing secret; one whose signature is wrong,
missing, older than five minutes or seen before is refused with 401 and a log line, and nothing
it asks for is done (api.slack.com/authentication/verifying-requests-from-slack).

The signature is ``v0=`` + hex HMAC-SHA256 of ``v0:{X-Slack-Request-Timestamp}:{body}`` under
the signing secret, in ``X-Slack-Signature``, compared in constant time. The clock is injected.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from watcher.server import Request, Response

logger = logging.getLogger(__name__)

WINDOW = 300  # seconds a request's timestamp may be from our clock, either way (Slack's rule)
JSON = "application/json; charset=utf-8"
Answer = Callable[[Mapping[str, Any]], dict[str, Any]]


class SignatureCheck:
    """Slack's v0 request signature, and a memory of the signatures seen in the last window,
    so a request captured and sent again within it is refused too (Slack does not resend a
    slash command)."""

    def __init__(self, secret: str, clock: Callable[[], float]) -> None:
        self._key = secret.encode()
        self._clock = clock
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "SignatureCheck(secret='**********')"

    def problem(self, body: bytes, timestamp: str | None, signature: str | None) -> str | None:
        """Why the request is not Slack's, fresh, or new; None when it is all three."""
        if not timestamp or not signature:
            return "no X-Slack-Request-Timestamp or X-Slack-Signature header"
        if not timestamp.isdigit():
            return "the timestamp is not a number"
        now = self._clock()
        if abs(now - int(timestamp)) > WINDOW:
            return f"the timestamp is {int(now - int(timestamp))}s off (stale or replayed)"
        base = b"v0:" + timestamp.encode() + b":" + body
        expected = "v0=" + hmac.new(self._key, base, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
            return "the signature does not match (a wrong SLACK_SIGNING_SECRET, or forged)"
        with self._lock:
            self._seen = {sig: at for sig, at in self._seen.items() if now - at <= WINDOW}
            if signature in self._seen:
                return "this signed request was received before (replayed)"
            self._seen[signature] = now
        return None


def slash_command_endpoint(
    secret: str, answer: Answer, clock: Callable[[], float]
) -> Callable[[Request], Response]:
    """The endpoint: check the signature, read the form Slack posts, answer it (the JSON
    body Slack shows the person who typed the command)."""
    check = SignatureCheck(secret, clock)

    def endpoint(request: Request) -> Response:
        why = check.problem(
            request.body,
            request.header("x-slack-request-timestamp"),
            request.header("x-slack-signature"),
        )
        if why is not None:
            logger.warning("slack request URL: refused a request to %s: %s", request.path, why)
            return Response(401, b"invalid signature\n")
        try:
            form = dict(parse_qsl(request.body.decode("utf-8"), keep_blank_values=True))
        except UnicodeDecodeError:
            return Response(400, b"not a form\n")
        return Response(200, json.dumps(answer(form)).encode(), JSON)

    return endpoint
