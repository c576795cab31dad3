"""Why GitHub could not be reached, in one line that names the fix: a host name that does not
resolve, a connection refused or never answered, a proxy that failed, a TLS certificate not
trusted. httpx's own words (``[Errno -2] Name or service not known``) say what broke, not what
to do about it; on a machine without direct internet access the fix is the proxy variables
httpx reads (``HTTPS_PROXY``, ``NO_PROXY``), ``github.api_url`` or a firewall rule.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator

import httpx

_PROXY_FIX = ("behind a proxy, set HTTPS_PROXY (and NO_PROXY for hosts reached directly); "
              "else check github.api_url")
_DNS_WORDS = ("name or service not known", "nodename nor servname", "name resolution",
              "no address associated", "getaddrinfo failed")


def _causes(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _host(error: httpx.RequestError, api_url: str) -> str:
    try:
        url = error.request.url
    except RuntimeError:  # raised before a request was built
        url = httpx.URL(api_url)
    default = {"https": 443, "http": 80}.get(url.scheme)
    return url.host if url.port in (None, default) else f"{url.host}:{url.port}"


def does_not_resolve(error: httpx.RequestError) -> bool:
    """Whether the host's name did not resolve (DNS): retrying in seconds changes nothing, so
    the one line naming the fix is said at once."""
    if isinstance(error, httpx.ProxyError):
        return False
    causes = list(_causes(error))
    words = " ".join(str(cause) for cause in causes).lower()
    return any(isinstance(c, socket.gaierror) for c in causes) or any(
        w in words for w in _DNS_WORDS)


def why_unreachable(error: httpx.RequestError, api_url: str) -> str:
    """One line: what failed on the way to GitHub, and the fix."""
    host = _host(error, api_url)
    causes = list(_causes(error))
    words = " ".join(str(cause) for cause in causes).lower()
    if isinstance(error, httpx.ProxyError):
        return (f"the proxy refused or failed the connection to {host}: check HTTPS_PROXY and "
                "NO_PROXY (a host reached directly belongs in NO_PROXY)")
    if does_not_resolve(error):
        return (f"the name {host} does not resolve (DNS): no internet access here? "
                f"{_PROXY_FIX[0].upper()}{_PROXY_FIX[1:]}")
    if any(isinstance(c, ssl.SSLError) for c in causes):
        return (f"the TLS connection to {host} failed ({type(causes[-1]).__name__}): a proxy "
                "that inspects TLS needs its CA in SSL_CERT_FILE; " + _PROXY_FIX)
    if isinstance(error, httpx.ConnectTimeout):
        return (f"no answer from {host} (connect timeout): a firewall may drop the "
                f"connection; {_PROXY_FIX}")
    if any(isinstance(c, ConnectionRefusedError) for c in causes) or "refused" in words:
        return (f"{host} refused the connection: nothing listens there, or a firewall "
                f"rejects it; {_PROXY_FIX}")
    if isinstance(error, httpx.TimeoutException):
        return (f"{host} did not answer within github.timeout: a slow network, or a firewall "
                f"dropping it; {_PROXY_FIX}")
    if isinstance(error, httpx.ConnectError):
        return (f"cannot connect to {host} ({type(causes[-1]).__name__}): a firewall? "
                + _PROXY_FIX)
    return f"the exchange with {host} failed ({type(error).__name__})"
