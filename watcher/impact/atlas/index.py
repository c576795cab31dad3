"""The package index's JSON API (PyPI's, or a mirror's): the wheels of one release, and the
download of the smallest, checked against the sha256 the index gives.

    GET {base}/pypi/{package}/{version}/json   -> {"urls": [{"filename", "url", "size",
                                                   "packagetype", "digests": {"sha256"}}]}

(https://docs.pypi.org/api/json/). A 404 is a version not yet published; a timeout, a refused
connection or a server error is an index out of reach; both are errors of their own so the
caller can say "not yet" or "skipped" in one line.
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watcher.impact.atlas.errors import (
    AtlasError,
    ChecksumMismatch,
    IndexUnreachable,
    NotYetPublished,
)

DEFAULT_INDEX = "https://pypi.org"
TIMEOUT = 60.0  # seconds without a byte before giving up (a wheel is 60-200 MB)
_CHUNK = 1 << 20

if TYPE_CHECKING:
    import httpx


@dataclass(frozen=True, slots=True)
class WheelFile:
    filename: str
    url: str
    size: int
    sha256: str


class PackageIndex:
    """One index; ``transport`` and ``timeout`` are injected (tests: a loopback fake and a
    short timeout)."""

    def __init__(self, base: str = DEFAULT_INDEX, *, timeout: float = TIMEOUT,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.base = base.rstrip("/")
        self._timeout = timeout
        self._transport = transport
        self._opened: httpx.Client | None = None

    @property
    def _client(self) -> httpx.Client:
        """Made on the first request: a run whose atlases are all bundled (the offline
        ``impact``) never imports httpx nor builds its TLS context (~40 ms)."""
        if self._opened is None:
            import httpx

            self._opened = httpx.Client(timeout=self._timeout, transport=self._transport,
                                        follow_redirects=True,
                                        headers={"user-agent": "release-watch (API atlas)"})
        return self._opened

    def close(self) -> None:
        if self._opened is not None:
            self._opened.close()

    def wheels(self, package: str, version: str) -> list[WheelFile]:
        """The wheels the index lists for ``package==version``, smallest first."""
        url = f"{self.base}/pypi/{package}/{version}/json"
        response = self._get(url)
        if response.status_code == 404:
            raise NotYetPublished(f"{package} {version} is not on {self.base} yet",
                                  package=package, version=version)
        _check(response, url)
        try:
            files = response.json().get("urls") or []
            found = [WheelFile(str(entry["filename"]), str(entry["url"]), int(entry["size"]),
                               str(entry["digests"]["sha256"]))
                     for entry in files if _is_wheel(entry)]
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise IndexUnreachable(f"{url}: not the index's JSON ({error})") from error
        return sorted(found, key=lambda wheel: (wheel.size, wheel.filename))

    def smallest_wheel(self, package: str, version: str) -> WheelFile:
        found = self.wheels(package, version)
        if not found:
            raise NotYetPublished(f"{package} {version} has no wheel on {self.base} yet",
                                  package=package, version=version)
        return found[0]

    def download(self, wheel: WheelFile, directory: Path) -> Path:
        """The wheel, written under ``directory`` once its sha256 is the index's; on a
        mismatch nothing is left behind."""
        import httpx

        digest = hashlib.sha256()
        target = directory / Path(wheel.filename).name
        with tempfile.NamedTemporaryFile(dir=directory, delete=False, suffix=".part") as part:
            partial = Path(part.name)
            try:
                with self._client.stream("GET", wheel.url) as response:
                    _check(response, wheel.url)
                    for chunk in response.iter_bytes(_CHUNK):
                        digest.update(chunk)
                        part.write(chunk)
            except httpx.TimeoutException as error:
                partial.unlink(missing_ok=True)
                raise IndexUnreachable(f"{wheel.url}: timed out") from error
            except httpx.HTTPError as error:
                partial.unlink(missing_ok=True)
                raise IndexUnreachable(f"{wheel.url}: {_reason(error)}") from error
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
        if digest.hexdigest() != wheel.sha256.lower():
            partial.unlink(missing_ok=True)
            raise ChecksumMismatch(f"{wheel.filename}: sha256 {digest.hexdigest()} is not the "
                                   f"{wheel.sha256} the index gives; nothing was kept")
        partial.replace(target)
        return target

    def _get(self, url: str) -> httpx.Response:
        import httpx

        try:
            return self._client.get(url)
        except httpx.TimeoutException as error:
            raise IndexUnreachable(f"{url}: timed out") from error
        except httpx.HTTPError as error:
            raise IndexUnreachable(f"{url}: {_reason(error)}") from error


def _is_wheel(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("packagetype") == "bdist_wheel" \
        and str(entry.get("filename", "")).endswith(".whl")


def _check(response: httpx.Response, url: str) -> None:
    if response.status_code >= 500:
        raise IndexUnreachable(f"{url}: the index answered {response.status_code}")
    if response.status_code != 200:
        raise AtlasError(f"{url}: the index answered {response.status_code}")


def _reason(error: httpx.HTTPError) -> str:
    import httpx

    if isinstance(error, httpx.ConnectError):
        return "cannot connect (offline, or no index there)"
    return type(error).__name__
