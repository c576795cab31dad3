"""The HTTP plumbing both fakes share: a threaded HTTP/1.1 server on 127.0.0.1, an ephemeral
port, keep-alive connections that ``stop()`` can cut, and a handler that hands each request
to the fake's ``_handle`` and writes back its ``Answer``."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, Self
from urllib.parse import parse_qsl, urlsplit


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    delay: float = 0.0  # real sleep before answering; only for timeout tests
    # The body written piece by piece, each flushed (a slow body: the package index's drip);
    # the content-length stays ``body``'s.
    chunks: Callable[[], Iterator[bytes]] | None = None


class Backend(Protocol):
    latency: float

    def _handle(self, method: str, path: str, query: dict[str, str], headers: dict[str, str],
                body: bytes) -> Answer: ...


class Served:
    """Life cycle shared by the fakes: ``start()`` binds 127.0.0.1 on an ephemeral port and
    serves from a daemon thread (a hung test never blocks exit); ``stop()`` also cuts kept-alive
    connections, so pooled clients see a dead server. Also a context manager."""

    _server: LoopbackServer | None = None

    def start(self) -> Self:
        if self._server is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
        self._server = LoopbackServer(self).start()  # type: ignore[arg-type]
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running; call start() first")
        return self._server.url


class LoopbackServer(ThreadingHTTPServer):
    """Threaded server that remembers open sockets so ``stop()`` can cut keep-alive clients."""

    daemon_threads = True

    def __init__(self, fake: Backend) -> None:
        self.fake = fake
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(target=self.serve_forever,
                                        kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LoopbackServer:
        """Serve from a daemon thread so a hung test never blocks interpreter exit."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and cut kept-alive connections, so pooled clients see a dead server."""
        self.shutdown()
        with self._conns_lock:
            for conn in self._conns:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self.server_close()
        self._thread.join(timeout=5)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conns_lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that time out and hang up are expected here; stay quiet about them."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """Thin HTTP/1.1 adapter: read the body, delegate to the fake, write the answer."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes; avoid 40 ms stalls
    server: LoopbackServer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep pytest output clean."""

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(chunks)
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        body = self._read_body()
        if self.server.fake.latency > 0:
            time.sleep(self.server.fake.latency)
        split = urlsplit(self.path)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        headers = {k.lower(): v for k, v in self.headers.items()}
        answer = self.server.fake._handle(self.command, split.path, query, headers, body)
        if answer.delay > 0:
            time.sleep(answer.delay)
        try:
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            if self.command != "HEAD" and answer.chunks is not None:
                for chunk in answer.chunks():
                    self.wfile.write(chunk)
                    self.wfile.flush()
            elif self.command != "HEAD":
                self.wfile.write(answer.body)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


def exchange(port: int, data: bytes, host: str = "127.0.0.1") -> bytes:
    """What a server on ``host:port`` answers to ``data`` sent as it is (no HTTP client to
    tidy it up), read until the server closes the connection."""
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(data)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer
