"""A loaded atlas's modules, each decoded from its slice of the file on first use, and the
mappings ``Atlas`` reads through them: canonical name → ``Api``, public name → canonical name.
The rows' layout is ``codec.py``'s."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

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
    Param,
)

_KINDS = {FUNCTION: "f", CLASS: "c", METHOD: "m", PROPERTY: "p", DATA: "d", MODULE: "M"}
_KIND_OF = {code: kind for kind, code in _KINDS.items()}
# Longest first: "**" before "*".
_PREFIXES = ((VAR_KEYWORD, "**"), (VAR_POSITIONAL, "*"), (POSITIONAL_ONLY, "/"),
             (KEYWORD_ONLY, "~"), (POSITIONAL_OR_KEYWORD, ""))
_PREFIX_OF = dict(_PREFIXES)


class ModuleTable:
    """Module name → its document, ``json.loads`` of its slice when first asked for."""

    def __init__(self, index: dict[str, tuple[int, int]], body: bytes) -> None:
        self._index = index
        self._body = body
        self._decoded: dict[str, list[Any]] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def get(self, name: str) -> list[Any] | None:
        found = self._decoded.get(name)
        if found is None:
            where = self._index.get(name)
            if where is None:
                return None
            start, length = where
            found = self._decoded[name] = json.loads(self._body[start:start + length])
        return found

    def split(self, name: str) -> tuple[str, str] | None:
        """``torch.optim.lr_scheduler.StepLR.step`` → (module, ``StepLR.step``), by the
        longest module prefix."""
        head, tail = name, ""
        while True:
            head, dot, last = head.rpartition(".")
            if not dot:
                return None
            tail = f"{last}.{tail}" if tail else last
            if head in self._index:
                return head, tail


class ApiTable(Mapping[str, Api]):
    """Canonical name → ``Api``, read from the modules' rows on first use and kept."""

    def __init__(self, modules: ModuleTable) -> None:
        self._modules = modules
        self._decoded: dict[str, Api] = {}
        self._size: int | None = None

    def _row(self, name: str) -> list[Any] | None:
        entry = self._modules.get(name)
        if entry is not None:
            return ["M", None, entry[0]]
        where = self._modules.split(name)
        if where is None:
            return None
        rows = self._modules.get(where[0])[1]  # type: ignore[index]
        owner, dot, member = where[1].partition(".")
        row = rows.get(owner)
        if dot and row is not None:
            members: dict[str, list[Any]] = row[5] if len(row) > 5 else {}
            return members.get(member) if "." not in member else None
        found: list[Any] | None = row
        return found

    def row(self, name: str) -> list[Any] | None:
        """``name``'s row as the file stores it: equal rows decode to equal ``Api``s, so two
        releases' rows tell an API that did not change without decoding either."""
        return self._row(name)

    def __getitem__(self, name: str) -> Api:
        found: Api | None = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def get(self, name: str, default: Any = None) -> Any:
        """As ``Mapping.get``, without the ``KeyError`` it would raise and catch for each
        name not here (the diff asks about every name of two releases)."""
        found = self._decoded.get(name)
        if found is None:
            row = self._row(name)
            if row is None:
                return default
            found = self._decoded[name] = decode(row)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in self._decoded or self._row(name) is not None)

    def __iter__(self) -> Iterator[str]:
        for module in self._modules:
            yield module
            for qualname, row in self._modules.get(module)[1].items():  # type: ignore[index]
                yield f"{module}.{qualname}"
                for member in (row[5] if len(row) > 5 else ()):
                    yield f"{module}.{qualname}.{member}"

    def __len__(self) -> int:
        if self._size is None:
            self._size = sum(1 for _ in self)
        return self._size


class NameTable(Mapping[str, str]):
    """Public name → canonical name, read from the modules' name tables."""

    def __init__(self, modules: ModuleTable) -> None:
        self._modules = modules
        self._size: int | None = None

    def __getitem__(self, name: str) -> str:
        found = self.get(name)
        if found is None:
            raise KeyError(name)
        return str(found)

    def get(self, name: str, default: Any = None) -> Any:
        """As ``Mapping.get``, without raising and catching ``KeyError`` for a name not here.
        What a package binds under a name wins over its public submodule of that name, as at
        run time (``torch.quantization.fuse_modules`` is the function the package imports)."""
        module, _, attr = name.rpartition(".")
        parent = self._modules.get(module)
        bound = parent[2].get(attr) if parent is not None and len(parent) > 2 else None
        entry = self._modules.get(name)
        if bound is None and entry is not None and len(entry) > 2:
            return name
        if parent is None or len(parent) < 3:
            return default
        found = bound
        if found is None:
            return name if own(parent, attr) else default
        if found == 0:
            return name
        return f"{found}{attr}" if found.endswith(".") else str(found)

    def __iter__(self) -> Iterator[str]:
        for module in self._modules:
            entry = self._modules.get(module)
            if entry is not None and len(entry) > 2:
                yield module
                yield from (f"{module}.{attr}" for attr in entry[2])
                yield from (f"{module}.{attr}" for attr in entry[1]
                            if attr not in entry[2] and own(entry, attr))

    def pairs(self) -> Iterator[tuple[str, str]]:
        """``items()`` in the order of ``__iter__``, each canonical name read from its
        module's entry as ``get`` reads it, without looking the name up again."""
        modules = self._modules
        for module in modules:
            entry = modules.get(module)
            if entry is None or len(entry) <= 2:
                continue
            yield module, module
            table = entry[2]
            for attr, found in table.items():
                name = f"{module}.{attr}"
                if name in modules and len(modules.get(name) or ()) > 2:
                    yield name, name  # a module with names of its own: itself
                elif found is None:
                    if own(entry, attr):
                        yield name, name
                elif found == 0:
                    yield name, name
                else:
                    yield name, f"{found}{attr}" if found.endswith(".") else str(found)
            for attr in entry[1]:
                if attr not in table and own(entry, attr):
                    yield f"{module}.{attr}", f"{module}.{attr}"

    def __len__(self) -> int:
        if self._size is None:
            self._size = sum(1 for _ in self)
        return self._size


class DerivedTable(Mapping[str, tuple[str, ...]]):
    """Class → the classes naming it as a base, found on first use from the rows' bases
    alone (every module read, no ``Api`` made: a tenth of decoding them all)."""

    def __init__(self, modules: ModuleTable) -> None:
        self._modules = modules
        self._found: dict[str, tuple[str, ...]] | None = None

    def _index(self) -> dict[str, tuple[str, ...]]:
        if self._found is None:
            derived: dict[str, list[str]] = {}
            for module in self._modules:
                for name, row in self._modules.get(module)[1].items():  # type: ignore[index]
                    if row[0] == "c" and len(row) > 3:
                        for base in row[3]:
                            derived.setdefault(base, []).append(f"{module}.{name}")
            self._found = {base: tuple(sorted(subs)) for base, subs in derived.items()}
        return self._found

    def __getitem__(self, cls: str) -> tuple[str, ...]:
        return self._index()[cls]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index())

    def __len__(self) -> int:
        return len(self._index())


class BoundTable(Mapping[str, tuple[str, ...]]):
    """Public module → the attributes it binds without making them public names."""

    def __init__(self, modules: ModuleTable) -> None:
        self._modules = modules

    def __getitem__(self, module: str) -> tuple[str, ...]:
        entry = self._modules.get(module)
        if entry is None or len(entry) < 4:
            raise KeyError(module)
        return tuple(entry[3])

    def __iter__(self) -> Iterator[str]:
        return (module for module in self._modules
                if len(self._modules.get(module) or ()) > 3)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def own(entry: list[Any], attr: str) -> bool:
    """Whether ``attr`` of a public module is the module's own public definition: such a
    name is not listed in its table (the row says it)."""
    return not attr.startswith("_") and attr in entry[1]


def encode(api: Api) -> list[Any]:
    row: list[Any] = [_KINDS[api.kind],
                      None if api.params is None else [_param(p) for p in api.params],
                      api.deprecated, list(api.bases), dict(api.deprecated_params), {},
                      api.raises]
    trim(row)
    return row


def decode(row: list[Any]) -> Api:
    params = row[1] if len(row) > 1 else None
    return Api(_KIND_OF[row[0]],
               None if params is None else tuple(_unparam(text) for text in params),
               row[2] if len(row) > 2 else None,
               tuple(row[3]) if len(row) > 3 else (),
               tuple(sorted(row[4].items())) if len(row) > 4 else (),
               row[6] if len(row) > 6 else None,
               tuple(row[5]) if len(row) > 5 else ())


def trim(row: list[Any]) -> None:
    """Trailing empties off a row (None up to the deprecation message, empty after it)."""
    while len(row) > 1 and (row[-1] is None if len(row) in (2, 3) else not row[-1]):
        row.pop()


def _param(param: Param) -> str:
    text = _PREFIX_OF[param.kind] + param.name
    return text if param.default is None else f"{text}={param.default}"


def _unparam(text: str) -> Param:
    name, equals, default = text.partition("=")
    for kind, prefix in _PREFIXES:
        if name.startswith(prefix):
            return Param(name[len(prefix):], kind, default if equals else None)
    raise AssertionError("unreachable: the empty prefix matches every name")
