"""Secrets of notifiers, as plugins written before the core owned them import them: the
module is ``watcher.delivery``'s ``secrets`` now, re-exported here under its old name."""

from __future__ import annotations

from watcher.delivery import missing_secrets, resolve_secrets, secret_field, secret_values

__all__ = ["missing_secrets", "resolve_secrets", "secret_field", "secret_values"]
