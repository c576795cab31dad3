"""A fake package index (PyPI's JSON API and its file downloads) served over real HTTP on
loopback, so the atlas's index client runs the real httpx: status codes, streaming, timeouts.

    GET /pypi/{package}/{version}/json   {"info": {...}, "urls": [{"filename", "url", "size",
                                          "packagetype", "digests": {"sha256", "md5"}}]}
    GET /files/{filename}                the file's bytes

(https://docs.pypi.org/api/json/). A version not added answers 404, as PyPI does for one not
yet published. Faults are set per file: ``corrupt`` serves other bytes than the sha256 says,
``delay`` answers late (only timeout tests use it, with the client's timeout set shorter),
``status`` answers the download with that status and an error page, ``drip`` serves the body
``(bytes, seconds)`` at a time, ``size`` is the size the JSON declares instead of the real
one, ``redirect`` answers the download with a 302 to that URL. For the index as a whole:
``json_status`` answers the JSON API so (an index failing: 503), ``json_redirects`` sends a
version's JSON elsewhere with a 302, ``json_versions`` makes a version's JSON say it is of
another one.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from fakes.loopback import Answer, Served

JSON_CT = "application/json"


@dataclass
class Release:
    package: str
    version: str
    filename: str
    data: bytes
    packagetype: str = "bdist_wheel"
    corrupt: bool = False
    delay: float = 0.0
    status: int = 200  # the download's answer; another status serves an error page
    drip: tuple[int, float] | None = None  # (bytes, seconds): the body served that slowly
    size: int | None = None  # the size the JSON declares, when not the real one
    redirect: str | None = None  # the download answers 302 to this URL


@dataclass
class Drip:
    """A body served ``each`` bytes every ``seconds`` (the server's thread really waits)."""

    data: bytes
    each: int
    seconds: float
    sent: list[int] = field(default_factory=list)

    def __call__(self) -> Iterator[bytes]:
        for start in range(0, len(self.data), self.each):
            time.sleep(self.seconds)
            self.sent.append(self.each)
            yield self.data[start:start + self.each]


class FakePackageIndex(Served):
    latency = 0.0

    def __init__(self) -> None:
        self.releases: list[Release] = []
        self.requests: list[str] = []
        self.json_delay = 0.0  # the JSON API's answers, late (timeout tests)
        self.json_status: int | None = None  # the JSON API failing with this status
        self.json_redirects: dict[str, str] = {}  # version -> where its JSON redirects
        self.json_versions: dict[str, str] = {}  # version -> the version its JSON says
        self._lock = threading.Lock()

    def add(self, package: str, version: str, filename: str, data: bytes, **faults: object
            ) -> Release:
        release = Release(package, version, filename, data, **faults)  # type: ignore[arg-type]
        self.releases.append(release)
        return release

    def _handle(self, method: str, path: str, query: dict[str, str], headers: dict[str, str],
                body: bytes) -> Answer:
        with self._lock:
            self.requests.append(path)
        parts = path.strip("/").split("/")
        if len(parts) == 4 and parts[0] == "pypi" and parts[3] == "json":
            if self.json_status is not None:
                return Answer(self.json_status, {"content-type": "text/html"},
                              b"<html>Service Unavailable</html>")
            return self._json(parts[1], parts[2])
        if len(parts) == 2 and parts[0] == "files":
            return self._file(parts[1])
        return Answer(404, {"content-type": JSON_CT}, b'{"message": "Not Found"}')

    def _json(self, package: str, version: str) -> Answer:
        if version in self.json_redirects:
            return Answer(302, {"location": self.json_redirects[version]}, b"")
        said = self.json_versions.get(version, version)
        files = [r for r in self.releases if r.package == package and r.version == said]
        if not files:
            return Answer(404, {"content-type": JSON_CT}, b'{"message": "Not Found"}',
                          delay=self.json_delay)
        urls = [{"filename": r.filename, "url": f"{self.url}/files/{r.filename}",
                 "size": len(r.data) if r.size is None else r.size,
                 "packagetype": r.packagetype,
                 "digests": {"sha256": hashlib.sha256(r.data).hexdigest(),
                             "md5": hashlib.md5(r.data).hexdigest()}} for r in files]
        document = {"info": {"name": package, "version": said}, "urls": urls}
        return Answer(200, {"content-type": JSON_CT}, json.dumps(document).encode(),
                      delay=self.json_delay)

    def _file(self, filename: str) -> Answer:
        found = next((r for r in self.releases if r.filename == filename), None)
        if found is None:
            return Answer(404, {"content-type": "text/plain"}, b"Not Found")
        if found.status != 200:
            return Answer(found.status, {"content-type": "text/html"},
                          b"<html>" + str(found.status).encode() + b" error</html>")
        if found.redirect is not None:
            return Answer(302, {"location": found.redirect}, b"")
        data = found.data[::-1] if found.corrupt else found.data
        return Answer(200, {"content-type": "application/octet-stream"}, data,
                      delay=found.delay,
                      chunks=Drip(data, *found.drip) if found.drip is not None else None)
