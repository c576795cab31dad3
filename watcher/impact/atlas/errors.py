"""The atlas's errors, below ``WatcherError`` (``watcher/errors.py``):

    AtlasError              root: an atlas could not be had; one line fit for a user
    ├── WheelUnreadable     a file that is not a wheel of the package, or an atlas file that
    │                       is not one (context: path)
    ├── NotYetPublished     the index has no such version yet (or the last try failed
    │                       within the hour): try again later
    ├── AtlasPending        neither bundled nor stored, and this source does not fetch (the
    │                       poll's): handed to the package step, which fetches it apart
    ├── IndexUnreachable    the index did not answer (timeout, offline, a server error)
    ├── ChecksumMismatch    a downloaded wheel is not the one the index vouches for
    ├── OverBudget          a wheel, its download or its build went past a limit of its
    │                       budget (``budget.py``): too slow, too large, too deep
    ├── WrongVersion        the index's JSON or the wheel's METADATA is of another version
    │                       than the one asked for
    └── ForeignHost         the index redirected to a host it does not answer for

Every one of them is one line fit for a log or a user, and none leaves a file behind.
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


class AtlasPending(AtlasError):
    """Not bundled nor stored; the package step fetches it apart from the poll."""


class IndexUnreachable(AtlasError):
    """The package index could not be asked: a timeout, no network, a server error."""


class ChecksumMismatch(AtlasError):
    """The wheel downloaded is not the one whose sha256 the index gave; nothing was kept."""


class OverBudget(AtlasError):
    """A wheel, its download or its build went past a limit of its budget; nothing kept."""


class WrongVersion(AtlasError):
    """The index's JSON, or the wheel's own METADATA, names another version than asked for."""


class ForeignHost(AtlasError):
    """A redirect to a host the index does not answer for (``[impact] package_hosts``)."""
