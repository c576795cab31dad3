"""Reads the configuration: the TOML file merged over the built-in defaults, validated, with
every problem of the file reported in one run."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from watcher.config.problems import describe_problems, describe_validation_error, invalid_keys
from watcher.config.schema import Config, Unread
from watcher.errors import ConfigError
from watcher.resources import default_config_path
from watcher.untrusted import escape_controls


def _merge(defaults: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = dict(defaults)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"config file {escape_controls(str(path))} does not exist") from None
    except OSError as error:
        raise ConfigError(f"cannot read config file {escape_controls(str(path))}: "
                          f"{error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{escape_controls(str(path))} is not valid TOML: {error}") from None


def _well_formed(notifiers: Any) -> list[dict[str, Any]]:
    """The ``[[notifiers]]`` tables with a name and a type, each name once."""
    tables: dict[str, dict[str, Any]] = {}
    for table in notifiers if isinstance(notifiers, list) else []:
        if (isinstance(table, dict) and isinstance(table.get("name"), str) and table["name"]
                and isinstance(table.get("type"), str) and table["type"]):
            tables.setdefault(table["name"], table)
    return list(tables.values())


def checked_config(data: dict[str, Any], *, base_dir: Path,
                   source: str) -> tuple[Config, list[str]]:
    """The config and every problem in it, one line each. With problems, the config is a
    stand-in, never one to run: its broken tables are the built-in defaults' and its notifier
    tables are kept, so the checks of the notifiers can still report theirs in the same run."""
    if "orgs" in data and "repos" not in data:
        # The built-in repos are the watch list of a file that names nothing to watch; a file
        # naming [[orgs]] has said what it wants.
        data = {**data, "repos": []}
    defaults = _read_toml(default_config_path())
    merged, anchor = _merge(defaults, data), {"base_dir": base_dir, "source": source}
    try:
        config = Config.model_validate({**merged, **anchor})
    except ValidationError as error:
        problems = describe_validation_error(error, source, model=Config, data=merged)
        broken = invalid_keys(error, Config)
        kept = {key: value for key, value in merged.items() if key not in broken}
        kept["notifiers"] = _well_formed(merged.get("notifiers"))
        try:
            config = Config.model_validate({**defaults, **kept, **anchor})
        except ValidationError:
            config = Config.model_validate({**defaults, "notifiers": kept["notifiers"], **anchor})
        return config, problems.split("\n")
    config._written = merged
    return config, []


def config_from_dict(data: dict[str, Any], *, base_dir: Path, source: str) -> Config:
    config, problems = checked_config(data, base_dir=base_dir, source=source)
    if problems:
        raise ConfigError("\n".join(problems))
    return config


def find_config_file(explicit: str | None, environ: dict[str, str] | None = None) -> Path | None:
    """``--config``, else ``$RELEASE_WATCH_CONFIG``, else ``./release-watch.toml`` if present."""
    env = os.environ if environ is None else environ
    if explicit:
        return Path(explicit)
    if env.get("RELEASE_WATCH_CONFIG"):
        return Path(env["RELEASE_WATCH_CONFIG"])
    local = Path("release-watch.toml")
    return local if local.is_file() else None


def checked_file(path: Path | None) -> tuple[Config | None, list[str]]:
    """``load_config`` that does not stop at the first broken table: the config (a stand-in
    if there are problems, see ``checked_config``) and every problem; no config when the file
    cannot be read as TOML at all."""
    if path is None:
        return checked_config({}, base_dir=Path.cwd(), source="built-in defaults")
    try:
        data = _read_toml(path)
    except ConfigError as error:
        return None, str(error).split("\n")
    return checked_config(data, base_dir=path.resolve().parent,
                          source=escape_controls(str(path)))


def load_config(path: Path | None) -> Config:
    config, problems = checked_file(path)
    if problems or config is None:
        raise ConfigError("\n".join(problems))
    return config


def checked_sections(data: dict[str, Any], sections: tuple[str, ...], *, base_dir: Path,
                     source: str) -> tuple[Config, list[str]]:
    """``checked_config`` for a command that reads only ``sections`` (an offline one:
    ``classify`` reads ``classify`` and ``poll``): the file merged over the defaults as
    ever, a key no table has reported as ever, but only those tables validated, each in the
    words ``checked_config`` would use. The others stay as written and unread: their models'
    schemas are never built (pydantic builds a model's on its first validation,
    ``defer_build``), the most of such a command's configuration cost. The config's other
    tables are ``Unread`` stand-ins, which refuse to be read."""
    defaults = _read_toml(default_config_path())
    merged = _merge(defaults, data)
    fields = Config.model_fields
    values: dict[str, Any] = {}
    found: list[dict[str, Any]] = []
    # In the order full validation reports them: the fields' own, then the keys no field has.
    for name, info in fields.items():
        if name not in sections:
            if not info.exclude:
                values[name] = Unread(name)
            continue
        model = info.annotation
        assert isinstance(model, type) and issubclass(model, BaseModel), name
        try:
            values[name] = (model.model_validate(merged[name]) if name in merged
                            else info.get_default(call_default_factory=True))
        except ValidationError as error:
            found += [{**problem, "loc": (name, *problem["loc"])} for problem in error.errors()]
    found += [{"type": "extra_forbidden", "loc": (key,), "msg": "Extra inputs are not permitted"}
              for key in merged if key not in fields]
    config = Config.model_construct(set(sections), **values, base_dir=base_dir, source=source)
    config._written = merged
    if found:
        return config, describe_problems(found, source, model=Config, data=merged).split("\n")
    return config, []


def load_sections(path: Path | None, sections: tuple[str, ...]) -> Config:
    """``load_config`` of a command that reads only ``sections``: see ``checked_sections``."""
    if path is None:
        data, base_dir, source = {}, Path.cwd(), "built-in defaults"
    else:
        data = _read_toml(path)
        base_dir, source = path.resolve().parent, escape_controls(str(path))
    config, problems = checked_sections(data, sections, base_dir=base_dir, source=source)
    if problems:
        raise ConfigError("\n".join(problems))
    return config
