"""The atlas on disk: gzip'd JSON with a format version, laid out so that loading is one
``json.loads`` (dicts and lists built in C) and each API and name is decoded only when asked.

    {"format": 1, "package": "torch", "version": "2.7.0",
     "modules": {"torch.optim.lr_scheduler": [null, {"StepLR": ["c", null, null, [...], {},
                                                     {"__init__": ["m", [...]]}], ...},
                                              {"StepLR": 0, ...}],
                 "torch": [null, {...}, {"load": "torch.serialization.load", ...}], ...}}

Per module (every module an API is defined in, public or not): its deprecation message, its
definitions by name (a class's methods inside its row), and, for a public module, the names
users write on it beyond its own public definitions (which the rows imply): the canonical name,
or only its module (ending in a dot) where the name is the same there, or 0 for a private
definition the module exports (``__all__``).
Grouping by module spares repeating the dotted prefixes that would otherwise fill the file.

An API is ``[kind, params, deprecated, bases, deprecated_params, members, raises]``, trailing
empties left out; a parameter is one string: a kind prefix (none: positional or keyword; ``/``
positional-only; ``~`` keyword-only; ``*``, ``**``), its name, and ``=default`` when it has one.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping
from typing import Any

from watcher.impact.atlas.errors import WheelUnreadable
from watcher.impact.atlas.model import (
    CLASS,
    DATA,
    FUNCTION,
    KEYWORD_ONLY,
    METHOD,
    MODULE,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    PROPERTY,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Api,
    Atlas,
    Param,
)

FORMAT = 1
_KINDS = {FUNCTION: "f", CLASS: "c", METHOD: "m", PROPERTY: "p", DATA: "d", MODULE: "M"}
_KIND_OF = {code: kind for kind, code in _KINDS.items()}
# Longest first: "**" before "*".
_PREFIXES = ((VAR_KEYWORD, "**"), (VAR_POSITIONAL, "*"), (POSITIONAL_ONLY, "/"),
             (KEYWORD_ONLY, "~"), (POSITIONAL_OR_KEYWORD, ""))
_PREFIX_OF = dict(_PREFIXES)


def dumps(atlas: Atlas) -> bytes:
    """The atlas as gzip'd JSON; the same atlas always gives the same bytes."""
    modules: dict[str, list[Any]] = {}
    for name in sorted(atlas.apis):
        if atlas.apis[name].kind == MODULE:
            modules[name] = [atlas.apis[name].deprecated, {}]
    for name in sorted(atlas.apis):
        api = atlas.apis[name]
        if api.kind == MODULE:
            continue
        module = atlas.module_of(name)
        if module is None:
            continue
        qualname = name[len(module) + 1:]
        owner, dot, member = qualname.rpartition(".")
        rows = modules[module][1]
        if dot and owner in rows:
            row = rows[owner]
            row.extend([None, None, [], {}, {}][len(row) - 1:])  # up to its members
            row[5][member] = _encode(api)
        elif not dot:
            rows[qualname] = _encode(api)
    for name, canonical in sorted(atlas.names.items()):
        if canonical == name and name in modules:
            _names(modules[name])
            continue
        module, _, attr = name.rpartition(".")
        entry = modules.setdefault(module, [None, {}])
        table = _names(entry)
        if canonical == name and _own(entry, attr):
            continue  # implied by the definition's row
        if canonical == name:
            table[attr] = 0
        elif canonical.endswith("." + attr):
            table[attr] = canonical[: -len(attr)]  # "torch._C._VariableFunctions."
        else:
            table[attr] = canonical
    for entry in modules.values():
        for row in entry[1].values():
            _trim(row)
        if len(entry) == 2:
            _trim(entry)
    document = {"format": FORMAT, "package": atlas.package, "version": atlas.version,
                "modules": modules}
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def loads(data: bytes, *, origin: str = "atlas") -> Atlas:
    """An atlas from ``dumps``'s bytes; ``origin`` names them in the error when they are not
    an atlas this version can read."""
    try:
        document = json.loads(gzip.decompress(data))
    except (OSError, EOFError, ValueError) as error:
        raise WheelUnreadable(f"{origin}: not an API atlas ({error})") from error
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        found = document.get("format") if isinstance(document, dict) else None
        raise WheelUnreadable(f"{origin}: atlas format {found!r}, this release-watch reads "
                              f"format {FORMAT}; rebuild it with `release-watch atlas build`")
    modules = document["modules"]
    return Atlas(str(document["package"]), str(document["version"]), _LazyApis(modules),
                 _LazyNames(modules))


def _split(modules: dict[str, list[Any]], name: str) -> tuple[str, str] | None:
    """``torch.optim.lr_scheduler.StepLR.step`` → (module, ``StepLR.step``), by the longest
    module prefix."""
    head, tail = name, ""
    while True:
        head, dot, last = head.rpartition(".")
        if not dot:
            return None
        tail = f"{last}.{tail}" if tail else last
        if head in modules:
            return head, tail


class _LazyApis(Mapping[str, Api]):
    """Canonical name → ``Api``, read from the modules' rows on first use and kept."""

    def __init__(self, modules: dict[str, list[Any]]) -> None:
        self._modules = modules
        self._decoded: dict[str, Api] = {}
        self._size: int | None = None

    def _row(self, name: str) -> list[Any] | None:
        if name in self._modules:
            return ["M", None, self._modules[name][0]]
        where = _split(self._modules, name)
        if where is None:
            return None
        rows = self._modules[where[0]][1]
        owner, dot, member = where[1].partition(".")
        row = rows.get(owner)
        if dot and row is not None:
            members: dict[str, list[Any]] = row[5] if len(row) > 5 else {}
            return members.get(member) if "." not in member else None
        found: list[Any] | None = row
        return found

    def __getitem__(self, name: str) -> Api:
        found = self._decoded.get(name)
        if found is None:
            row = self._row(name)
            if row is None:
                raise KeyError(name)
            found = self._decoded[name] = _decode(row)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._decoded or self._row(name) is not None)

    def __iter__(self) -> Iterator[str]:
        for module, entry in self._modules.items():
            yield module
            for qualname, row in entry[1].items():
                yield f"{module}.{qualname}"
                for member in (row[5] if len(row) > 5 else ()):
                    yield f"{module}.{qualname}.{member}"

    def __len__(self) -> int:
        if self._size is None:
            self._size = sum(1 for _ in self)
        return self._size


class _LazyNames(Mapping[str, str]):
    """Public name → canonical name, read from the modules' name tables."""

    def __init__(self, modules: dict[str, list[Any]]) -> None:
        self._modules = modules
        self._size: int | None = None

    def __getitem__(self, name: str) -> str:
        entry = self._modules.get(name)
        if entry is not None and len(entry) > 2:
            return name
        module, _, attr = name.rpartition(".")
        entry = self._modules.get(module)
        if entry is None or len(entry) < 3:
            raise KeyError(name)
        found = entry[2].get(attr)
        if found is None and _own(entry, attr):
            return name
        if found is None:
            raise KeyError(name)
        if found == 0:
            return name
        return f"{found}{attr}" if found.endswith(".") else str(found)

    def __iter__(self) -> Iterator[str]:
        for module, entry in self._modules.items():
            if len(entry) > 2:
                yield module
                yield from (f"{module}.{attr}" for attr in entry[2])
                yield from (f"{module}.{attr}" for attr in entry[1]
                            if attr not in entry[2] and _own(entry, attr))

    def __len__(self) -> int:
        if self._size is None:
            self._size = sum(1 for _ in self)
        return self._size


def _own(entry: list[Any], attr: str) -> bool:
    """Whether ``attr`` of a public module is the module's own public definition: such a
    name is not listed in its table (the row says it)."""
    return not attr.startswith("_") and attr in entry[1]


def _names(entry: list[Any]) -> dict[str, Any]:
    """A module's table of public names, made empty where it has none yet."""
    if len(entry) == 2:
        entry.append({})
    table: dict[str, Any] = entry[2]
    return table


def _trim(row: list[Any]) -> None:
    """Trailing empties off a row (None up to the deprecation message, empty after it)."""
    while len(row) > 1 and (row[-1] is None if len(row) in (2, 3) else not row[-1]):
        row.pop()


def _encode(api: Api) -> list[Any]:
    row: list[Any] = [_KINDS[api.kind],
                      None if api.params is None else [_param(p) for p in api.params],
                      api.deprecated, list(api.bases), dict(api.deprecated_params), {},
                      api.raises]
    _trim(row)
    return row


def _decode(row: list[Any]) -> Api:
    params = row[1] if len(row) > 1 else None
    return Api(_KIND_OF[row[0]],
               None if params is None else tuple(_unparam(text) for text in params),
               row[2] if len(row) > 2 else None,
               tuple(row[3]) if len(row) > 3 else (),
               tuple(sorted(row[4].items())) if len(row) > 4 else (),
               row[6] if len(row) > 6 else None)


def _param(param: Param) -> str:
    text = _PREFIX_OF[param.kind] + param.name
    return text if param.default is None else f"{text}={param.default}"


def _unparam(text: str) -> Param:
    name, equals, default = text.partition("=")
    for kind, prefix in _PREFIXES:
        if name.startswith(prefix):
            return Param(name[len(prefix):], kind, default if equals else None)
    raise AssertionError("unreachable: the empty prefix matches every name")
