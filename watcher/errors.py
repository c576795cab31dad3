"""The one error tree of release-watch: every failure the tool reports is one of these.

    WatcherError                  root; ``str(error)`` is one line fit for a user
    ├── ConfigError               the configuration file or environment is invalid; one line
    │                             per problem, every problem found (not just the first)
    ├── GitHubError               GitHub answered something unusable (context: repo, url, status)
    │   ├── RateLimitError        a rate limit would make us wait longer than allowed (reset_at)
    │   └── MalformedResponse     a body that is not the JSON shape GitHub documents
    ├── StoreError                the store cannot be used: another schema, busy, lost database
    │   ├── StorePathError        store.path cannot be a store (a file, say): a usage error, exit 2
    │   ├── StoreBusy             another writer held the lock longer than we would wait
    │   ├── StoreReadOnly         the store cannot be written by this user (reading still works)
    │   └── StoreDamaged          cache.db is not a sound SQLite database
    └── HandlerError              a notifier could not deliver (context: notifier; permanent or not)

Errors from httpx and slack-sdk are translated at the boundary with ``raise ... from``, so the
original stays in ``__cause__`` for ``--verbose`` and no token-bearing request object is ever
formatted into a message.
"""

from __future__ import annotations


class WatcherError(Exception):
    """Root of every error release-watch raises on purpose."""


class ConfigError(WatcherError):
    """The configuration (TOML file, environment, command-line options) is invalid. The message
    has one line per problem, so a user fixes them all in one go. ``keys``: the keys of the
    table the problems are about, so a check can look at the rest of the table without them."""

    def __init__(self, message: str, *, keys: frozenset[str] = frozenset()) -> None:
        super().__init__(message)
        self.keys = keys


class GitHubError(WatcherError):
    """GitHub could not give us what we asked for after the retries we allow."""

    def __init__(self, message: str, *, repo: str | None = None, url: str | None = None,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.repo = repo
        self.url = url
        self.status = status


class RateLimitError(GitHubError):
    """GitHub's rate limit asks for a wait longer than ``github.max_rate_limit_wait``."""

    def __init__(self, message: str, *, repo: str | None = None, url: str | None = None,
                 status: int | None = None, reset_at: float | None = None) -> None:
        super().__init__(message, repo=repo, url=url, status=status)
        self.reset_at = reset_at


class MalformedResponse(GitHubError):
    """GitHub answered 200 with a body that is not the documented JSON shape."""


class StoreError(WatcherError):
    """The store cannot be used: unreadable, from another schema version, or locked."""


class StorePathError(StoreError):
    """``store.path`` names something that cannot be a store, such as a file: fix the config."""


class StoreBusy(StoreError):
    """Another connection held the store's write lock for longer than this one would wait."""


class StoreReadOnly(StoreError):
    """The store's files or directory cannot be written by this user."""


class StoreDamaged(StoreError):
    """The store's database is corrupt or is not an SQLite database at all."""


class HandlerError(WatcherError):
    """A notifier could not deliver an event.

    ``permanent`` errors (a revoked token, a missing channel) will not heal by retrying; the
    delivery stays queued all the same so nothing is lost once the operator fixes the cause.
    """

    def __init__(self, message: str, *, notifier: str, permanent: bool = False) -> None:
        super().__init__(message)
        self.notifier = notifier
        self.permanent = permanent
