"""The atlas's errors, below ``WatcherError`` (``watcher/errors.py``):

    AtlasError              root: an atlas could not be had; one line fit for a user
    ├── WheelUnreadable     a file that is not a wheel of the package, or an atlas file that
    │                       is not one (context: path)
    ├── NotYetPublished     the index has no such version yet: try again later
    ├── IndexUnreachable    the index did not answer (timeout, offline, a server error)
    └── ChecksumMismatch    a downloaded wheel is not the one the index vouches for
"""

from __future__ import annotations

from watcher.errors import WatcherError


class AtlasError(WatcherError):
    """An atlas could not be built, read or fetched."""


class WheelUnreadable(AtlasError):
    """A wheel or an atlas file that cannot be read as one."""


class NotYetPublished(AtlasError):
    """The package index has no files for that version (yet)."""

    def __init__(self, message: str, *, package: str, version: str) -> None:
        super().__init__(message)
        self.package = package
        self.version = version


class IndexUnreachable(AtlasError):
    """The package index could not be asked: a timeout, no network, a server error."""


class ChecksumMismatch(AtlasError):
    """The wheel downloaded is not the one whose sha256 the index gave; nothing was kept."""
