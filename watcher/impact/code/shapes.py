"""The shapes of expression the walk reads as one piece: a plain dotted name, the string keys
of a config ``patch``, the keys of a dict built literally, and the imports that run at module
level."""

from __future__ import annotations

import ast

__all__ = ["chain_of", "literal_keys", "string_keys", "top_level_imports"]


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


def literal_keys(node: ast.expr) -> set[str] | None:
    """The keys of ``{"a": 1, "b": 2}`` or ``dict(a=1, b=2)``; None for anything else (a
    ``**`` inside, a computed key, another value)."""
    if type(node) is ast.Dict:
        keys = set()
        for key in node.keys:
            if type(key) is not ast.Constant or not isinstance(key.value, str):
                return None
            keys.add(key.value)
        return keys
    if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "dict" \
            and not node.args and all(keyword.arg is not None for keyword in node.keywords):
        return {str(keyword.arg) for keyword in node.keywords}
    return None
