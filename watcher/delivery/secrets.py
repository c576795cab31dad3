"""Secrets of notifiers: where a ``SecretStr`` field of a notifier's ``Config`` gets its value.

A notifier declares each secret as a ``SecretStr`` (or ``list[SecretStr]``) field, best with
``secret_field(env="MY_TOKEN", ...)``. Its value comes, first match wins, from

* the config file: ``token = { env = "OTHER_VAR" }`` names the environment variable to read
  (so two notifiers of one type can use different tokens), or a literal value (discouraged:
  config files get committed);
* the environment variable that ``secret_field(env=...)`` names.

The core resolves these before the ``Config`` is validated, so a handler simply reads
``self.config.token``; ``SecretStr`` masks the value in reprs, errors and ``config check``, and
the core also masks every resolved value (``secret_values``), whole and each identifying
fragment of it (``watcher.logs.secret_forms``), in the logs and in ``status``. A ``required``
secret that ends up unset is a problem ``config check`` lists and ``run`` refuses to start with.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterator, Mapping
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, Field, SecretStr

ENV_REFERENCE = "env"  # the key of a { env = "NAME" } table
_DEFAULT_ENV, _REQUIRED = "secret_env", "secret_required"
# A list from one environment variable: split on whitespace, or on a comma before another URL.
_LIST_SEPARATOR = re.compile(r"\s+|,\s*(?=[A-Za-z][A-Za-z0-9+.-]*://)")

Shape = Literal["one", "list"]


def secret_field(*, description: str, env: str | None = None, required: bool = False) -> Any:
    """A secret ``Config`` field: read from the environment variable ``env`` unless the file
    gives it (literally or as ``{ env = "NAME" }``); ``required``: unset is a config problem."""
    suffix = f" (else env {env})" if env else ""
    return Field(default=None,
                 description=f'{description}{suffix}; secret, or {{ env = "NAME" }}',
                 json_schema_extra={_DEFAULT_ENV: env, _REQUIRED: required})


def _shape(annotation: Any) -> Shape | None:
    """``SecretStr`` (optional or not) → "one"; ``list[SecretStr]`` → "list"; else None."""
    if annotation is SecretStr:
        return "one"
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        shapes = {_shape(arg) for arg in get_args(annotation) if arg is not type(None)}
        return shapes.pop() if len(shapes) == 1 else None
    if origin is list and get_args(annotation) == (SecretStr,):
        return "list"
    return None


def secret_fields(model: type[BaseModel]) -> Iterator[tuple[str, Shape, str | None, bool]]:
    """(field name, shape, default environment variable, required) of each secret field."""
    for name, info in model.model_fields.items():
        shape = _shape(info.annotation)
        if shape is not None:
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            env, required = extra.get(_DEFAULT_ENV), bool(extra.get(_REQUIRED))
            yield name, shape, env if isinstance(env, str) else None, required


def _reference(value: Any) -> str | None:
    if isinstance(value, dict) and set(value) == {ENV_REFERENCE}:
        name = value[ENV_REFERENCE]
        return name if isinstance(name, str) else None
    return None


def _from_environment(shape: Shape, value: str) -> Any:
    return [part for part in _LIST_SEPARATOR.split(value.strip()) if part] \
        if shape == "list" else value


def resolve_secrets(model: type[BaseModel], raw: Mapping[str, Any],
                    environ: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """``raw`` with environment references replaced by their values (an unset or empty
    variable leaves the key out), and, per field that was to come from the environment, the
    variable's name, so messages can say which one to set."""
    resolved, sources = dict(raw), {}
    for name, shape, default_env, _ in secret_fields(model):
        env = _reference(resolved[name]) if name in resolved else default_env
        if env is None:
            continue
        sources[name] = env
        resolved.pop(name, None)
        if environ.get(env, "").strip():
            resolved[name] = _from_environment(shape, environ[env])
    return resolved, sources


def secret_values(config: BaseModel) -> list[str]:
    """Every secret's plain value, of either shape, for the log filter that masks them (and
    each of their identifying fragments)."""
    values: list[str] = []
    for name, _, _, _ in secret_fields(type(config)):
        value = getattr(config, name)
        for secret in value if isinstance(value, list) else [value]:
            if isinstance(secret, SecretStr) and secret.get_secret_value():
                values.append(secret.get_secret_value())
    return values


def missing_secrets(config: BaseModel, sources: Mapping[str, str]) -> list[str]:
    """One line per required secret that is unset, naming where it may come from."""
    problems = []
    for name, _, env, required in secret_fields(type(config)):
        if required and not getattr(config, name):
            where = sources.get(name, env)
            hint = f"set the environment variable {where}" if where else f"set {name}"
            problems.append(f"{name} is not set: {hint}")
    return problems
