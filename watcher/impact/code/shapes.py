"""The shapes of expression the walk reads as one piece: a plain dotted name, the string keys
of a config ``patch``, the keys of a dict built literally, and the imports that run at module
level."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from watcher.impact.code.guards import dead_branch
from watcher.impact.code.nodes import push_children

__all__ = ["chain_of", "literal_keys", "returned_keys", "string_keys", "top_level_imports"]


def chain_of(node: ast.expr) -> tuple[str, tuple[str, ...]] | None:
    """(root, attributes) of a plain dotted name such as ``torch.load``; None otherwise."""
    attrs: list[str] = []
    while type(node) is ast.Attribute:
        attrs.append(node.attr)
        node = node.value
    if type(node) is not ast.Name:
        return None
    attrs.reverse()
    return node.id, tuple(attrs)


def string_keys(node: ast.expr) -> tuple[str, ...]:
    """The config names of ``patch({"name": value})`` or ``patch("name", value)``."""
    if type(node) is ast.Constant and isinstance(node.value, str):
        return (node.value,)
    if type(node) is ast.Dict:
        return tuple(key.value for key in node.keys
                     if type(key) is ast.Constant and isinstance(key.value, str))
    return ()


def top_level_imports(body: list[ast.stmt]) -> list[ast.stmt]:
    """The imports that run at module level, also inside ``if``/``try``/``with`` blocks."""
    found: list[ast.stmt] = []
    pending = list(body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, ast.Import | ast.ImportFrom):
            found.append(statement)
        elif isinstance(statement, ast.If | ast.Try | ast.TryStar | ast.With):
            for field in ("body", "orelse", "finalbody"):
                pending += getattr(statement, field, [])
            for handler in getattr(statement, "handlers", []):
                pending += handler.body
    return found


def literal_keys(node: ast.expr, functions: Callable[[str], set[str] | None] | None = None
                 ) -> set[str] | None:
    """The keys of ``{"a": 1, "b": 2}``, ``dict(a=1, b=2)``, of both branches of
    ``{"a": 1} if c else {}`` (any path's keys: a call passing it says those options), or of
    ``f()`` where ``functions`` knows what ``f`` returns; None for anything else (a ``**``
    inside, a computed key, another value)."""
    kind = type(node)
    if kind is ast.Dict:
        keys = set()
        for key in node.keys:  # type: ignore[attr-defined]
            if type(key) is not ast.Constant or not isinstance(key.value, str):
                return None
            keys.add(key.value)
        return keys
    if kind is ast.IfExp:
        dead = dead_branch(node.test)  # type: ignore[attr-defined]
        body = literal_keys(node.body, functions) if dead != "body" else set()  # type: ignore[attr-defined]
        orelse = literal_keys(node.orelse, functions) if dead != "orelse" else set()  # type: ignore[attr-defined]
        return None if body is None or orelse is None else body | orelse
    if kind is not ast.Call or type(node.func) is not ast.Name:  # type: ignore[attr-defined]
        return None
    name = node.func.id  # type: ignore[attr-defined]
    if name == "dict":
        if node.args or any(keyword.arg is None for keyword in node.keywords):  # type: ignore[attr-defined]
            return None
        return {str(keyword.arg) for keyword in node.keywords}  # type: ignore[attr-defined]
    known = functions(name) if functions is not None else None
    return None if known is None else set(known)


def returned_keys(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str] | None:
    """The keys of every dict a function can return, when each of its ``return``s gives a
    literal one (``return {"multiprocessing_context": ctx}`` / ``return {}``); None when one
    returns anything else or it can end without a return."""
    keys: set[str] = set()
    returns: list[ast.expr | None] = []
    local: dict[str, set[str] | None] = {}  # names bound once to a literal dict, and only so
    pending: list[Any] = list(function.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is ast.Name or kind is ast.Constant:
            continue  # the commonest nodes, and nothing below them
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue  # a nested definition's returns are its own
        if isinstance(node, ast.Return):
            returns.append(node.value)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            name = node.targets[0].id
            local[name] = literal_keys(node.value) if name not in local else None
        elif isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.value, ast.Name):
            local[node.value.id] = None  # ``batch["x"] = ...``, ``batch.update(...)``: unknown
        # No generator per node (``ast.iter_child_nodes``); the order the stack gives the
        # children does not matter, every one is seen.
        push_children(pending, node, kind)
    for value in returns:
        # ``return {...}``, or ``return batch`` of a dict the function built literally
        found = (local.get(value.id) if isinstance(value, ast.Name)
                 else literal_keys(value) if value is not None else None)
        if found is None:
            return None
        keys |= found
    return keys if returns and not falls_through(function.body) else None


def falls_through(body: list[ast.stmt]) -> bool:
    """Whether a block can end without a ``return`` or ``raise`` (a function returning None)."""
    last = body[-1] if body else None
    if type(last) in (ast.Return, ast.Raise):
        return False
    if type(last) is ast.If:
        return falls_through(last.body) or falls_through(last.orelse)
    return True
