"""Where an atlas comes from: bundled with release-watch (``config/atlases/``, one per torch
minor release from 2.5), kept in the store, or built from the smallest wheel the package index
serves (then kept in the store). A version the index does not have yet, or asked for while the index
was out of reach, is asked for again at most once per ``retry_every`` (an hour: a poll loop
does not hammer it), unless forced (a person running ``atlas build``); ``find`` says why an
atlas cannot be had in one line, "package diff skipped: ...", and never raises.

Versions are compared with ``packaging``: ``2.7.0`` is minor 2.7, and the release before it
is the newest known atlas of 2.6 (else 2.6.0, fetched).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from packaging.version import InvalidVersion, Version

from watcher.impact.atlas.codec import dumps, loads
from watcher.impact.atlas.errors import AtlasError, IndexUnreachable, NotYetPublished
from watcher.impact.atlas.model import Atlas
from watcher.resources import defaults_dir

if TYPE_CHECKING:
    from watcher.impact.atlas.index import PackageIndex

logger = logging.getLogger(__name__)

RETRY_EVERY = timedelta(hours=1)
SUFFIX = ".json.gz"


class Shelf(Protocol):
    """What of the store an atlas source uses (``watcher.store.Store`` is one)."""

    def atlas(self, package: str, version: str) -> bytes | None: ...
    def put_atlas(self, package: str, version: str, data: bytes) -> None: ...
    def atlas_versions(self, package: str) -> list[str]: ...
    def atlas_tried(self, package: str, version: str) -> datetime | None: ...
    def put_atlas_tried(self, package: str, version: str, when: datetime) -> None: ...


def bundled_dir() -> Path:
    return defaults_dir() / "atlases"


def bundled_path(package: str, version: str, directory: Path | None = None) -> Path:
    return (directory or bundled_dir()) / f"{package}-{version}{SUFFIX}"


def normal_version(version: str) -> str:
    """``v2.7.0`` / ``2.7.0+cpu`` → ``2.7.0``; an error naming what is not a version."""
    try:
        return Version(version.removeprefix("v")).public
    except InvalidVersion as error:
        raise AtlasError(f"{version!r} is not a version (e.g. 2.7.0)") from error


class AtlasSource:
    """Atlases by package and version: bundled, stored, fetched (in that order)."""

    def __init__(self, *, store: Shelf | None, index: PackageIndex | None,
                 clock: Callable[[], datetime], bundled: Path | None = None,
                 retry_every: timedelta = RETRY_EVERY) -> None:
        self.store = store
        self.index = index
        self.clock = clock
        self.bundled = bundled if bundled is not None else bundled_dir()
        self.retry_every = retry_every
        self.origin: dict[tuple[str, str], str] = {}  # where each atlas came from

    def known(self, package: str, version: str) -> Atlas | None:
        """A bundled or stored atlas; never the network."""
        version = normal_version(version)
        path = bundled_path(package, version, self.bundled)
        if path.is_file():
            self.origin[(package, version)] = "bundled"
            return loads(path.read_bytes(), origin=str(path))
        data = self.store.atlas(package, version) if self.store is not None else None
        if data is not None:
            self.origin[(package, version)] = "store"
            return loads(data, origin=f"the stored atlas of {package} {version}")
        return None

    def get(self, package: str, version: str, *, force: bool = False) -> Atlas:
        """The atlas of ``package==version``, fetched and built when none is known; raises
        ``NotYetPublished`` (also without asking, within ``retry_every`` of the last "no",
        unless ``force``), ``IndexUnreachable`` or ``ChecksumMismatch``."""
        version = normal_version(version)
        found = self.known(package, version)
        if found is not None:
            return found
        if self.index is None:
            raise IndexUnreachable(f"no atlas of {package} {version} here, and no package "
                                   "index to build one from")
        self._throttle(package, version, force)
        try:
            atlas = self._fetch(package, version)
        except (NotYetPublished, IndexUnreachable):
            if self.store is not None:
                self.store.put_atlas_tried(package, version, self.clock())
            raise
        if self.store is not None:
            self.store.put_atlas(package, version, dumps(atlas))
        self.origin[(package, version)] = "index"
        return atlas

    def find(self, package: str, version: str) -> Atlas | None:
        """``get``, or None with one line logged when the atlas cannot be had now."""
        try:
            return self.get(package, version)
        except AtlasError as error:
            logger.warning("package diff skipped: %s", error)
            return None

    def before(self, package: str, version: str) -> Atlas | None:
        """The atlas of the release before ``version``'s minor (2.7.x → the newest known 2.6,
        else 2.6.0, fetched; 3.0 → the newest known 2.x), or None (logged) when it cannot be
        had."""
        wanted = previous_minor(version)
        line = _minor(normal_version(version))
        known = [v for v in self.versions(package)
                 if (_minor(v) == wanted if wanted is not None else _minor(v) < line)]
        if known:
            return self.known(package, max(known, key=Version))
        return self.find(package, f"{wanted[0]}.{wanted[1]}.0") if wanted is not None else None

    def versions(self, package: str) -> list[str]:
        """The versions with an atlas bundled or stored, oldest first."""
        found = {path.name[len(package) + 1: -len(SUFFIX)]
                 for path in self.bundled.glob(f"{package}-*{SUFFIX}")}
        if self.store is not None:
            found.update(self.store.atlas_versions(package))
        return sorted(found, key=Version)

    def _throttle(self, package: str, version: str, force: bool) -> None:
        tried = self.store.atlas_tried(package, version) if self.store is not None else None
        if force or tried is None or self.clock() - tried >= self.retry_every:
            return
        again = tried + self.retry_every
        raise NotYetPublished(f"{package} {version} was not to be had at "
                              f"{tried:%Y-%m-%d %H:%M} UTC; asking again after "
                              f"{again:%H:%M}", package=package, version=version)

    def _fetch(self, package: str, version: str) -> Atlas:
        # Imported here: reading a wheel is needed only where no atlas is bundled or stored.
        from watcher.impact.atlas.build import build_atlas

        assert self.index is not None
        wheel = self.index.smallest_wheel(package, version)
        logger.info("building the API atlas of %s %s from %s (%d MB)", package, version,
                    wheel.filename, wheel.size // 1_000_000)
        with tempfile.TemporaryDirectory(prefix="release-watch-wheel-") as folder:
            path = self.index.download(wheel, Path(folder))
            return build_atlas(path, package)


def previous_minor(version: str) -> tuple[int, int] | None:
    """(major, minor) of the release line before ``version``'s; None for an x.0 release."""
    major, minor = _minor(normal_version(version))
    return (major, minor - 1) if minor > 0 else None


def _minor(version: str) -> tuple[int, int]:
    release = Version(version).release
    return release[0], release[1] if len(release) > 1 else 0
