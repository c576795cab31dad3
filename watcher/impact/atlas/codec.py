"""The atlas on disk: gzip'd, a JSON header line and then one JSON document per module, laid
out so that loading reads the header alone (a few ms) and a module is decoded only when a name
in it is asked for (``table.py``).

    {"format": 1, "package": "torch", "version": "2.7.0",
     "modules": [["torch", length], ..., ["torch.optim.lr_scheduler", length], ...],
     "skipped": ["torch._deep"], "requires_python": ">=3.9.0",
     "requires": ["filelock", "sympy>=1.13.3", ...]}
    [null, {"StepLR": ["c", null, null, ["torch.optim.lr_scheduler.LRScheduler"], {},
                       {"__init__": ["m", ["optimizer", "step_size", "gamma=0.1"]]}], ...},
     {"load": "torch.serialization.", ...}]
    ...

The header's ``skipped``, only where the build could not read a module, names those;
``requires_python`` and ``requires``, the wheel's ``Requires-Python`` and ``Requires-Dist``,
are there only where it states them.

A module's document (every module an API is defined in, public or not; each ``length``
bytes, one after the other after the header line): its deprecation message, its definitions
by name (a class's methods inside its row), and, for a public module, the names users write on it
beyond its own public definitions (which the rows imply): the canonical name, or only its
module (ending in a dot) where the name is the same there, or 0 for a private definition the
module exports (``__all__``); then the attributes it binds from the package without making
them public names (``Atlas.bound``). Grouping by module spares the dotted prefixes that would
otherwise fill the file.

An API is ``[kind, params, deprecated, bases, deprecated_params, members, raises]``, trailing
empties left out; a parameter is one string: a kind prefix (none: positional or keyword; ``/``
positional-only; ``~`` keyword-only; ``*``, ``**``), its name, and ``=default`` when it has one.
"""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any

from watcher.impact.atlas.errors import WheelUnreadable
from watcher.impact.atlas.model import MODULE, Atlas
from watcher.impact.atlas.table import (
    ApiTable,
    BoundTable,
    DerivedTable,
    ModuleTable,
    NameTable,
    encode,
    own,
    trim,
)

FORMAT = 1


def dumps(atlas: Atlas) -> bytes:
    """The atlas as gzip'd bytes; the same atlas always gives the same bytes."""
    modules = _entries(atlas)
    index: list[list[Any]] = []
    parts: list[bytes] = []
    for name, entry in modules.items():
        part = json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        index.append([name, len(part)])
        parts.append(part)
    header: dict[str, Any] = {"format": FORMAT, "package": atlas.package,
                              "version": atlas.version, "modules": index}
    if atlas.skipped:  # left out otherwise: an atlas read whole keeps the bytes it always had
        header["skipped"] = sorted(atlas.skipped)
    if atlas.requires_python:
        header["requires_python"] = atlas.requires_python
    if atlas.requires:
        header["requires"] = list(atlas.requires)
    head = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return gzip.compress(b"\n".join([head, b"".join(parts)]), compresslevel=9, mtime=0)


def loads(data: bytes, *, origin: str = "atlas") -> Atlas:
    """An atlas from ``dumps``'s bytes; ``origin`` names them in the error when they are not
    an atlas this version can read."""
    try:
        text = gzip.decompress(data)
        head, _, body = text.partition(b"\n")
        header = json.loads(head)
    except (OSError, EOFError, ValueError, zlib.error) as error:
        raise WheelUnreadable(f"{origin}: not an API atlas ({error})") from error
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        found = header.get("format") if isinstance(header, dict) else None
        raise WheelUnreadable(f"{origin}: atlas format {found!r}, this release-watch reads "
                              f"format {FORMAT}; rebuild it with `release-watch atlas build`")
    offsets: dict[str, tuple[int, int]] = {}
    offset = 0
    for name, length in header["modules"]:
        offsets[name] = (offset, length)
        offset += length
    table = ModuleTable(offsets, body)
    return Atlas(str(header["package"]), str(header["version"]), ApiTable(table),
                 NameTable(table), DerivedTable(table), BoundTable(table),
                 tuple(str(name) for name in header.get("skipped", ())),
                 str(header.get("requires_python", "")),
                 tuple(str(line) for line in header.get("requires", ())))


def _entries(atlas: Atlas) -> dict[str, list[Any]]:
    """Each module's document (see the module docstring), by module, sorted."""
    modules: dict[str, list[Any]] = {}
    for name in sorted(atlas.apis):
        if atlas.apis[name].kind == MODULE:
            modules[name] = [atlas.apis[name].deprecated, {}]
    for name in sorted(atlas.apis):
        api = atlas.apis[name]
        module = atlas.module_of(name) if api.kind != MODULE else None
        if module is None:
            continue
        owner, dot, member = name[len(module) + 1:].rpartition(".")
        rows = modules[module][1]
        if not dot:
            rows[member] = encode(api)
        elif owner in rows:
            row = rows[owner]
            row.extend([None, None, [], {}, {}][len(row) - 1:])  # up to its members
            row[5][member] = encode(api)
    for name, canonical in sorted(atlas.names.items()):
        if canonical == name and name in modules:
            _names(modules[name])
            continue
        module, _, attr = name.rpartition(".")
        entry = modules.setdefault(module, [None, {}])
        table = _names(entry)
        if canonical == name and own(entry, attr):
            continue  # implied by the definition's row
        if canonical == name:
            table[attr] = 0
        elif canonical.endswith("." + attr):
            table[attr] = canonical[: -len(attr)]  # "torch._C._VariableFunctions."
        else:
            table[attr] = canonical
    for module, attrs in sorted(atlas.bound.items()):
        entry = modules.setdefault(module, [None, {}])
        _names(entry)
        entry.append(list(attrs))
    for entry in modules.values():
        for row in entry[1].values():
            trim(row)
        if len(entry) == 2:
            trim(entry)
    return modules


def _names(entry: list[Any]) -> dict[str, Any]:
    """A module's table of public names, made empty where it has none yet."""
    if len(entry) == 2:
        entry.append({})
    table: dict[str, Any] = entry[2]
    return table
