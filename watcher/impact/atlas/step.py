"""The package step: the atlases a poll wanted and found neither bundled nor stored, fetched and
built apart from the poll, so a release is announced from its notes at once and its package's
diff follows on a later poll (the ``package_pending`` path: one ``edited`` event where it
touches the code).

The poll hands each missing atlas to ``want`` (``AtlasSource(wanted=...)``); ``take`` gives
them to whoever runs the step (the daemon's package worker, or ``release-watch poll`` after
its deliveries), and ``fetch`` fetches and builds one within its budget (``AtlasSource`` with
an index): any failure is recorded and logged in one line with the time it is tried again (at
most once per ``retry_every``); a version within that wait is passed over without a word.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime

from watcher.impact.atlas.errors import AtlasError, NotYetPublished
from watcher.impact.atlas.source import AtlasSource, normal_version

logger = logging.getLogger(__name__)

Version = tuple[str, str]  # (package, version)


class PackageStep:
    """``source``: a source with an index (it fetches); ``want`` may be called from the
    poll's thread while the step runs on another."""

    def __init__(self, source: AtlasSource) -> None:
        self.source = source
        self._wanted: dict[Version, None] = {}
        self._told: set[Version] = set()
        self._lock = threading.Lock()

    def want(self, package: str, version: str) -> None:
        key = (package, normal_version(version))
        with self._lock:
            self._wanted[key] = None
            told = key in self._told
            self._told.add(key)
        if not told:
            logger.info("%s %s: no API atlas known yet; its release is announced from its "
                        "notes, and its package read apart (its diff follows)", *key)

    def take(self) -> list[Version]:
        """The versions wanted since the last take, oldest first; due now or not."""
        with self._lock:
            wanted, self._wanted = list(self._wanted), {}
        return wanted

    def due(self, package: str, version: str) -> bool:
        """Whether ``fetch`` would ask the index now (not within the wait after a failure)."""
        again = self.source.next_try(package, version)
        return again is None or self.source.clock() >= again

    def fetch(self, package: str, version: str) -> bool:
        """Fetch and build one version's atlas, and the release before it where none is
        known; whether its atlas is stored now. Never raises an ``AtlasError``."""
        if not self.due(package, version):
            logger.debug("%s %s: within the wait after its last failure", package, version)
            return False
        try:
            self.source.get(package, version)
        except AtlasError as error:
            again = self.source.next_try(package, version)
            level = logging.INFO if isinstance(error, NotYetPublished) else logging.WARNING
            logger.log(level, "package %s %s not read: %s; trying again after %s", package,
                       version, error, _when(again))
            return False
        self.source.before(package, version)  # its failure is logged there, and wanted again
        return True

    def run(self) -> list[Version]:
        """Every version wanted, fetched in turn; those whose atlas arrived."""
        return [wanted for wanted in self.take() if self.fetch(*wanted)]

    def abort(self) -> None:
        """End the fetch in flight and every later one (another thread: shutting down)."""
        if self.source.index is not None:
            self.source.index.abort()
        if self.source.builder is not None:
            self.source.builder.abort()


def _when(again: datetime | None) -> str:
    return f"{again:%Y-%m-%d %H:%M} UTC" if again is not None else "the next poll"
