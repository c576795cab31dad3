"""Where an atlas comes from: bundled with release-watch (``config/atlases/``, one per torch
minor release from 2.5), kept in the store, or built from the smallest wheel the package index
serves (then kept in the store): downloaded within its budget and built in a child process
(``sandbox``), so no wheel can stall or sink the caller. Any failure to fetch or build a
version (not yet published, the index out of reach, a wheel too slow, too large, broken or of
another version) is recorded, and the version asked for again at most once per
``retry_every`` (an hour: a poll loop does not hammer it), unless forced (a person running
``atlas build``); ``find`` says why an atlas cannot be had in one line, "package diff skipped:
...", and never raises.

A source without an index (the poll's: announcing never waits on the network) hands each atlas
it lacks to ``wanted``, the package step (``step.py``), which fetches it apart from the poll.

Versions are compared with ``packaging``: ``2.7.0`` is minor 2.7, and the release before it
is the newest known atlas of 2.6 (else 2.6.0, fetched).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from packaging.version import InvalidVersion, Version

from watcher.impact.atlas.budget import megabytes
from watcher.impact.atlas.codec import loads
from watcher.impact.atlas.errors import (
    AtlasError,
    AtlasPending,
    IndexUnreachable,
    NotYetPublished,
)
from watcher.impact.atlas.model import Atlas
from watcher.resources import defaults_dir

if TYPE_CHECKING:
    import httpx

    from watcher.config import ImpactConfig
    from watcher.impact.atlas.index import PackageIndex
    from watcher.impact.atlas.sandbox import BoundedBuilder, Built

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


def configured_source(impact: ImpactConfig, store: Shelf | None, clock: Callable[[], datetime],
                      transport: httpx.BaseTransport | None = None) -> AtlasSource:
    """Where the atlases of releases come from: bundled, the store, else the package index
    (``[impact] package_index``), fetched within the budget ``[impact]`` sets, built in a
    child process and kept in the store; a failure asked again after ``package_retry``.
    Here, not in the composition root, so that ``atlas diff`` needs nothing of the bot."""
    from watcher.impact.atlas.budget import Budget
    from watcher.impact.atlas.index import PackageIndex
    from watcher.impact.atlas.sandbox import BoundedBuilder

    budget = Budget.of(impact)
    index = PackageIndex(impact.package_index, budget=budget, hosts=tuple(impact.package_hosts),
                         transport=transport)
    return AtlasSource(store=store, index=index, clock=clock, builder=BoundedBuilder(budget),
                       retry_every=timedelta(seconds=impact.package_retry))


def bundled_dir() -> Path:
    return defaults_dir() / "atlases"


def bundled_versions(package: str, directory: Path | None = None) -> list[str]:
    """The versions of ``package`` whose atlas is bundled, oldest first."""
    return sorted((path.name[len(package) + 1: -len(SUFFIX)]
                   for path in (directory or bundled_dir()).glob(f"{package}-*{SUFFIX}")),
                  key=Version)


def bundled_path(package: str, version: str, directory: Path | None = None) -> Path:
    return (directory or bundled_dir()) / f"{package}-{version}{SUFFIX}"


def normal_version(version: str) -> str:
    """``v2.7.0`` / ``2.7.0+cpu`` → ``2.7.0``; ``2.8`` (how PyTorch/XLA names a release in
    its notes) → ``2.8.0``, the version its wheels carry; an error naming what is not a
    version."""
    try:
        parsed = Version(version.removeprefix("v"))
    except InvalidVersion as error:
        raise AtlasError(f"{version!r} is not a version (e.g. 2.7.0)") from error
    if len(parsed.release) >= 3:
        return parsed.public
    padded = ".".join(str(part) for part in (*parsed.release, 0, 0)[:3])
    return Version(padded + parsed.public[len(".".join(map(str, parsed.release))):]).public


class AtlasSource:
    """Atlases by package and version: bundled, stored, fetched (in that order). ``builder``
    builds what is fetched (its budget's limits); ``wanted``, for a source without an index,
    is told each atlas it lacks; ``doing`` is told what a fetch waits for (the daemon's log)."""

    def __init__(self, *, store: Shelf | None, index: PackageIndex | None,
                 clock: Callable[[], datetime], bundled: Path | None = None,
                 retry_every: timedelta = RETRY_EVERY, builder: BoundedBuilder | None = None,
                 wanted: Callable[[str, str], None] | None = None,
                 doing: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.index = index
        self.clock = clock
        self.bundled = bundled if bundled is not None else bundled_dir()
        self.retry_every = retry_every
        self.builder = builder
        self.wanted = wanted
        self.doing = doing
        self.origin: dict[tuple[str, str], str] = {}  # where each atlas came from
        self._swept = False

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
        ``NotYetPublished`` (also without asking, within ``retry_every`` of the last failure,
        unless ``force``), ``AtlasPending`` (no index here: handed to ``wanted``), or the
        failure of the fetch or the build (``IndexUnreachable``, ``OverBudget``...)."""
        version = normal_version(version)
        found = self.known(package, version)
        if found is not None:
            return found
        if self.index is None:
            if self.wanted is not None:
                self.wanted(package, version)
                raise AtlasPending(f"the atlas of {package} {version} is fetched apart from "
                                   "the poll; its package diff follows once it is built")
            raise IndexUnreachable(f"no atlas of {package} {version} here, and no package "
                                   "index to build one from")
        self._throttle(package, version, force)
        if self.store is not None:
            # Recorded first: an attempt that never ends (a look-up no timeout reaches) still
            # holds back every replica's next one for retry_every.
            self.store.put_atlas_tried(package, version, self.clock())
        try:
            built = self._fetch(package, version)
        except AtlasError:  # whatever it was, not again before retry_every
            if self.store is not None:
                self.store.put_atlas_tried(package, version, self.clock())
            raise
        if self.store is not None:
            self.store.put_atlas(package, version, built.data)
        self.origin[(package, version)] = "index"
        return built.atlas

    def find(self, package: str, version: str) -> Atlas | None:
        """``get``, or None with one line logged when the atlas cannot be had now."""
        try:
            return self.get(package, version)
        except AtlasPending as pending:
            logger.debug("package diff pending: %s", pending)
        except AtlasError as error:
            logger.warning("package diff skipped: %s", error)
        return None

    def next_try(self, package: str, version: str) -> datetime | None:
        """When a version whose last fetch failed is asked for again (None: whenever)."""
        tried = self.store.atlas_tried(package, normal_version(version)) \
            if self.store is not None else None
        return tried + self.retry_every if tried is not None else None

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
        found = set(bundled_versions(package, self.bundled))
        if self.store is not None:
            found.update(self.store.atlas_versions(package))
        return sorted(found, key=Version)

    def _throttle(self, package: str, version: str, force: bool) -> None:
        again = self.next_try(package, version)
        if force or again is None or self.clock() >= again:
            return
        tried = again - self.retry_every
        raise NotYetPublished(f"{package} {version} was not to be had at "
                              f"{tried:%Y-%m-%d %H:%M} UTC; asking again after "
                              f"{again:%H:%M}", package=package, version=version)

    def _fetch(self, package: str, version: str) -> Built:
        # Imported here: reading a wheel is needed only where no atlas is bundled or stored.
        from watcher.impact.atlas.sandbox import BoundedBuilder
        from watcher.impact.atlas.scratch import scratch, sweep

        assert self.index is not None
        if not self._swept:
            sweep()  # what a process killed mid-download left behind
            self._swept = True
        if self.builder is None:
            self.builder = BoundedBuilder(self.index.budget)
        builder = self.builder
        self._doing(f"asking {self.index.base} for {package} {version}")
        wheel = self.index.smallest_wheel(package, version)
        logger.info("building the API atlas of %s %s from %s (%s)", package, version,
                    wheel.filename, megabytes(wheel.size))
        total = megabytes(wheel.size)
        with scratch() as folder:
            self._doing(f"downloading {wheel.filename} (0 of {total})")
            path = self.index.download(wheel, folder, progress=lambda done: self._doing(
                f"downloading {wheel.filename} ({megabytes(done)} of {total})"))
            self._doing(f"building the atlas of {package} {version} from {wheel.filename}")
            built = builder.build(path, package, expect=version)
        logger.info("built the API atlas of %s %s in %.1fs (peak %s)%s", package, version,
                    built.seconds, megabytes(built.peak_rss), _skipped(built.atlas))
        return built

    def _doing(self, what: str) -> None:
        if self.doing is not None:
            self.doing(what)


def _skipped(atlas: Atlas) -> str:
    if not atlas.skipped:
        return ""
    shown = ", ".join(atlas.skipped[:5]) + (" ..." if len(atlas.skipped) > 5 else "")
    return (f"; {len(atlas.skipped)} module(s) skipped, too deep or too large to read "
            f"({shown}): their APIs are left out of its diff")


def previous_minor(version: str) -> tuple[int, int] | None:
    """(major, minor) of the release line before ``version``'s; None for an x.0 release."""
    major, minor = _minor(normal_version(version))
    return (major, minor - 1) if minor > 0 else None


def _minor(version: str) -> tuple[int, int]:
    release = Version(version).release
    return release[0], release[1] if len(release) > 1 else 0
