"""What an endpoint of the daemon's HTTP listener is: a function from a request to a response.

The listener (``watcher.server.listener``) owns the socket and the threads; the endpoints are plain
functions over these two values, so each one is tested without a socket and new ones (the Slack
request URL, the feeds) plug in without the listener knowing what they do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Request:
    """One HTTP request as an endpoint sees it; header names are lower-case."""

    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    query: str = ""

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)


Handler = Callable[[Request], Response]
"""An endpoint. Exact paths map to one handler; a path ending in ``/`` is a prefix route."""


@dataclass(frozen=True)
class Route:
    """An endpoint and the methods it takes (a HEAD is answered as a GET without the body).
    A routes table maps a path to a ``Handler`` (GET only) or to a ``Route``."""

    handler: Handler
    methods: frozenset[str] = frozenset({"GET"})
