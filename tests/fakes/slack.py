"""A fake Slack (Web API ``chat.postMessage``/``chat.update``/``auth.test``/
``apps.connections.open``/``conversations.members``, one incoming webhook and one click's
``response_url``) over HTTP.

Why a real server: the notifier talks to Slack through the official ``slack_sdk`` clients, whose
retry handlers, error mapping and request encoding only run honestly when bytes cross a socket.
Point ``WebClient(base_url=fake.api_url)`` or ``WebhookClient(fake.webhook_url)`` at it.

The point of the fake is strictness: it rejects what Slack rejects (``no_text``, ``msg_too_long``,
``invalid_blocks`` for the documented Block Kit limits, ``msg_blocks_too_long`` for the
undocumented total-size ceiling), answers auth and channel errors the way Slack does (HTTP 200,
``{"ok": false, "error": ...}``), and records every accepted message with the mentions
(``pings``) and links Slack would render, so tests can assert "no accidental @channel".
Like ``fakes.github`` it uses only the standard library, binds 127.0.0.1 on an ephemeral port
and never sleeps unless a test asks it to (``Scripted.delay``).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl

from fakes.loopback import Answer, Served

JSON_CT = "application/json; charset=utf-8"
TEXT_CT = "text/plain; charset=utf-8"
WEBHOOK_PATH = "/services/T000/B000/XXXX"
RESPONSE_PATH = "/actions/T000/1/response"  # a click's response_url (ephemeral answers)
BOT_USER_ID = "UBOT"
BOT_ID = "BBOT"
TEAM_ID = "T000"

# Slack's documented limits (chat.postMessage and Block Kit reference).
MAX_TEXT = 40_000
MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3_000
MAX_FIELD_TEXT = 2_000
MAX_FIELDS = 10
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_ACTIONS_ELEMENTS = 25
MAX_BLOCK_ID = 255
MAX_MARKDOWN_BLOCK_TEXT = 12_000
MAX_TEXT_OBJECT = 3_000
MAX_ALT_TEXT = 2_000

_TS_BASE = 1_700_000_000
_NO_BODY = {204, 304}
_BLOCK_TYPES = frozenset({
    "section", "divider", "header", "context", "actions", "image", "rich_text", "markdown",
    "video", "file", "input", "table",
})  # fmt: skip
_CHANNEL_ID = re.compile(r"[CGD][A-Z0-9]{2,}")
_CODE_FENCE = re.compile(r"```.*?```", re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_MENTION = re.compile(
    r"<(!channel|!here|!everyone|@[UW][A-Z0-9]+|!subteam\^[A-Z0-9]+)(?:\|[^>]*)?>"
)
_LINK = re.compile(r"<((?:https?|mailto):[^|>\s]+)(?:\|([^>]*))?>", re.IGNORECASE)


@dataclass(frozen=True)
class Scripted:
    """One canned answer; queued with ``FakeSlack.script`` to inject faults deterministically.

    ``body=None`` with ``status == 200`` means "answer normally" (the request is handled and may
    post a message; ``headers`` are added to the normal answer).  Any other combination replaces
    the answer entirely and changes no state: a dict body is sent as JSON, str/bytes as text,
    ``None`` as an empty body.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | str | dict[str, Any] | None = None
    delay: float = 0.0  # real sleep before answering; only for timeout tests

    @classmethod
    def rate_limited_429(cls, retry_after: int = 1) -> Scripted:
        """Slack's HTTP 429, the only thing ``RateLimitErrorRetryHandler`` retries on."""
        return cls(429, {"Retry-After": str(retry_after)}, {"ok": False, "error": "ratelimited"})

    @classmethod
    def server_error(cls, status: int = 500) -> Scripted:
        """A 5xx with a text body, as seen during Slack incidents."""
        return cls(status, {"content-type": TEXT_CT}, "Internal Server Error")

    @classmethod
    def error(cls, code: str) -> Scripted:
        """HTTP 200 ``{"ok": false, "error": code}`` (``ratelimited``, ``fatal_error``, ...)."""
        return cls(200, {}, {"ok": False, "error": code})


@dataclass(frozen=True)
class RecordedRequest:
    """What the server saw and answered, so tests can assert on the client's wire behaviour."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names
    params: dict[str, Any]  # the decoded JSON or form body ({} if it could not be decoded)
    status: int
    error: str | None  # Slack error code ("ok": false), or the text body of a non-200 answer
    scripted: bool


@dataclass(frozen=True)
class Message:
    """One accepted post.  ``channel`` is the name/id it was registered under (no ``#``)."""

    channel: str | None  # None for webhook posts
    ts: str
    thread_ts: str | None
    text: str | None
    blocks: list[dict[str, Any]] | None
    via: str  # "web" or "webhook"
    pings: tuple[str, ...]  # de-duplicated, in order of first appearance
    links: tuple[tuple[str, str], ...]  # (url, label); label is the url for "<url>"
    broadcast: bool = False  # a thread reply also sent to the channel (reply_broadcast)
    edits: int = 0  # how many times chat.update replaced it

    def all_text(self) -> str:
        """``text`` plus every ``"text"`` string anywhere in ``blocks``, newline-joined."""
        parts = [self.text] if self.text else []
        parts.extend(_text_strings(self.blocks or []))
        return "\n".join(parts)


@dataclass
class _Channel:
    name: str
    id: str
    everyone: bool  # every valid token is a member
    members: set[str] = field(default_factory=set)
    users: set[str] = field(default_factory=set)  # people in it (conversations.members)


class _Reject(Exception):
    """Control flow: abandon a request with Slack's error code."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class FakeSlack(Served):
    """Channels, tokens and posted messages, served the way slack.com/api and hooks.slack.com do.

    ``max_blocks_json`` approximates Slack's undocumented ``msg_blocks_too_long`` ceiling as the
    length of ``json.dumps(blocks, separators=(",", ":"))`` (ASCII-escaped, so non-ASCII text
    counts extra: err on the side of rejecting).
    """

    latency = 0.0  # no simulated network latency for Slack

    def __init__(self, *, max_blocks_json: int = 12_000) -> None:
        self.max_blocks_json = max_blocks_json
        self.messages: list[Message] = []
        self.requests: list[RecordedRequest] = []
        self._lock = threading.RLock()
        self._tokens: set[str] = set()
        self._revoked: set[str] = set()
        self._channels: dict[str, _Channel] = {}
        self._scripts: dict[str, deque[Scripted]] = {}
        self._seq = 0
        self._next_channel = 1
        self._app_tokens: set[str] = set()
        # Where apps.connections.open sends Socket Mode clients (``fakes.socket_mode``).
        self.socket_url: str | None = None
        self.responses: list[dict[str, Any]] = []  # what was posted to a response_url

    @property
    def api_url(self) -> str:
        """What ``WebClient(base_url=...)`` gets; the trailing slash matters to slack_sdk."""
        return self.url + "/api/"

    @property
    def response_url(self) -> str:
        """A click's ``response_url``: what is posted there is kept in ``responses``."""
        return self.url + RESPONSE_PATH

    @property
    def webhook_url(self) -> str:
        """The one valid incoming webhook; other ``/services/...`` paths answer 404."""
        return self.url + WEBHOOK_PATH

    # -- state -------------------------------------------------------------------------------
    def add_token(self, token: str, *, channels: Iterable[str] = ()) -> None:
        """A valid bot token, made a member of ``channels`` (created if missing)."""
        with self._lock:
            self._tokens.add(token)
            self._revoked.discard(token)
            for name in channels:
                self._ensure_channel(name, everyone=False).members.add(token)

    def add_channel(self, name: str, *, member: bool = True) -> None:
        """Make a channel exist.  ``member=True``: every valid token is in it; ``False``: none is
        (posts get ``not_in_channel``) until ``add_token(..., channels=[name])``."""
        with self._lock:
            channel = self._ensure_channel(name, everyone=member)
            channel.everyone = member
            if not member:
                channel.members.clear()

    def add_member(self, channel: str, *users: str) -> None:
        """People in ``channel`` (created if missing), as ``conversations.members`` lists."""
        with self._lock:
            self._ensure_channel(channel, everyone=False).users.update(users)

    def add_app_token(self, token: str) -> None:
        """A valid app-level token (``xapp-…``): it may open Socket Mode connections."""
        with self._lock:
            self._app_tokens.add(token)

    def channel_id(self, name: str) -> str:
        """The id Slack gives the channel ``name`` (created if missing)."""
        with self._lock:
            return self._ensure_channel(name, everyone=False).id

    def revoke(self, token: str) -> None:
        """The token now answers ``invalid_auth``."""
        with self._lock:
            self._revoked.add(token)

    # -- fault injection and observation -----------------------------------------------------
    def script(self, path: str, *responses: Scripted) -> None:
        """Queue answers for requests whose path (query excluded) equals ``path``, FIFO."""
        with self._lock:
            self._scripts.setdefault(path, deque()).extend(responses)

    def unscript(self, path: str) -> None:
        """Drop the answers still queued for ``path``: it answers normally again."""
        with self._lock:
            self._scripts.pop(path, None)

    def thread(self, ts: str) -> list[Message]:
        """Replies whose ``thread_ts`` is ``ts``, oldest first (the parent is not included)."""
        with self._lock:
            return [m for m in self.messages if m.thread_ts == ts]

    def channel_messages(self, channel: str) -> list[Message]:
        """Top-level posts and replies in ``channel`` (name, ``#name`` or id), oldest first."""
        with self._lock:
            found = self._lookup(channel)
            name = found.name if found is not None else _normalise(channel)
            return [m for m in self.messages if m.channel == name]

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """Requests whose path (query excluded) equals ``path``."""
        with self._lock:
            return [r for r in self.requests if r.path == path]

    # -- state helpers -----------------------------------------------------------------------
    def _ensure_channel(self, name: str, *, everyone: bool) -> _Channel:
        key = _normalise(name)
        channel = self._lookup(key)
        if channel is None:
            if _CHANNEL_ID.fullmatch(key):
                cid = key
            else:
                cid = f"C{self._next_channel:09d}"
                self._next_channel += 1
            channel = self._channels[key] = _Channel(key, cid, everyone)
        return channel

    def _lookup(self, channel: str) -> _Channel | None:
        key = _normalise(channel)
        found = self._channels.get(key)
        if found is None:
            found = next((c for c in self._channels.values() if c.id == key), None)
        return found

    def _accept(
        self, *, channel: str | None, thread_ts: str | None, text: str | None,
        blocks: list[dict[str, Any]] | None, via: str, mrkdwn: bool,
    ) -> Message:  # fmt: skip
        self._seq += 1
        ts = f"{_TS_BASE + self._seq // 1_000_000}.{self._seq % 1_000_000:06d}"
        pings, links = _scan(text, blocks, mrkdwn=mrkdwn)
        message = Message(channel, ts, thread_ts, text, blocks, via, pings, links)
        self.messages.append(message)
        return message

    # -- request handling (called from server threads) ---------------------------------------
    def _content(self, params: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]] | None]:
        """Validate text/blocks like Slack; raise ``_Reject`` with Slack's error code."""
        text = params.get("text")
        if text is not None and not isinstance(text, str):
            text = json.dumps(text) if isinstance(text, dict | list) else str(text)
        raw = params.get("blocks")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw) if raw.strip() else None
            except ValueError:
                raise _Reject("invalid_blocks_format") from None
        if raw is not None and not isinstance(raw, list):
            raise _Reject("invalid_blocks_format")
        blocks: list[dict[str, Any]] | None = raw or None
        if not text and not blocks:
            raise _Reject("no_text")
        if text is not None and len(text) > MAX_TEXT:
            raise _Reject("msg_too_long")
        if blocks is not None:
            if not _valid_blocks(blocks):
                raise _Reject("invalid_blocks")
            if len(json.dumps(blocks, separators=(",", ":"))) > self.max_blocks_json:
                raise _Reject("msg_blocks_too_long")
        return text, blocks

    def _token(self, headers: dict[str, str], params: dict[str, Any]) -> str:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        token = given.strip() if scheme.lower() == "bearer" else ""
        if not token and isinstance(params.get("token"), str):
            token = params["token"]  # form/query token, as older clients send it
        if not token:
            raise _Reject("not_authed")
        if token not in self._tokens or token in self._revoked:
            raise _Reject("invalid_auth")
        return token

    def _post_message(self, headers: dict[str, str], params: dict[str, Any]) -> dict[str, Any]:
        token = self._token(headers, params)
        channel = self._lookup(str(params.get("channel") or ""))
        if channel is None:
            raise _Reject("channel_not_found")
        if not channel.everyone and token not in channel.members:
            raise _Reject("not_in_channel")
        text, blocks = self._content(params)
        thread_ts = params.get("thread_ts")
        if thread_ts in (None, ""):
            thread_ts = None
        else:
            thread_ts = str(thread_ts)
            parents = (m for m in self.messages if m.via == "web" and m.thread_ts is None)
            if not any(m.channel == channel.name and m.ts == thread_ts for m in parents):
                raise _Reject("thread_not_found")  # stricter than Slack, which posts top-level
        mrkdwn = params.get("mrkdwn") not in (False, "false", "0", 0)
        message = self._accept(
            channel=channel.name, thread_ts=thread_ts, text=text, blocks=blocks, via="web",
            mrkdwn=mrkdwn,
        )  # fmt: skip
        if thread_ts is not None and params.get("reply_broadcast") in (True, "true", "1", 1):
            message = self.messages[-1] = replace(message, broadcast=True)
        shown: dict[str, Any] = {
            "type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "app_id": "A000",
            "team": TEAM_ID, "text": text or "", "ts": message.ts,
        }  # fmt: skip
        if blocks is not None:
            shown["blocks"] = blocks
        if thread_ts is not None:
            shown.update(thread_ts=thread_ts, parent_user_id=BOT_USER_ID)
        return {"ok": True, "channel": channel.id, "ts": message.ts, "message": shown}

    def _update(self, headers: dict[str, str], params: dict[str, Any]) -> dict[str, Any]:
        """chat.update: replaces the text and blocks of one of the bot's messages, by channel
        id and ts (api.slack.com/methods/chat.update)."""
        self._token(headers, params)
        channel = self._lookup(str(params.get("channel") or ""))
        if channel is None:
            raise _Reject("channel_not_found")
        ts = str(params.get("ts") or "")
        index = next((i for i, m in enumerate(self.messages)
                      if m.via == "web" and m.channel == channel.name and m.ts == ts), None)
        if index is None:
            raise _Reject("message_not_found")
        text, blocks = self._content(params)
        old = self.messages[index]
        pings, links = _scan(text, blocks, mrkdwn=True)
        self.messages[index] = replace(old, text=text, blocks=blocks, pings=pings, links=links,
                                       edits=old.edits + 1)
        return {"ok": True, "channel": channel.id, "ts": ts, "text": text or ""}

    def _members(self, headers: dict[str, str], params: dict[str, Any]) -> dict[str, Any]:
        """conversations.members, a page of ``limit`` at a time (the cursor is an offset), as
        api.slack.com/methods/conversations.members pages."""
        token = self._token(headers, params)
        channel = self._lookup(str(params.get("channel") or ""))
        if channel is None or (not channel.everyone and token not in channel.members):
            raise _Reject("channel_not_found")  # a private channel the bot is not in
        everyone = sorted(channel.users)
        start = int(params.get("cursor") or 0)
        end = start + max(1, int(params.get("limit") or 100))
        return {"ok": True, "members": everyone[start:end],
                "response_metadata": {"next_cursor": str(end) if end < len(everyone) else ""}}

    def _auth_test(self, headers: dict[str, str], params: dict[str, Any]) -> dict[str, Any]:
        self._token(headers, params)
        return {
            "ok": True, "url": self.url + "/", "team": "T", "user": "release-watch",
            "team_id": TEAM_ID, "user_id": BOT_USER_ID, "bot_id": BOT_ID,
        }  # fmt: skip

    def _connections_open(self, headers: dict[str, str], params: dict[str, Any]
                          ) -> dict[str, Any]:
        """apps.connections.open: an app-level token gets a websocket URL; a bot token is the
        wrong type (api.slack.com/methods/apps.connections.open)."""
        scheme, _, given = headers.get("authorization", "").partition(" ")
        token = given.strip() if scheme.lower() == "bearer" else ""
        if not token:
            raise _Reject("not_authed")
        if token in self._tokens:
            raise _Reject("not_allowed_token_type")
        if token not in self._app_tokens or token in self._revoked:
            raise _Reject("invalid_auth")
        if self.socket_url is None:
            raise _Reject("internal_error")
        return {"ok": True, "url": self.socket_url}

    def _web_api(
        self, path: str, query: dict[str, str], headers: dict[str, str], params: dict[str, Any],
        decode_error: str | None,
    ) -> dict[str, Any]:  # fmt: skip
        method = path.removeprefix("/api/")
        routes = {"chat.postMessage": self._post_message, "chat.update": self._update,
                  "auth.test": self._auth_test, "conversations.members": self._members,
                  "apps.connections.open": self._connections_open}
        route = routes.get(method)
        if route is None:
            return {"ok": False, "error": "unknown_method", "req_method": method}
        if decode_error is not None:
            return {"ok": False, "error": decode_error}
        try:
            return route(headers, {**query, **params})
        except _Reject as rejected:
            return {"ok": False, "error": rejected.code}

    def _webhook(self, params: dict[str, Any], decode_error: str | None) -> tuple[int, str]:
        if decode_error is not None:
            return 400, "invalid_payload"
        try:
            text, blocks = self._content(params)
        except _Reject as rejected:
            return 400, rejected.code
        mrkdwn = params.get("mrkdwn") is not False
        self._accept(
            channel=None, thread_ts=None, text=text, blocks=blocks, via="webhook", mrkdwn=mrkdwn
        )
        return 200, "ok"

    def _route(
        self, path: str, query: dict[str, str], headers: dict[str, str], raw: bytes
    ) -> tuple[int, str, bytes]:
        """Normal (unscripted) handling: (status, content type, body)."""
        if path.startswith("/api/"):
            params, problem = _decode(headers, raw, webhook=False)
            payload = self._web_api(path, query, headers, params, problem)
            return 200, JSON_CT, json.dumps(payload).encode()
        if path == WEBHOOK_PATH:
            params, problem = _decode(headers, raw, webhook=True)
            status, text = self._webhook(params, problem)
            return status, TEXT_CT, text.encode()
        if path == RESPONSE_PATH:
            params, problem = _decode(headers, raw, webhook=True)
            if problem is not None:
                return 400, TEXT_CT, problem.encode()
            self.responses.append(params)
            return 200, TEXT_CT, b"ok"
        if path.startswith("/services/"):
            return 404, TEXT_CT, b"no_service"
        return 404, TEXT_CT, b"not_found"

    def _handle(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str], raw: bytes
    ) -> Answer:
        """Combine scripted and normal answers and record the request."""
        with self._lock:
            queue = self._scripts.get(path)
            scripted = queue.popleft() if queue else None
            if scripted is None or (scripted.status == 200 and scripted.body is None):
                status, ctype, body = self._route(path, query, headers, raw)
                out_headers = {"content-type": ctype}
            else:
                status, out_headers, body = scripted.status, {}, b""
                if isinstance(scripted.body, dict):
                    out_headers["content-type"] = JSON_CT
                    body = json.dumps(scripted.body).encode()
                elif scripted.body is not None:
                    out_headers["content-type"] = TEXT_CT
                    given = scripted.body
                    body = given.encode() if isinstance(given, str) else given
            if scripted is not None:
                out_headers.update({k.lower(): v for k, v in scripted.headers.items()})
            if status in _NO_BODY or status < 200:
                body = b""
            if not body:
                out_headers.pop("content-type", None)
            params, _ = _decode(headers, raw, webhook=path.startswith("/services/"))
            self.requests.append(RecordedRequest(
                method, path, query, headers, params, status, _error_of(status, body),
                scripted is not None,
            ))  # fmt: skip
            return Answer(status, out_headers, body, scripted.delay if scripted else 0.0)


# -- pure helpers ----------------------------------------------------------------------------
def _normalise(channel: str) -> str:
    return channel.strip().removeprefix("#")


def _decode(
    headers: dict[str, str], raw: bytes, *, webhook: bool
) -> tuple[dict[str, Any], str | None]:
    """Body → params, or ({}, Slack's error code) when it cannot be decoded."""
    ctype = headers.get("content-type", "").split(";")[0].strip().lower()
    if not raw:
        return {}, "invalid_payload" if webhook else None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {}, "invalid_payload" if webhook else "invalid_form_data"
    if ctype == "application/json" or (webhook and ctype != "application/x-www-form-urlencoded"):
        try:
            data = json.loads(text)
        except ValueError:
            return {}, "invalid_payload" if webhook else "invalid_json"
        if not isinstance(data, dict):
            return {}, "invalid_payload" if webhook else "json_not_object"
        return data, None
    if ctype == "application/x-www-form-urlencoded":
        form = dict(parse_qsl(text, keep_blank_values=True))
        if webhook:  # hooks.slack.com also takes payload=<json>
            try:
                data = json.loads(form.get("payload", ""))
            except ValueError:
                return {}, "invalid_payload"
            return (data, None) if isinstance(data, dict) else ({}, "invalid_payload")
        return form, None
    return {}, "invalid_form_data"


def _error_of(status: int, body: bytes) -> str | None:
    with contextlib.suppress(ValueError):
        data = json.loads(body)
        if isinstance(data, dict) and data.get("ok") is False:
            return str(data.get("error"))
    if status != 200:
        return body.decode("utf-8", "replace") or f"HTTP {status}"
    return None


def _text_object(obj: Any, limit: int, *, plain_only: bool = False) -> bool:
    kinds = ("plain_text",) if plain_only else ("plain_text", "mrkdwn")
    if not isinstance(obj, dict) or obj.get("type") not in kinds:
        return False
    text = obj.get("text")
    return isinstance(text, str) and 1 <= len(text) <= limit


def _image_element(obj: dict[str, Any]) -> bool:
    alt = obj.get("alt_text")
    source = isinstance(obj.get("image_url"), str) or isinstance(obj.get("slack_file"), dict)
    return source and isinstance(alt, str) and len(alt) <= MAX_ALT_TEXT


def _valid_block(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") not in _BLOCK_TYPES:
        return False
    kind = block["type"]
    if kind == "section":
        text, fields = block.get("text"), block.get("fields")
        if text is None and fields is None:
            return False
        if text is not None and not _text_object(text, MAX_SECTION_TEXT):
            return False
        if fields is not None:
            if not isinstance(fields, list) or not 1 <= len(fields) <= MAX_FIELDS:
                return False
            return all(_text_object(f, MAX_FIELD_TEXT) for f in fields)
        return True
    if kind == "header":
        return _text_object(block.get("text"), MAX_HEADER_TEXT, plain_only=True)
    if kind in ("context", "actions"):
        elements = block.get("elements")
        most = MAX_CONTEXT_ELEMENTS if kind == "context" else MAX_ACTIONS_ELEMENTS
        if not isinstance(elements, list) or not 1 <= len(elements) <= most:
            return False
        if kind == "actions":
            return all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in elements)
        return all(
            _text_object(e, MAX_TEXT_OBJECT)
            or (isinstance(e, dict) and e.get("type") == "image" and _image_element(e))
            for e in elements
        )
    if kind == "image":
        return _image_element(block)
    if kind == "markdown":
        text = block.get("text")
        return isinstance(text, str) and 1 <= len(text) <= MAX_MARKDOWN_BLOCK_TEXT
    if kind == "rich_text":
        return isinstance(block.get("elements"), list)
    return True  # divider, video, file, input, table: shape not checked


def _valid_blocks(blocks: list[Any]) -> bool:
    if len(blocks) > MAX_BLOCKS or not all(_valid_block(b) for b in blocks):
        return False
    ids = [b["block_id"] for b in blocks if "block_id" in b]
    if not all(isinstance(i, str) and 1 <= len(i) <= MAX_BLOCK_ID for i in ids):
        return False
    return len(set(ids)) == len(ids)  # Slack rejects duplicate block_ids in one message


def _text_strings(node: Any) -> Iterator[str]:
    """Every string stored under a ``"text"`` key, depth first."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "text" and isinstance(value, str):
                yield value
            else:
                yield from _text_strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _text_strings(item)


def _strip_code(text: str) -> str:
    return _CODE_SPAN.sub(" ", _CODE_FENCE.sub(" ", text))


def _scan(
    text: str | None, blocks: list[dict[str, Any]] | None, *, mrkdwn: bool
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Mentions and links Slack would render, ignoring code spans and fences."""
    pings: list[str] = []
    links: list[tuple[str, str]] = []

    def visit_text(value: str, *, parse_links: bool) -> None:
        visible = _strip_code(value)
        pings.extend(f"<{m.group(1)}>" for m in _MENTION.finditer(visible))
        if parse_links:
            links.extend((m.group(1), m.group(2) or m.group(1)) for m in _LINK.finditer(visible))

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
            return
        if not isinstance(node, dict):
            return
        kind = node.get("type")
        if kind in ("mrkdwn", "plain_text") and isinstance(node.get("text"), str):
            visit_text(node["text"], parse_links=kind == "mrkdwn")
        elif kind == "rich_text_preformatted":
            return  # a code block: nothing inside renders as a mention
        elif kind == "broadcast" and isinstance(node.get("range"), str):
            pings.append(f"<!{node['range']}>")
        elif kind == "user" and isinstance(node.get("user_id"), str):
            pings.append(f"<@{node['user_id']}>")
        elif kind == "usergroup" and isinstance(node.get("usergroup_id"), str):
            pings.append(f"<!subteam^{node['usergroup_id']}>")
        elif kind == "link" and isinstance(node.get("url"), str):
            links.append((node["url"], str(node.get("text") or node["url"])))
        for value in node.values():
            if isinstance(value, dict | list):
                walk(value)

    if text:
        visit_text(text, parse_links=mrkdwn)
    walk(blocks or [])
    return tuple(dict.fromkeys(pings)), tuple(links)
