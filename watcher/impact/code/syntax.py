"""Small readings of Python syntax trees that the atlas (a wheel's modules) and the subjects
reader (code in release notes) share."""

from __future__ import annotations

import ast

__all__ = ["dotted"]


def dotted(node: ast.expr) -> str:
    """``a.b.c`` for a name or an attribute chain rooted at a plain name, "" for anything
    else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))
