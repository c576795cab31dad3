"""Finding notifiers: the ``release_watch.notifiers`` entry-point group, and a ``[[notifiers]]``
table validated against the class it names, its secrets resolved from the environment.

Entry points are loaded lazily (as APScheduler 3.x loads its triggers and job stores): only the
types a configuration names are imported, so a console-only poll never imports slack_sdk.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

from pydantic import ValidationError

from watcher.config import describe_validation_error, invalid_keys
from watcher.delivery.notifier import Notifier, NotifierConfig
from watcher.delivery.secrets import resolve_secrets
from watcher.errors import ConfigError

ENTRY_POINT_GROUP = "release_watch.notifiers"


def available_types() -> list[str]:
    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))


def notifier_class(type_name: str, where: str = "") -> type[Notifier]:
    """The class registered as ``type_name``; ``where`` (``FILE: notifier 'NAME'``) starts the
    error's line, like every other problem of the file."""
    matches = entry_points(group=ENTRY_POINT_GROUP, name=type_name)
    if not matches:
        installed = available_types()
        close = difflib.get_close_matches(type_name, installed, n=1)
        raise ConfigError(
            f"{where + ': ' if where else ''}type: unknown notifier type {type_name!r}"
            + (f"; did you mean `{close[0]}`?" if close else "")
            + f"; installed types: {', '.join(installed) or 'none (is release-watch installed?)'}",
            keys=frozenset({"type"}))
    loaded = next(iter(matches)).load()
    if not (isinstance(loaded, type) and issubclass(loaded, Notifier)):
        raise ConfigError(f"entry point {type_name!r} does not name a Notifier class")
    return loaded


def notifier_config(raw: dict[str, Any], source: str, environ: Mapping[str, str] | None = None,
                    ) -> tuple[type[Notifier], NotifierConfig]:
    """The notifier class named by ``raw["type"]`` and its validated config, secrets resolved
    from ``environ`` (default: the process environment)."""
    where = f"{source}: notifier {raw.get('name')!r}"
    cls = notifier_class(str(raw.get("type")), where)
    resolved, sources = resolve_secrets(cls.Config, raw,
                                        os.environ if environ is None else environ)
    try:
        config = cls.Config.model_validate(resolved)
    except ValidationError as error:
        raise ConfigError(describe_validation_error(error, where, model=cls.Config, data=raw),
                          keys=invalid_keys(error, cls.Config)) from None
    config._secret_sources = sources
    return cls, config
