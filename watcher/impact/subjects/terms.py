"""The impact analysis's vocabulary, read once from ``config/impact.toml``: the names that only
mark code (``@torch.jit.ignore``, ``is_scripting()``), the kinds of input a change can be
limited to (with how notes name each and what code that makes one uses), the torch functions
that hand an option on or derive one option's default from another, other packages' subclasses
of torch classes, and how notes name lookups by a key code made (``code.madekeys`` reads how
code makes it).

Data, not per-release tables: a new kind of input is a new ``[[inputs]]`` entry.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Literal

from watcher.impact.model import Within
from watcher.resources import defaults_dir

__all__ = ["CodeShape", "ExemptedBy", "InputKind", "MadeKey", "OutsideSubclass", "PassedOn",
           "SettledBy", "ValueKind", "Vocabulary", "vocabulary"]


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
class SettledBy:
    """A torch function computing ``option``'s value, when a call does not give it, from
    another option the call passes (``torch.load`` takes ``weights_only`` from
    ``pickle_module``): a changed default of ``option`` does not reach a call passing one of
    ``by``, each a name (with any value but None) or ``name=value`` (that constant)."""

    apis: frozenset[str]  # every spelling users write
    option: str
    by: tuple[str, ...]


@dataclass(frozen=True)
class OutsideSubclass:
    """A class of another package deriving from the torch class ``base`` and taking its
    constructor's options in its order (torchdata's ``StatefulDataLoader``): its calls are
    calls of ``base``'s constructor, under each of its ``names``."""

    base: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class MadeKey:
    """Lookups by a key code made (``mesh[...]._flatten("dp_cp")`` then ``mesh["dp_cp"]``),
    as notes name them: an item whose prose matches ``pattern`` changes such lookups, each a
    use of ``api``. How code makes the key is the code step's half of the entry
    (``code.madekeys``)."""

    name: str  # "flattened mesh dims"
    pattern: re.Pattern[str]
    api: str


@dataclass(frozen=True)
class CodeShape:
    """A shape of code notes name in words, with no API of their own ("an output of a custom
    operator shares storage with an input"): an item whose prose matches ``pattern`` reaches
    the uses of ``api`` the code step marks with ``shape`` (``code.aliasing``)."""

    name: str
    pattern: re.Pattern[str]
    api: str
    shape: Literal["returns_input"]


@dataclass(frozen=True)
class ValueKind:
    """A kind of value of an option a change can be limited to ("fully masked rows" of
    ``attn_mask``), the words notes name it by, and the use field that shows a call cannot
    pass one (``shown_by``)."""

    name: str
    words: tuple[str, ...]  # lower-case phrases
    options: tuple[str, ...]
    shown_by: str


@dataclass(frozen=True)
class ExemptedBy:
    """Values of an argument for which a torch function does not apply ``option`` at all, so a
    changed default of ``option`` cannot reach a call passing one (``torch.hub.load`` checks
    ``trust_repo`` only for a repo whose owner it does not trust already): the argument is
    passed first or under one of ``names``, as a string starting with one of ``prefixes``."""

    apis: frozenset[str]
    option: str
    names: tuple[str, ...]
    prefixes: tuple[str, ...]


@dataclass(frozen=True)
class Vocabulary:
    markers: frozenset[str]
    inputs: tuple[InputKind, ...]
    passed_on: tuple[PassedOn, ...] = ()
    subclasses: tuple[OutsideSubclass, ...] = ()
    made_keys: tuple[MadeKey, ...] = ()
    settled_by: tuple[SettledBy, ...] = ()
    exempted_by: tuple[ExemptedBy, ...] = ()
    values: tuple[ValueKind, ...] = ()
    code_shapes: tuple[CodeShape, ...] = ()

    def exempting(self, apis: set[str], option: str) -> list[ExemptedBy]:
        """The argument values that exempt a call of any of ``apis`` from ``option``."""
        return [entry for entry in self.exempted_by if entry.apis & apis and
                entry.option == option]

    def outside_subclasses(self, base: str) -> list[str]:
        """Every name of another package's class deriving from ``base``."""
        return [name for entry in self.subclasses if entry.base == base for name in entry.names]

    def settling(self, apis: set[str], option: str) -> list[str]:
        """The options (``name`` or ``name=value``) whose passing settles ``option`` of any of
        ``apis``."""
        return [setting for entry in self.settled_by
                if entry.apis & apis and entry.option == option for setting in entry.by]

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
    subclasses = tuple(OutsideSubclass(entry["base"], tuple(entry["names"]))
                       for entry in data.get("subclasses", []))
    made_keys = tuple(MadeKey(entry["name"], re.compile(entry["pattern"], re.IGNORECASE),
                              entry["api"]) for entry in data.get("made_keys", []))
    settled_by = tuple(SettledBy(frozenset(entry["apis"]), entry["option"], tuple(entry["by"]))
                       for entry in data.get("settled_by", []))
    exempted_by = tuple(ExemptedBy(frozenset(entry["apis"]), entry["option"],
                                   tuple(entry["names"]), tuple(entry["prefixes"]))
                        for entry in data.get("exempted_by", []))
    values = tuple(ValueKind(entry["name"], tuple(word.lower() for word in entry["words"]),
                             tuple(entry["options"]), entry["shown_by"])
                   for entry in data.get("values", []))
    code_shapes = tuple(CodeShape(entry["name"], re.compile(entry["pattern"], re.IGNORECASE),
                                  entry["api"], shape_of(entry))
                        for entry in data.get("code_shapes", []))
    return Vocabulary(frozenset(data.get("markers", [])), inputs, passed_on, subclasses,
                      made_keys, settled_by, exempted_by, values, code_shapes)


def shape_of(entry: dict[str, object]) -> Literal["returns_input"]:
    """A ``[[code_shapes]]`` entry's shape: one the code step reads."""
    value = entry.get("shape")
    if value == "returns_input":
        return value
    raise ValueError(f"impact.toml: code_shapes {entry.get('name')!r}: unknown shape {value!r}")


def within(entry: dict[str, object]) -> Within:
    value = entry.get("within", "codebase")
    if value == "file" or value == "definition" or value == "codebase":
        return value
    raise ValueError(f"impact.toml: input {entry.get('name')!r}: within must be "
                     f"'codebase', 'file' or 'definition', not {value!r}")
