"""The impact analysis's vocabulary, read once from ``config/impact.toml``: the names that only
mark code (``@torch.jit.ignore``, ``is_scripting()``), and the kinds of input a change can be
limited to, with how notes name each and what code that makes one uses.

Data, not per-release tables: a new kind of input is a new ``[[inputs]]`` entry.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from watcher.impact.model import Within
from watcher.resources import defaults_dir

__all__ = ["InputKind", "PassedOn", "Vocabulary", "vocabulary"]


@dataclass(frozen=True)
class InputKind:
    name: str  # "nested tensors"
    words: tuple[str, ...]  # lower-case phrases notes name it by
    made_by: tuple[str, ...]  # dotted names, or ".method" names
    # "file": only a file that makes one can hand it to the changed API; "definition": only the
    # module-level function or class that makes one ("codebase": any file can, as data made by
    # a loader reaches the model)
    within: Within = "codebase"


@dataclass(frozen=True)
class PassedOn:
    """A torch function that hands one of its options to another (``caller`` calls ``api``
    with it): a change to what ``api`` does with the option reaches calls of ``caller`` that
    pass any of the names it takes it under, with ``given`` (``need_weights=False``) set."""

    api: str
    caller: str
    options: dict[str, tuple[str, ...]]  # the api's option -> the caller's names for it
    given: tuple[str, ...] = ()


@dataclass(frozen=True)
class Vocabulary:
    markers: frozenset[str]
    inputs: tuple[InputKind, ...]
    passed_on: tuple[PassedOn, ...] = ()

    def is_marker(self, name: str) -> bool:
        """A name that only marks (or under one: ``torch.jit.Final[int]`` is ``Final``)."""
        return name in self.markers or any(
            name.startswith(marker + ".") for marker in self.markers)


@cache
def vocabulary() -> Vocabulary:
    with open(defaults_dir() / "impact.toml", "rb") as handle:
        data = tomllib.load(handle)
    inputs = tuple(InputKind(entry["name"], tuple(word.lower() for word in entry["words"]),
                             tuple(entry["made_by"]), within(entry))
                   for entry in data.get("inputs", []))
    passed_on = tuple(PassedOn(entry["api"], entry["caller"],
                               {option: tuple(names) for option, names in entry["options"].items()},
                               tuple(entry.get("given", ())))
                      for entry in data.get("passed_on", []))
    return Vocabulary(frozenset(data.get("markers", [])), inputs, passed_on)


def within(entry: dict[str, object]) -> Within:
    value = entry.get("within", "codebase")
    if value == "file" or value == "definition" or value == "codebase":
        return value
    raise ValueError(f"impact.toml: input {entry.get('name')!r}: within must be "
                     f"'codebase', 'file' or 'definition', not {value!r}")
