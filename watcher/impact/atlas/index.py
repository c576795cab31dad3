"""The package index's JSON API (PyPI's, or a mirror's): the wheels of one release, and the
download of the smallest, checked against the size and sha256 the index gives.

    GET {base}/pypi/{package}/{version}/json   -> {"info": {"version"}, "urls": [{"filename",
                                                   "url", "size", "packagetype",
                                                   "digests": {"sha256"}}]}

(https://docs.pypi.org/api/json/). A 404 is a version not yet published; a timeout, a refused
connection or a server error is an index out of reach; both are errors of their own so the
caller can say "not yet" or "skipped" in one line.

The index answers only for itself: its JSON is followed through redirects on its own origin
only, and must be of the version asked for (its ``info.version`` and each wheel's file name);
a wheel is downloaded from the URL the JSON gives (PyPI's are on files.pythonhosted.org) and
followed only to that URL's own origin or a host of ``hosts`` (``[impact] package_hosts``).
Every exchange is held to the budget (``budget.py``, ``limits.py``): an overall deadline, the
JSON's size, the wheel's declared size (capped, and checked while streaming), a throughput
floor. A partial download is removed on every way out, SIGTERM's exception included.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from watcher.impact.atlas.budget import MAX_JSON, Budget, megabytes
from watcher.impact.atlas.errors import (
    AtlasError,
    ChecksumMismatch,
    ForeignHost,
    IndexUnreachable,
    NotYetPublished,
    OverBudget,
    WrongVersion,
)
from watcher.impact.atlas.limits import Deadline, Floor

DEFAULT_INDEX = "https://pypi.org"
TIMEOUT = 60.0  # seconds without a byte before giving up (a wheel is 60-200 MB)
_REDIRECTS = 5

if TYPE_CHECKING:
    import httpx

Allowed = Callable[["httpx.URL"], bool]


@dataclass(frozen=True, slots=True)
class WheelFile:
    filename: str
    url: str
    size: int
    sha256: str


class PackageIndex:
    """One index; ``timeout`` (seconds without a byte), ``budget`` and ``transport`` are
    injected (tests: a loopback fake, short limits). ``abort`` (another thread) ends the
    exchange in flight and every later one."""

    def __init__(self, base: str = DEFAULT_INDEX, *, timeout: float = TIMEOUT,
                 budget: Budget | None = None, hosts: tuple[str, ...] = (),
                 transport: httpx.BaseTransport | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.base = base.rstrip("/")
        self.budget = budget or Budget()
        self.hosts = frozenset(host.lower() for host in hosts)
        self._timeout = timeout
        self._transport = transport
        self._monotonic = monotonic
        self._opened: httpx.Client | None = None
        self._active: set[Deadline] = set()
        self._lock = threading.Lock()
        self._aborted = False

    @property
    def _client(self) -> httpx.Client:
        """Made on the first request: a run whose atlases are all bundled (the offline
        ``impact``) never imports httpx nor builds its TLS context (~40 ms)."""
        if self._opened is None:
            import httpx

            # No connection is kept for another request: each one is a new connection, whose
            # socket its deadline learns (``limits.Deadline``).
            self._opened = httpx.Client(
                timeout=self._timeout, transport=self._transport, follow_redirects=False,
                limits=httpx.Limits(max_keepalive_connections=0),
                headers={"user-agent": "release-watch (API atlas)",
                         "accept-encoding": "identity"})
        return self._opened

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            active = list(self._active)
        for deadline in active:
            deadline.cut("stopped")

    def wheels(self, package: str, version: str) -> list[WheelFile]:
        """The wheels the index lists for ``package==version``, smallest first."""
        url = f"{self.base}/pypi/{package}/{version}/json"
        status, body = self._json(url)
        if status == 404:
            raise NotYetPublished(f"{package} {version} is not on {self.base} yet",
                                  package=package, version=version)
        try:
            document = json.loads(body)
            said = (document.get("info") or {}).get("version")
            files = document.get("urls") or []
            found = [WheelFile(str(entry["filename"]), str(entry["url"]), int(entry["size"]),
                               str(entry["digests"]["sha256"]))
                     for entry in files if _is_wheel(entry)]
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise IndexUnreachable(f"{url}: not the index's JSON ({error})") from error
        for named in [said, *(_file_version(wheel.filename) for wheel in found)]:
            if named is not None and not _same_version(str(named), version):
                raise WrongVersion(f"{url}: the index answers with {package} {named} for "
                                   f"{version}; refused")
        return sorted(found, key=lambda wheel: (wheel.size, wheel.filename))

    def smallest_wheel(self, package: str, version: str) -> WheelFile:
        found = self.wheels(package, version)
        if not found:
            raise NotYetPublished(f"{package} {version} has no wheel on {self.base} yet",
                                  package=package, version=version)
        return found[0]

    def download(self, wheel: WheelFile, directory: Path, *,
                 progress: Callable[[int], None] | None = None) -> Path:
        """The wheel, written under ``directory`` once its size and sha256 are the index's;
        on any failure nothing is left behind. ``progress``: told the bytes so far."""
        budget = self.budget
        if wheel.size > budget.max_wheel:
            raise OverBudget(f"{wheel.filename}: {megabytes(wheel.size)}, over the cap of "
                             f"{megabytes(budget.max_wheel)} (impact.wheel_max_size)")
        target = directory / Path(wheel.filename).name
        with tempfile.NamedTemporaryFile(dir=directory, delete=False, suffix=".part") as part:
            partial = Path(part.name)
            try:
                digest = self._stream(wheel, part.write, progress)
            except BaseException:
                part.close()
                partial.unlink(missing_ok=True)
                raise
        if digest != wheel.sha256.lower():
            partial.unlink(missing_ok=True)
            raise ChecksumMismatch(f"{wheel.filename}: sha256 {digest} is not the "
                                   f"{wheel.sha256} the index gives; nothing was kept")
        partial.replace(target)
        return target

    def _stream(self, wheel: WheelFile, write: Callable[[bytes], Any],
                progress: Callable[[int], None] | None) -> str:
        """Streams the wheel's body to ``write``; its sha256."""
        digest = hashlib.sha256()
        received = 0
        with self._exchange(wheel.url, self.budget.download_seconds, "the download of "
                            f"{wheel.filename}", self._wheel_origin(wheel.url)
                            ) as (response, deadline):
            length = response.headers.get("content-length")
            if length is not None and length.isdigit() and int(length) != wheel.size:
                raise ChecksumMismatch(f"{wheel.filename}: the server sends "
                                       f"{megabytes(int(length))} where the index declares "
                                       f"{megabytes(wheel.size)}; nothing was kept")
            floor = Floor(self.budget, f"the download of {wheel.filename}", self._monotonic())
            for chunk in response.iter_raw():
                received += len(chunk)
                if received > wheel.size:
                    raise ChecksumMismatch(f"{wheel.filename}: the server sends more than the "
                                           f"{megabytes(wheel.size)} the index declares; "
                                           "abandoned, nothing was kept")
                deadline.check()
                floor.add(len(chunk), self._monotonic())
                digest.update(chunk)
                write(chunk)
                if progress is not None:
                    progress(received)
        if received < wheel.size:
            raise IndexUnreachable(f"{wheel.url}: cut short at {megabytes(received)} of "
                                   f"{megabytes(wheel.size)}")
        return digest.hexdigest()

    def _json(self, url: str) -> tuple[int, bytes]:
        body = bytearray()
        seconds = self.budget.json_seconds
        with self._exchange(url, seconds, f"the index's JSON {url}", _same_origin(url),
                            missing_ok=True) as (response, deadline):
            if response.status_code == 404:
                return 404, b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_JSON:
                    raise OverBudget(f"{url}: the JSON is over {megabytes(MAX_JSON)}; refused")
                deadline.check()
        return 200, bytes(body)

    @contextmanager
    def _exchange(self, url: str, seconds: float, what: str, allowed: Allowed, *,
                  missing_ok: bool = False) -> Iterator[tuple[httpx.Response, Deadline]]:
        """A GET of ``url`` answering 200 (or, ``missing_ok``, 404), redirects followed where
        ``allowed``, the whole of it within ``seconds``; httpx's errors as the atlas's, in one
        line."""
        import httpx

        deadline = Deadline(seconds, what, monotonic=self._monotonic)
        with self._lock:
            if self._aborted:
                deadline.cut("stopped")
            self._active.add(deadline)
        try:
            with deadline:
                yield from self._followed(url, deadline, allowed, missing_ok)
        except httpx.HTTPError as error:
            deadline.check()  # a read ended by the deadline's cut says so
            if isinstance(error, httpx.TimeoutException):
                raise IndexUnreachable(f"{url}: timed out") from error
            raise IndexUnreachable(f"{url}: {_reason(error)}") from error
        finally:
            with self._lock:
                self._active.discard(deadline)

    def _followed(self, url: str, deadline: Deadline, allowed: Allowed, missing_ok: bool
                  ) -> Iterator[tuple[httpx.Response, Deadline]]:
        for _ in range(_REDIRECTS + 1):
            deadline.check()
            with self._client.stream("GET", url, extensions={"trace": deadline.trace}
                                     ) as response:
                if not response.is_redirect:
                    _check(response, url, missing_ok)
                    yield response, deadline
                    return
                target = response.url.join(response.headers.get("location", ""))
            if not allowed(target):
                raise ForeignHost(f"{url}: the index redirects to {_origin(target)}, which it "
                                  "does not answer for (impact.package_hosts); refused")
            url = str(target)
        raise IndexUnreachable(f"{url}: more than {_REDIRECTS} redirects")

    def _wheel_origin(self, url: str) -> Allowed:
        own = _same_origin(url)
        return lambda target: own(target) or target.host.lower() in self.hosts


def _origin(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}"


def _same_origin(url: str) -> Allowed:
    import httpx

    mine = _origin(httpx.URL(url))
    return lambda target: _origin(target) == mine


def _file_version(filename: str) -> str | None:
    """PEP 427: ``{distribution}-{version}-...whl``."""
    parts = filename.split("-")
    return parts[1] if len(parts) >= 5 else None


def _same_version(said: str, asked: str) -> bool:
    try:
        return Version(said).public == Version(asked).public
    except InvalidVersion:
        return False


def _is_wheel(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("packagetype") == "bdist_wheel" \
        and str(entry.get("filename", "")).endswith(".whl")


def _check(response: httpx.Response, url: str, missing_ok: bool) -> None:
    status = response.status_code
    if status >= 500:
        raise IndexUnreachable(f"{url}: the index answered {status}")
    if status != 200 and not (status == 404 and missing_ok):
        raise AtlasError(f"{url}: the index answered {status}")


def _reason(error: httpx.HTTPError) -> str:
    import httpx

    if isinstance(error, httpx.ConnectError):
        return "cannot connect (offline, or no index there)"
    return type(error).__name__
