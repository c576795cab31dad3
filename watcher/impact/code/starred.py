"""Names a file gets from ``from m import *``: ``script(f)`` after ``from torch.jit import *``,
or ``torch.jit.script(f)`` after ``from .common import *`` where ``common`` imports torch.

The file alone cannot say which names a star import binds, so a reference to a name the file
never binds itself is kept as ``*.<name>`` and settled once the whole codebase is read
(``reexport``): the last star-imported module of the codebase that binds the name wins, as it
would at run time; else the file's one star import from outside the codebase (a library's
module binds what it documents); else nothing, since the name's origin cannot be told.
"""

from __future__ import annotations

import ast
import builtins

__all__ = ["STAR", "free_names", "is_starred"]

STAR = "*"
BUILTINS = frozenset(dir(builtins))


def is_starred(name: str) -> bool:
    return name.startswith(STAR + ".")


def free_names(tree: ast.Module, referenced: set[str]) -> set[str]:
    """Of the names ``referenced``, those the file binds nowhere (no assignment, parameter,
    ``def``/``class``, import, loop or ``with`` target) and Python does not provide: the ones
    only a star import can have bound. Read only for files with a star import."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                bound.add(node.id)  # type: ignore[attr-defined]
        elif kind is ast.arg:
            bound.add(node.arg)  # type: ignore[attr-defined]
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            bound.add(node.name)  # type: ignore[attr-defined]
        elif kind in (ast.Import, ast.ImportFrom):
            for alias in node.names:  # type: ignore[attr-defined]
                bound.add(alias.asname or alias.name.partition(".")[0])
        elif kind in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
            if node.name:  # type: ignore[attr-defined]
                bound.add(node.name)  # type: ignore[attr-defined]
        elif kind in (ast.Global, ast.Nonlocal):
            bound.update(node.names)  # type: ignore[attr-defined]
    return {name for name in referenced
            if name not in bound and name not in BUILTINS and not name.startswith("__")}
