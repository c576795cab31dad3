"""``/slack/commands``: the slash command's HTTP request URL, for those who prefer it to Socket
Mode. Slack signs every request with the app's signing secret; one whose signature is wrong,
missing, older than five minutes or seen before is refused with 401 and a log line, and nothing
it asks for is done (api.slack.com/authentication/verifying-requests-from-slack).

The signature is ``v0=`` + hex HMAC-SHA256 of ``v0:{X-Slack-Request-Timestamp}:{body}`` under
the signing secret, in ``X-Slack-Signature``, compared in constant time. The clock is injected.
Whether a signature was seen before is the store's to say (``Store.first_sighting``, through
``answer``), so a replay is refused after a restart and by every process on the store; a
signature is kept until its timestamp leaves the window.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from watcher.server import Request, Response

logger = logging.getLogger(__name__)

WINDOW = 300  # seconds a request's timestamp may be from our clock, either way (Slack's rule)
JSON = "application/json; charset=utf-8"
# The epoch in seconds: ASCII digits only (str.isdigit takes "²"), and few enough of them that
# reading the number costs nothing (a 5,000-digit one is past Python's int() limit).
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")
# The command's form, its signature, and the epoch second past which that signature is
# stale: the answer Slack shows, or None when the store saw the signature before (a replay).
Answer = Callable[[Mapping[str, Any], str, float], dict[str, Any] | None]


class SignatureCheck:
    """Slack's v0 request signature and the freshness of its timestamp."""

    def __init__(self, secret: str, clock: Callable[[], float]) -> None:
        self._key = secret.encode()
        self._clock = clock

    def __repr__(self) -> str:
        return "SignatureCheck(secret='**********')"

    def problem(self, body: bytes, timestamp: str | None, signature: str | None) -> str | None:
        """Why the request is not Slack's or not fresh; None when it is both."""
        if not timestamp or not signature:
            return "no X-Slack-Request-Timestamp or X-Slack-Signature header"
        if not _TIMESTAMP.fullmatch(timestamp):
            return "the timestamp is not a number of seconds"
        now = self._clock()
        if abs(now - int(timestamp)) > WINDOW:
            return f"the timestamp is {int(now - int(timestamp))}s off (stale or replayed)"
        if not _SIGNATURE.fullmatch(signature):
            return "the signature is not of Slack's v0 form"
        base = b"v0:" + timestamp.encode() + b":" + body
        expected = "v0=" + hmac.new(self._key, base, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected.encode(), signature.encode()):
            return "the signature does not match (a wrong SLACK_SIGNING_SECRET, or forged)"
        return None


# A click's payload, its signature and until when that is kept: True taken, None seen before
# (a replay), False not a click of ours.
TakeClick = Callable[[Mapping[str, Any], str, float], bool | None]
# A signed request's body, signature and expiry in; its response out, None for a replay.
Serve = Callable[[bytes, str, float], Response | None]


def signed_endpoint(secret: str, clock: Callable[[], float], serve: Serve
                    ) -> Callable[[Request], Response]:
    """An endpoint that serves only what Slack signed, fresh and not seen before: 401 and a
    log line, and nothing done, for the rest."""
    check = SignatureCheck(secret, clock)

    def endpoint(request: Request) -> Response:
        timestamp = request.header("x-slack-request-timestamp")
        signature = request.header("x-slack-signature")
        why = check.problem(request.body, timestamp, signature)
        if why is None:
            assert timestamp is not None and signature is not None
            response = serve(request.body, signature, int(timestamp) + WINDOW)
            if response is not None:
                return response
            why = "this signed request was received before (replayed)"
        logger.warning("slack request URL: refused a request to %s: %s", request.path, why)
        return Response(401, b"invalid signature\n")

    return endpoint


def interactive_endpoint(
    secret: str, take: TakeClick, clock: Callable[[], float]
) -> Callable[[Request], Response]:
    """``/slack/interactive``: a click on a button, signed as a slash command is, its
    ``block_actions`` payload JSON in the form field ``payload``
    (api.slack.com/interactivity/handling#payloads). Answered at once with an empty 200 (the
    click is done on a thread of its own and answered in Slack), 401 when unsigned, stale or
    replayed, 400 when it holds no payload."""

    def serve(body: bytes, signature: str, until: float) -> Response | None:
        payload = _payload(body)
        if payload is None:
            return Response(400, b"no payload\n")
        return None if take(payload, signature, until) is None else Response(200, b"")

    return signed_endpoint(secret, clock, serve)


def _payload(body: bytes) -> dict[str, Any] | None:
    try:
        form = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        payload = json.loads(form.get("payload", ""))
    except (UnicodeDecodeError, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


def slash_command_endpoint(
    secret: str, answer: Answer, clock: Callable[[], float]
) -> Callable[[Request], Response]:
    """The endpoint: check the signature, read the form Slack posts, answer it (the JSON
    body Slack shows the person who typed the command), unless the store saw it before."""

    def serve(body: bytes, signature: str, until: float) -> Response | None:
        try:
            form = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        except UnicodeDecodeError:
            return Response(400, b"not a form\n")
        answered = answer(form, signature, until)
        return None if answered is None else Response(200, json.dumps(answered).encode(), JSON)

    return signed_endpoint(secret, clock, serve)
