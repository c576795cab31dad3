"""Lookups by a key the file itself made: ``mesh["dp", "cp"]._flatten("dp_cp")`` makes the mesh
dim ``"dp_cp"``, and ``mesh["dp_cp"]`` slices it from the root mesh (the vocabulary's
``[[made_keys]]``); or by one of the keys an attribute lists (``root._flatten_mapping``).
Each lookup is a use of the entry's API, with the key and the line that made it, so a note
changing such lookups reaches them and nothing else.

Read only in files whose text calls a making method (a substring test first: most files
make no key), with one walk of the tree. A key is matched by what the code writes: the same
string, or the same name (``HSDP``, ``self.dim``); a key that arrives as a parameter of the
function making it (``def flatten(mesh, name): mesh._flatten(name)``) can be any value, so any
lookup by a name or attribute in the file may be by it.
"""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from functools import cache

from watcher.impact.code.pywalk import Walker, enclosing
from watcher.impact.code.shapes import chain_of
from watcher.resources import defaults_dir

__all__ = ["KeyMaker", "key_makers", "made_key_rows"]

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


@cache
def key_makers() -> tuple[KeyMaker, ...]:
    with open(defaults_dir() / "impact.toml", "rb") as handle:
        entries = tomllib.load(handle).get("made_keys", [])
    return tuple(KeyMaker(entry["api"], entry["method"], entry["parameter"],
                          int(entry["position"]), tuple(entry.get("listed_by", ())))
                 for entry in entries)


@dataclass(frozen=True)
class _Made:
    key: str  # as written: "'dp_cp'", "HSDP", "self.dim_name"
    line: int
    any_name: bool  # a parameter of the function that makes it: any name may carry it


def made_key_rows(tree: ast.Module, text: str, walker: Walker,
                  lines: list[str]) -> list[dict[str, object]]:
    """The file's lookups by keys it made, as use rows (``made_key``: the key and where it
    was made), in file order."""
    entries = [entry for entry in key_makers() if f".{entry.method}(" in text
               or any(f".{listing}" in text for listing in entry.listed_by)]
    if not entries:
        return []
    nodes = list(ast.walk(tree))  # one walk, read by each step below
    rows: list[dict[str, object]] = []
    for entry in entries:
        made = _made_keys(nodes, entry, walker)
        made.update(_listed_keys(nodes, entry.listed_by))
        if not made:
            continue
        for line, key, how in _lookups(nodes, made, entry.method):
            code = lines[line - 1].strip()[:200] if line <= len(lines) else ""
            rows.append({"line": line, "code": code, "name": entry.api, "is_call": True,
                         "made_key": f"{key}, {how}"})
    rows.sort(key=lambda row: int(str(row["line"])))
    return rows[:MAX_ROWS]


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


def _lookups(nodes: list[ast.AST], made: dict[str, _Made], method: str
             ) -> list[tuple[int, str, str]]:
    """Each subscript read by a made key, or by any name when a key is a parameter; not the
    subscripts a making call is made on (``mesh["dp", "cp"]._flatten(...)`` names the dims
    it flattens)."""
    loose = next((key for key in made.values() if key.any_name), None)
    receivers = {id(node.func.value) for node in nodes
                 if type(node) is ast.Call and type(node.func) is ast.Attribute
                 and node.func.attr == method}
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
    return found
