"""A configuration's problems in the words of the file: one line per problem, a misspelled key
with its likely spelling, a table of a list by its name, a duration as it was written; never
pydantic's own wording of where (``(top level)``, ``repos.3``)."""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Iterable, Mapping
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from watcher.config.durations import format_duration, parse_duration

_BOUNDS = {"greater_than_equal": ("ge", "is less than the minimum,"),
           "greater_than": ("gt", "must be more than"),
           "less_than_equal": ("le", "is more than the maximum,"),
           "less_than": ("lt", "must be less than")}

# pydantic's "Input should be a valid integer, unable to parse string as an integer" in the
# words of a TOML file's author (https://docs.pydantic.dev/latest/errors/validation_errors/).
_SHOULD_BE = {
    "int_parsing": "a whole number", "int_type": "a whole number",
    "int_from_float": "a whole number", "float_parsing": "a number", "float_type": "a number",
    "bool_parsing": "true or false", "bool_type": "true or false",
    "string_type": "text (put it in quotes)", "list_type": "a list ([...])",
    "dict_type": "a table", "model_type": "a table", "model_attributes_type": "a table",
}


def _unwrap(annotation: Any) -> Any:
    """``X | None`` → ``X``."""
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    if get_origin(annotation) in (Union, types.UnionType) and len(args) == 1:
        return args[0]
    return annotation


def _walk(model: Any, loc: tuple[Any, ...]) -> tuple[Any, Any]:
    """The field (``FieldInfo``) a pydantic ``loc`` ends at and its type, or (None, None)."""
    current, info = model, None
    for part in loc:
        current = _unwrap(current)
        if isinstance(part, int) and get_origin(current) is list:
            current, info = get_args(current)[0], None
        elif (isinstance(current, type) and issubclass(current, BaseModel)
              and part in current.model_fields):
            info = current.model_fields[part]
            current = info.annotation
        else:
            return None, None
    return info, _unwrap(current)


def _at(data: Any, loc: tuple[Any, ...]) -> Any:
    """The value the user wrote at ``loc``, or None."""
    for part in loc:
        listed = isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        if not listed and not (isinstance(data, dict) and part in data):
            return None
        data = data[part]
    return data


def _where(loc: tuple[Any, ...], data: Any) -> str:
    """``poll.interval``; a table of a list by its name: ``repos "pytorch/xlaa": name``."""
    text, after_table = "", False
    for index, part in enumerate(loc):
        if isinstance(part, int):
            item = _at(data, loc[:index + 1])
            name = next((item[key] for key in ("name", "subsystem") if isinstance(item, dict)
                         and isinstance(item.get(key), str) and item[key]), None)
            after_table = isinstance(item, dict)
            text += (f' "{name}"' if name else f" table {part + 1}" if after_table
                     else f"[{part}]")
        else:
            text += (": " if after_table else "." if text else "") + str(part)
            after_table = False
    return text


def _is_duration(info: Any) -> bool:
    metadata = list(getattr(info, "metadata", []))
    for arg in get_args(getattr(info, "annotation", None)):
        metadata += getattr(arg, "__metadata__", ())
    return any(getattr(item, "func", None) is parse_duration for item in metadata)


def _what(problem: Any, model: Any, data: Any) -> str:
    """A problem in the file's words: a key's likely spelling, a duration as it was written."""
    kind, loc = problem["type"], tuple(problem["loc"])
    if kind == "extra_forbidden":
        _, table = _walk(model, loc[:-1])
        keys = ([name for name, info in table.model_fields.items() if not info.exclude]
                if isinstance(table, type) and issubclass(table, BaseModel) else [])
        close = difflib.get_close_matches(str(loc[-1]), keys, n=1)
        return "unknown key" + (f"; did you mean `{close[0]}`?" if close else "")
    if kind == "missing":
        return "required, but missing"
    written, (info, _) = _at(data, loc), _walk(model, loc)
    if kind in _BOUNDS and isinstance(written, str | int | float):
        bound, words = _BOUNDS[kind]
        limit = problem["ctx"][bound]
        shown = format_duration(float(limit)) if _is_duration(info) else f"{limit}"
        return f"{written!r} {words} {shown}"
    if kind in _SHOULD_BE:
        return f"{_as_written(written)} is not {_SHOULD_BE[kind]}"
    if kind in ("literal_error", "enum"):
        return f"{_as_written(written)} is not one of {problem['ctx']['expected']}"
    return str(problem["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _as_written(value: Any) -> str:
    """A value as TOML shows it: a table or list by its kind, not by its whole content."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    return repr(value) if value is not None else "the value"


def describe_validation_error(error: ValidationError, source: str, *, model: Any = None,
                              data: Any = None) -> str:
    """One line per problem in the words of the file (``data``, validated as ``model``):
    ``poll.intervall: unknown key; did you mean `interval`?``, a table of a list by its name
    (``repos "pytorch/xlaa": ...``), a duration as written (``'0s' is less than the minimum,
    1s``)."""
    return describe_problems(error.errors(), source, model=model, data=data)


def describe_problems(problems: Iterable[Mapping[str, Any]], source: str, *, model: Any = None,
                      data: Any = None) -> str:
    """``describe_validation_error`` of problems as ``ValidationError.errors()`` gives them
    (``type``, ``loc``, ``msg``, ``ctx``): those of several tables validated one by one, each
    ``loc`` starting at the table's key."""
    lines: list[str] = []
    for problem in problems:
        where = _where(tuple(problem["loc"]), data)
        line = f"{source}: {where + ': ' if where else ''}{_what(problem, model, data)}"
        if line not in lines:
            lines.append(line)
    return "\n".join(lines)


def invalid_keys(error: ValidationError, model: type[BaseModel]) -> frozenset[str]:
    """The keys of a table its problems are about; for a check of the table as a whole, the
    keys its message names (``digest_schedule '0 9' is not a 5-field cron expression``)."""
    keys: set[str] = set()
    for problem in error.errors():
        if problem["loc"]:
            keys.add(str(problem["loc"][0]))
        else:
            keys |= {name for name in model.model_fields
                     if re.search(rf"\b{name}\b", problem["msg"])}
    return frozenset(keys)
