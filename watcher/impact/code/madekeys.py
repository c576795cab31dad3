"""Lookups by a key the file itself made: ``mesh["dp", "cp"]._flatten("dp_cp")`` makes the mesh
dim ``"dp_cp"``, and ``mesh["dp_cp"]`` slices it from the root mesh (the vocabulary's
``[[made_keys]]``); or by one of the keys an attribute lists (``root._flatten_mapping``).
Each lookup is a use of the entry's API, with the key and the line that made it, so a note
changing such lookups reaches them and nothing else.

Read only in files whose text calls a making method or names what keys are looked up on (a
substring test first: most files make no key), with one walk of the tree. A key is matched by
what the code writes: the same string, or the same name (``HSDP``, ``self.dim``); a key that
arrives as a parameter of the function making it (``def flatten(mesh, name):
mesh._flatten(name)``) can be any value, so any lookup by a name or attribute in the file may
be by it; a lookup by a parameter (``def get_mesh(self, name): return self._mesh[name]``) may
be by any key its callers give. Another file's lookup by a string on a value named for what
keys are looked up on (``backend.get_mesh()["dp_cp"]``) is kept until the scan has read every
file, and is a use where some file makes that string (``join_made_keys``).
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Any, NamedTuple

from watcher.impact.code.pywalk import Walker, enclosing
from watcher.impact.code.shapes import chain_of
from watcher.resources import defaults_dir

__all__ = ["KeyMaker", "MadeKeys", "join_made_keys", "key_makers", "made_key_rows"]

MAX_ROWS = 50  # lookups kept a file: enough to show every place, bounded on generated code


@dataclass(frozen=True)
class KeyMaker:
    """How code makes a key (``[[made_keys]]`` of ``config/impact.toml``, the fields the code
    step reads; ``subjects.terms`` reads how notes name the lookups): calls of ``.method``,
    the key passed as ``parameter`` or at ``position``; each lookup is a use of ``api``."""

    api: str
    method: str
    parameter: str
    position: int
    listed_by: tuple[str, ...] = ()  # attributes whose read lists the keys made so far
    # the word naming the values other files look the keys up on ("mesh": ``get_mesh()["dp"]``,
    # ``self.world_mesh["dp"]``): read there by string, joined with the keys made anywhere
    looked_up_on: str = ""


@cache
def key_makers() -> tuple[KeyMaker, ...]:
    with open(defaults_dir() / "impact.toml", "rb") as handle:
        entries = tomllib.load(handle).get("made_keys", [])
    return tuple(KeyMaker(entry["api"], entry["method"], entry["parameter"],
                          int(entry["position"]), tuple(entry.get("listed_by", ())),
                          entry.get("looked_up_on", "")) for entry in entries)


@dataclass(frozen=True)
class _Made:
    key: str  # as written: "'dp_cp'", "HSDP", "self.dim_name"
    line: int
    any_name: bool  # a parameter of the function that makes it: any name may carry it


class MadeKeys(NamedTuple):
    """A file's lookups by keys made (use rows, ``made_key``: the key and where it was made;
    ``keyed_by``: a string key another file may make, settled by ``join_made_keys``), and
    the string keys it makes: (api, key as written, line)."""

    rows: list[dict[str, object]]
    made: list[tuple[str, str, int]]


def made_key_rows(tree: ast.Module, text: str, walker: Walker, lines: list[str]) -> MadeKeys:
    """The file's lookups by keys it made, or by string keys another file may make, as use
    rows in file order, and the string keys it makes."""
    entries = [entry for entry in key_makers() if f".{entry.method}(" in text
               or any(f".{listing}" in text for listing in entry.listed_by)
               or (entry.looked_up_on and _looked_up(entry.looked_up_on).search(text))]
    if not entries:
        return MadeKeys([], [])
    nodes = list(ast.walk(tree))  # one walk, read by each step below
    rows: list[dict[str, object]] = []
    strings: list[tuple[str, str, int]] = []
    for entry in entries:
        made = _made_keys(nodes, entry, walker)
        made.update(_listed_keys(nodes, entry.listed_by))
        strings += [(entry.api, key, found.line) for key, found in made.items()
                    if key.startswith("'")]
        for line, key, how in _lookups(nodes, made, entry, walker):
            code = lines[line - 1].strip()[:200] if line <= len(lines) else ""
            row: dict[str, object] = {"line": line, "code": code, "name": entry.api,
                                      "is_call": True}
            if how:
                row["made_key"] = f"{key}, {how}"
            else:
                row["keyed_by"] = key
            rows.append(row)
    rows.sort(key=lambda row: int(str(row["line"])))
    return MadeKeys(rows[:MAX_ROWS], strings)


@cache
def _looked_up(word: str) -> re.Pattern[str]:
    """A subscript of a value whose last name holds ``word`` (``world_mesh[``,
    ``get_mesh()[``): the substring test a file passes before its tree is walked for them."""
    return re.compile(rf"{re.escape(word)}\w*(?:\(\))?\[", re.IGNORECASE)


def join_made_keys(records: list[Any]) -> None:
    """Settles, in place, each record's lookups by a string key (``keyed_by``) against the
    string keys any file of the codebase makes (``made_keys``): a lookup by one becomes a use
    (``made_key``: the key, the file and line making it); the others are no use of anything
    and are dropped. ``records``: what has ``path``, ``uses``, ``made_keys`` and
    ``awaits_keys`` (whether a row is keyed so: only those records are read row by row)."""
    made: dict[tuple[str, str], tuple[str, int]] = {}
    for record in records:
        for api, key, line in record.made_keys:
            made.setdefault((api, key), (record.path, line))
    for record in records:
        if not record.awaits_keys:
            continue
        kept = []
        for row in record.uses:
            key = row.pop("keyed_by", None)
            if key is not None:
                where = made.get((row["name"], key))
                if where is None:
                    continue
                row["made_key"] = f"{key}, made by {where[0]} line {where[1]}"
            kept.append(row)
        record.uses[:] = kept


def _made_keys(nodes: list[ast.AST], entry: KeyMaker, walker: Walker) -> dict[str, _Made]:
    """Each key a call of ``.method(...)`` on a value (not on an imported module:
    ``torch.jit._flatten(x)`` is another function) names, by how it is written; a name that
    is a parameter of the innermost function around the call may be any value."""
    made: dict[str, _Made] = {}
    for node in nodes:
        if type(node) is not ast.Call or type(node.func) is not ast.Attribute or \
                node.func.attr != entry.method or _on_module(node.func.value, walker.aliases):
            continue
        argument = next((keyword.value for keyword in node.keywords
                         if keyword.arg == entry.parameter), None)
        if argument is None and len(node.args) > entry.position:
            argument = node.args[entry.position]
        key = _written(argument)
        if key is None or key in made:
            continue
        around = enclosing(walker.functions, node.lineno)
        made[key] = _Made(key, node.lineno, type(argument) is ast.Name and bool(around)
                          and argument.id in around[0][4])
    return made


def _listed_keys(nodes: list[ast.AST], listed_by: tuple[str, ...]) -> dict[str, _Made]:
    """A read of an attribute listing the keys made so far (``mesh._flatten_mapping``), as a
    key that may be any name: the first read of each such attribute."""
    found: dict[str, _Made] = {}
    if not listed_by:
        return found
    for node in nodes:
        if type(node) is ast.Attribute and node.attr in listed_by and \
                type(node.ctx) is ast.Load:
            key = f"the keys of {node.attr}"
            if key not in found or node.lineno < found[key].line:
                found[key] = _Made(key, node.lineno, any_name=True)
    return found


def _on_module(value: ast.expr, aliases: dict[str, str]) -> bool:
    """``torch.jit._flatten``: the receiver is a chain rooted at an import."""
    chain = chain_of(value)
    return chain is not None and chain[0] in aliases


def _written(node: ast.expr | None) -> str | None:
    """A key as written: a string literal quoted, a name or attribute chain dotted; None for
    anything else (a call, an f-string, None)."""
    if type(node) is ast.Constant:
        return repr(node.value) if isinstance(node.value, str) else None
    chain = chain_of(node) if node is not None else None
    return None if chain is None else ".".join((chain[0], *chain[1]))


def _lookups(nodes: list[ast.AST], made: dict[str, _Made], entry: KeyMaker, walker: Walker
             ) -> list[tuple[int, str, str]]:
    """Each subscript read by a made key, or by any name when a key is a parameter, or (in a
    file making keys) by a parameter of its own function, which its callers may give a made
    key; not the subscripts a making call is made on (``mesh["dp", "cp"]._flatten(...)``
    names the dims it flattens). With no way it was made (""), a read by a string key on a
    value named for ``looked_up_on`` (``get_mesh()["dp_cp"]``), which another file may make."""
    loose = next((key for key in made.values() if key.any_name), None)
    first = min(made.values(), key=lambda key: key.line) if made else None
    receivers = {id(node.func.value) for node in nodes
                 if type(node) is ast.Call and type(node.func) is ast.Attribute
                 and node.func.attr == entry.method}
    found: list[tuple[int, str, str]] = []
    for node in nodes:
        if type(node) is not ast.Subscript or type(node.ctx) is not ast.Load or \
                id(node) in receivers:
            continue
        parts = node.slice.elts if type(node.slice) is ast.Tuple else [node.slice]
        for part in parts:
            key = _written(part)
            if key is None:
                continue
            if key in made:
                found.append((node.lineno, key, f"made by line {made[key].line}"))
                break
            if loose is not None and not key.startswith("'"):
                found.append((node.lineno, key, f"which may be {loose.key} (line "
                                                f"{loose.line})"))
                break
            if first is not None and type(part) is ast.Name and _parameter(part, walker):
                found.append((node.lineno, key, f"a parameter its callers give, which may be "
                                                f"{first.key} (line {first.line})"))
                break
            if key.startswith("'") and entry.looked_up_on and \
                    entry.looked_up_on in _last_name(node.value).lower():
                found.append((node.lineno, key, ""))
                break
    return found


def _parameter(name: ast.Name, walker: Walker) -> bool:
    """Whether ``name`` is a parameter of a function around it (a closure reads its outer
    function's: ``def get_mesh(self, name): def _get(): return self._mesh[name]``)."""
    return any(name.id in function[4] for function in enclosing(walker.functions, name.lineno))


def _last_name(value: ast.expr) -> str:
    """The last name of what a subscript is taken of: ``world_mesh``, ``self.mesh``'s
    ``mesh``, ``backend.get_mesh()``'s ``get_mesh``."""
    if type(value) is ast.Call:
        value = value.func
    if type(value) is ast.Attribute:
        return value.attr
    return value.id if type(value) is ast.Name else ""
