"""The daemon's HTTP listener: the standard library's threaded server in a daemon thread.

Routes are exact paths, or prefixes ending in ``/`` (the longest one wins); a path no route
knows is 404, a method its route does not take 405. Whatever an endpoint raises, the client
gets a bare 500 and the log one line: never a traceback, never the error's text (it may name
a path or quote a secret) on the wire.

Framing is strict, so that no proxy in front can read a request differently from us (a
request hidden in a body): a ``Content-Length`` is ASCII digits, at most ``MAX_DIGITS`` of them,
and given once; a ``Transfer-Encoding`` is refused (411 for ``chunked``, 501 for any other,
400 beside a ``Content-Length``); a field value holding a control character is 400. Whatever
cannot be read is answered 400 (never a 500, never a close without an answer, but where the
client stops sending), and logged at debug level only: it is the client's mistake, not ours.

Each connection's socket blocks, its waits bounded by the kernel (``IDLE_TIMEOUT``: a
request that stops coming is dropped unanswered), and an answer is one ``sendmsg``: a scrape
during a poll gives up and takes back the interpreter's lock as few times as it can.
"""

from __future__ import annotations

import _thread
import logging
import re
import socket
import struct
import sys
import threading
from collections.abc import Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from watcher.errors import WatcherError
from watcher.server.routes import Handler, Request, Response, Route
from watcher.untrusted import escape_controls

logger = logging.getLogger(__name__)

MAX_BODY = 1 << 20  # what a POST may carry (a Slack slash command is a few hundred bytes)
IDLE_TIMEOUT = 15.0  # seconds a kept-alive connection may sit idle, or a request dribble in
MAX_LINE = 8192  # bytes of one header field line
MAX_FIELDS = 100  # header fields of one request
MAX_DIGITS = 16  # of a Content-Length: enough for any body, too few to be slow to read
BACKLOG = 1024  # connections the kernel completes before we accept them ([server] backlog)
_DIGITS = re.compile(f"[0-9]{{1,{MAX_DIGITS}}}")  # str.isdigit takes "²"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # a field name (RFC 9110 §5.1)
_FIELD_VALUE_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f]")  # RFC 9110 §5.5: no CTL but tab
Routes = Mapping[str, Handler | Route]
_KNOWN = frozenset(status.value for status in HTTPStatus)


def find_route(routes: Routes, path: str) -> Route | None:
    """The route for ``path``: its exact entry, else the longest prefix entry (``/feeds/``)."""
    found = routes.get(path)
    if found is None:
        prefixes = [key for key in routes if key.endswith("/") and path.startswith(key)]
        found = routes[max(prefixes, key=len)] if prefixes else None
    if found is None or isinstance(found, Route):
        return found
    return Route(found)


def dispatch(routes: Routes, request: Request) -> Response:
    """The response to ``request``; a HEAD is answered as a GET (the body is left off later)."""
    route = find_route(routes, request.path)
    if route is None:
        return Response(404, b"not found\n")
    method = "GET" if request.method == "HEAD" else request.method
    if method not in route.methods:
        allowed = sorted({*route.methods, *(["HEAD"] if "GET" in route.methods else [])})
        return Response(405, b"method not allowed\n", headers={"allow": ", ".join(allowed)})
    try:
        return route.handler(request)
    except Exception as error:  # one endpoint's bug must not reach the client or stop others
        logger.error(  # the path is the client's: its controls shown, never obeyed
            "%s %s failed: %s: %s",
            escape_controls(request.method),
            escape_controls(request.path),
            type(error).__name__,
            "; ".join(str(error).splitlines()),
        )
        return Response(500, b"internal error\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a client holding a connection never keeps the process alive
    request_queue_size = BACKLOG  # the standard library's 5 drops a burst's connects
    routes: Routes

    def process_request(self, request: Any, client_address: Any) -> None:
        """Each connection on a thread of its own, started without waiting for it to run:
        ``threading.Thread.start`` waits, and on a busy machine each wait costs a switch of
        the interpreter's lock (5 ms), so accepting a burst of 500 connects took seconds and
        a probe queued behind them timed out. The threads are daemons, as
        ``daemon_threads`` makes ``ThreadingMixIn``'s (``process_request_thread`` closes the
        connection and reports what it raised)."""
        _thread.start_new_thread(self.process_request_thread, (request, client_address))

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Outside an endpoint (a client hanging up mid-answer): one line, no traceback."""
        error = sys.exc_info()[1]
        level = logging.DEBUG if isinstance(error, OSError) else logging.WARNING
        logger.log(
            level,
            "listener: %s from %s: %s",
            type(error).__name__,
            client_address[0] if client_address else "?",
            error,
        )


class _Server6(_Server):
    address_family = socket.AF_INET6


def _bound_waits(connection: socket.socket, seconds: float) -> None:
    """Each receive or send on ``connection`` gives up after ``seconds``, kept a blocking
    socket: the kernel times the wait (SO_RCVTIMEO, SO_SNDTIMEO), so a receive is one system
    call that gives up the interpreter's lock once. Python's own timeout would ``poll`` first
    and then receive: two releases, and two waits to take the lock back from the poll's
    threads, for every read and every write. Where the options are not to be had, Python's."""
    whole = int(seconds)
    timeval = struct.pack("@ll", whole, int((seconds - whole) * 1_000_000))
    try:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)
    except (OSError, AttributeError):  # not Linux or a BSD: a Python-level timeout
        connection.settimeout(seconds)


class _Incomplete(TimeoutError):
    """The request stopped coming (its wait ran out, or the client closed mid-request): the
    connection is dropped unanswered, as the standard library drops one that timed out."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: Prometheus scrapes over one connection
    server_version = "release-watch"
    sys_version = ""
    timeout = None  # blocking: ``setup`` has the kernel bound each wait to IDLE_TIMEOUT
    # An answer is one write, but the standard library's error pages are several: with
    # Nagle's algorithm each later one waits for the client's delayed ACK (40 ms on Linux).
    disable_nagle_algorithm = True
    server: _Server
    raw_requestline: bytes  # read by handle_one_request
    fields: dict[str, str]  # the request's header fields, names lower-case

    def setup(self) -> None:
        super().setup()
        _bound_waits(self.connection, IDLE_TIMEOUT)

    def log_message(self, format: str, *args: Any) -> None:
        if logger.isEnabledFor(logging.DEBUG):  # every request comes here: format it only then
            logger.debug("listener: %s", format % args)

    def parse_request(self) -> bool:
        """The request line and the header fields, read plainly: the standard library hands
        the fields to the e-mail parser, half of what answering a scrape costs."""
        self.command, self.close_connection = "", True
        self.request_version = "HTTP/1.0"  # what an error answer to a bad line is sent as
        if not self.raw_requestline.endswith(b"\n"):
            raise _Incomplete("the request line stopped coming")  # a wait ran out mid-line
        self.requestline = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = self.requestline.split()
        if len(words) != 3 or words[2] not in ("HTTP/1.0", "HTTP/1.1"):
            self.send_error(HTTPStatus.BAD_REQUEST, "Bad request line")
            return False
        self.command, self.path, self.request_version = words
        self.fields = {}
        for _ in range(MAX_FIELDS + 1):
            line = self.rfile.readline(MAX_LINE + 1)
            if line in (b"\r\n", b"\n"):
                break
            if not line.endswith(b"\n") and len(line) <= MAX_LINE:
                # b"" (a wait ran out: a receive timed by the kernel reads as nothing) or
                # part of a line: the fields stopped coming
                raise _Incomplete("the request's header fields stopped coming")
            name, colon, value = str(line, "iso-8859-1").partition(":")
            # Only spaces and tabs surround a value (RFC 9110 §5.6.3): str.strip would also
            # take a form feed or \x1f, so "1\x1f" would read as a length a proxy may not see.
            value = value.removesuffix("\n").removesuffix("\r").strip(" \t")
            if (len(line) > MAX_LINE or not colon or not _TOKEN.fullmatch(name)
                    or _FIELD_VALUE_CONTROL.search(value)):
                self.send_error(HTTPStatus.BAD_REQUEST, "Bad header field")
                return False
            key = name.lower()
            if key in self.fields:
                if key == "content-length":  # which one a proxy honours is anyone's guess
                    self.send_error(HTTPStatus.BAD_REQUEST, "Content-Length given twice")
                    return False
                value = f"{self.fields[key]}, {value}"  # RFC 9110 §5.3: one list, in order
            self.fields[key] = value
        else:
            self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "Too many fields")
            return False
        connection = self.fields.get("connection", "").lower()
        self.close_connection = "close" in connection or (
            self.request_version == "HTTP/1.0" and "keep-alive" not in connection
        )
        return True

    def _request(self) -> Request | Response:
        framing = _framing_problem(self.fields)
        if framing is not None:
            return framing
        length = int(self.fields.get("content-length", "0"))
        if length > MAX_BODY:
            return Response(413, b"request body too large\n")
        body = self.rfile.read(length) if length else b""
        if body is None or len(body) < length:
            raise _Incomplete("the request's body stopped coming")
        try:
            split = urlsplit(self.path)
        except ValueError:  # "//[": an IPv6 authority never closed
            return Response(400, b"bad request target\n")
        return Request(self.command, unquote(split.path) or "/", self.fields, body, split.query)

    def _serve(self) -> None:
        request = self._request()
        if isinstance(request, Response):
            response, self.close_connection = request, True
        else:
            response = dispatch(self.server.routes, request)
        head, body = self._answer(response)
        gather = body and hasattr(self.connection, "sendmsg")
        sent = self.connection.sendmsg([head, body]) if gather else self.connection.send(head)
        if sent < len(head) + len(body):  # the kernel took part of it: the rest, as it takes it
            self.connection.sendall((head + body)[sent:])

    def _answer(self, response: Response) -> tuple[bytes, bytes]:
        """The whole answer as one write (head and body gathered by ``sendmsg``, not copied
        together): each write gives up the interpreter's lock and waits to take it back from
        the poll's threads (``send_response`` and ``send_header`` would write twice and format
        a log line and a date besides)."""
        headers = {
            "content-type": response.content_type,
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
            "server": self.server_version,
            **response.headers,
            "content-length": str(len(response.body)),
        }
        if self.close_connection:
            headers["connection"] = "close"
        phrase = HTTPStatus(response.status).phrase if response.status in _KNOWN else ""
        head = f"{self.protocol_version} {response.status} {phrase}\r\n" + "".join(
            f"{name}: {value}\r\n" for name, value in headers.items()
        )
        body = b"" if self.command == "HEAD" else response.body
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "listener: %s %s %d", self.command, escape_controls(self.path), response.status
            )
        return (head + "\r\n").encode("latin-1"), body

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _serve


def _framing_problem(fields: Mapping[str, str]) -> Response | None:
    """Why the body's length cannot be known for sure, as the answer; None when it can."""
    coding = fields.get("transfer-encoding")
    if coding is not None:
        if "content-length" in fields:  # RFC 9112 §6.1: a smuggling attempt, or a broken proxy
            return Response(400, b"content-length and transfer-encoding together\n")
        if coding.lower() == "chunked":
            return Response(411, b"send a content-length\n")
        return Response(501, b"transfer-encoding not supported\n")
    length = fields.get("content-length")
    if length is not None and not _DIGITS.fullmatch(length):
        return Response(400, b"bad content-length\n")
    return None


class Listener:
    """``routes`` served on ``host:port`` from a daemon thread, until ``stop``; ``backlog``
    connections wait for their turn in the kernel (``[server] backlog``)."""

    def __init__(self, host: str, port: int, routes: Routes, *, backlog: int = BACKLOG) -> None:
        self.host = host
        self.port = port
        self.routes = routes
        self.backlog = backlog
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Bind now, so a port in use is an error at start, not a silent missing endpoint."""
        kind = _Server6 if ":" in self.host else _Server
        server = kind((self.host, self.port), _Handler, bind_and_activate=False)
        server.request_queue_size = self.backlog  # what server_activate hands to listen()
        try:
            server.server_bind()
            server.server_activate()
        except OSError as error:
            server.server_close()
            raise WatcherError(
                f"cannot listen on {self._where()} ([server] listen): "
                f"{error.strerror or error}; is another process using the "
                "port? Choose another one"
            ) from None
        server.routes = self.routes
        self._server = server
        self.port = server.server_address[1]  # the one chosen for port 0
        self._thread = threading.Thread(
            target=server.serve_forever,
            name="listener",
            kwargs={"poll_interval": 0.25},
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _where(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """``http://HOST:PORT``, the port bound (port 0 asks for any free one)."""
        return f"http://{self._where()}"
