"""A fake Slack Socket Mode server: a websocket server (RFC 6455, standard library only) on
127.0.0.1 that ``apps.connections.open`` on the fake Slack points clients at.

It sends ``hello`` when a client connects, answers pings with pongs as Slack does, and lets a
test deliver a slash command as Slack's envelope (``type: slash_commands``) and wait for the
client's acknowledgement, which carries the ephemeral answer
(api.slack.com/apis/connections/socket#command). slack-sdk's built-in client speaks to it over
a real socket, so its handshake, framing, masking and acknowledgements all run for real.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import socket
import struct
import threading
import uuid
from typing import Any

_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"  # RFC 6455 section 1.3
TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA


def _frame(opcode: int, payload: bytes) -> bytes:
    """A final, unmasked frame: what a server sends."""
    size = len(payload)
    if size < 126:
        header = struct.pack("!BB", 0x80 | opcode, size)
    elif size < 1 << 16:
        header = struct.pack("!BBH", 0x80 | opcode, 126, size)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 127, size)
    return header + payload


def _exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("the client went away")
        data += chunk
    return data


def _read_frame(sock: socket.socket) -> tuple[int, bytes]:
    """One frame from a client: clients must mask (RFC 6455 section 5.3)."""
    first, second = _exactly(sock, 2)
    size = second & 0x7F
    if size == 126:
        (size,) = struct.unpack("!H", _exactly(sock, 2))
    elif size == 127:
        (size,) = struct.unpack("!Q", _exactly(sock, 8))
    if not second & 0x80:
        raise ConnectionError("an unmasked client frame")
    mask = _exactly(sock, 4)
    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(_exactly(sock, size)))
    return first & 0x0F, payload


class _Connection:
    def __init__(self, sock: socket.socket, server: FakeSocketMode) -> None:
        self.sock = sock
        self.server = server
        self.lock = threading.Lock()
        self.open = True

    def send(self, opcode: int, payload: bytes) -> None:
        with self.lock:
            self.sock.sendall(_frame(opcode, payload))

    def handshake(self) -> bool:
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = self.sock.recv(4096)
            if not chunk:
                return False
            request += chunk
        lines = request.decode("latin-1").split("\r\n")
        headers = {
            k.strip().lower(): v.strip()
            for k, _, v in (line.partition(":") for line in lines[1:] if ":" in line)
        }
        self.server.paths.append(lines[0].split(" ")[1])
        key = headers.get("sec-websocket-key", "")
        accept = base64.b64encode(hashlib.sha1((key + _GUID).encode()).digest()).decode()
        self.sock.sendall(
            (
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
            ).encode()
        )
        return True

    def serve(self) -> None:
        try:
            if not self.handshake():
                return
            self.send(TEXT, json.dumps({"type": "hello", "num_connections": 1}).encode())
            self.server.connected.set()
            while True:
                opcode, payload = _read_frame(self.sock)
                if opcode == PING:
                    self.send(PONG, payload)
                elif opcode == TEXT:
                    self.server.received(json.loads(payload))
                elif opcode == CLOSE:
                    self.send(CLOSE, payload[:2])
                    return
        except (OSError, ConnectionError, ValueError):
            return
        finally:
            self.open = False
            self.sock.close()


class FakeSocketMode:
    """Start it, hand its ``url`` to the fake Slack (``FakeSlack.socket_url``), then
    ``command(...)`` once a client is connected."""

    def __init__(self) -> None:
        self.paths: list[str] = []  # each connection's request path (the ticket)
        self.acks: dict[str, dict[str, Any]] = {}
        self.envelopes: list[dict[str, Any]] = []
        self.connected = threading.Event()
        self._acked = threading.Condition()
        self._connections: list[_Connection] = []
        self._listener: socket.socket | None = None

    @property
    def url(self) -> str:
        assert self._listener is not None, "start() first"
        port = self._listener.getsockname()[1]
        return f"ws://127.0.0.1:{port}/link/?ticket=fake-ticket&app_id=A000"

    def start(self) -> FakeSocketMode:
        self._listener = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            connection = _Connection(sock, self)
            self._connections.append(connection)
            threading.Thread(target=connection.serve, daemon=True).start()

    def received(self, message: dict[str, Any]) -> None:
        with self._acked:
            if "envelope_id" in message:
                self.acks[message["envelope_id"]] = message
                self._acked.notify_all()

    def send(self, envelope: dict[str, Any]) -> None:
        """To the newest open connection, as Slack sends to one of an app's connections."""
        if not self.connected.wait(10):
            raise AssertionError("no Socket Mode client connected")
        connection = next(c for c in reversed(self._connections) if c.open)
        self.envelopes.append(envelope)
        connection.send(TEXT, json.dumps(envelope).encode())

    def command(
        self,
        text: str,
        *,
        channel_id: str,
        channel_name: str = "",
        user_id: str = "U111",
        timeout: float = 10,
        again: str | None = None,
    ) -> dict[str, Any]:
        """Deliver ``/release-watch TEXT`` typed in that channel; the acknowledgement.
        ``again``: the id of an envelope delivered before, delivered again as Slack retries
        one whose acknowledgement was late (``retry_attempt`` 1, ``retry_reason`` timeout)."""
        envelope_id = again or str(uuid.uuid4())
        with self._acked:
            self.acks.pop(envelope_id, None)  # wait for this delivery's own acknowledgement
        payload = {
            "token": "deprecated-verification-token",
            "team_id": "T000",
            "team_domain": "acme",
            "channel_id": channel_id,
            "channel_name": channel_name,
            "user_id": user_id,
            "user_name": "someone",
            "command": "/release-watch",
            "text": text,
            "api_app_id": "A000",
            "is_enterprise_install": "false",
            "response_url": "https://hooks.slack.com/commands/T000/1/x",
            "trigger_id": "1.2.3",
        }
        envelope: dict[str, Any] = {
            "envelope_id": envelope_id,
            "type": "slash_commands",
            "payload": payload,
            "accepts_response_payload": True,
        }
        return self._acknowledged(envelope, again is not None, timeout, repr(text))

    def click(self, payload: dict[str, Any], *, timeout: float = 10,
              again: str | None = None) -> str:
        """Deliver a click (a ``block_actions`` payload) as Slack's ``interactive`` envelope
        and wait for its (empty) acknowledgement; the envelope's id. ``again``: that envelope
        delivered again (``retry_attempt`` 1)."""
        envelope_id = again or str(uuid.uuid4())
        with self._acked:
            self.acks.pop(envelope_id, None)
        envelope: dict[str, Any] = {"envelope_id": envelope_id, "type": "interactive",
                                    "payload": payload, "accepts_response_payload": False}
        self._acknowledged(envelope, again is not None, timeout, "a click")
        return envelope_id

    def _acknowledged(self, envelope: dict[str, Any], again: bool, timeout: float,
                      what: str) -> dict[str, Any]:
        """Send ``envelope`` (``again``: as Slack retries it) and wait for its
        acknowledgement."""
        envelope_id = envelope["envelope_id"]
        if again:
            envelope.update(retry_attempt=1, retry_reason="timeout")
        self.send(envelope)
        with self._acked:
            if not self._acked.wait_for(lambda: envelope_id in self.acks, timeout):
                raise AssertionError(f"no acknowledgement of {what} within {timeout}s")
            return self.acks[envelope_id]

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
        for connection in self._connections:
            with contextlib.suppress(OSError):
                connection.sock.shutdown(socket.SHUT_RDWR)
            connection.sock.close()

    def __enter__(self) -> FakeSocketMode:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
