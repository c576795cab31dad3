"""The deprecation markers source code carries, read with ``ast``: a ``@deprecated(...)``
decorator (``typing_extensions``, ``warnings``, or a package's own of that name), and
``warnings.warn(..., FutureWarning | DeprecationWarning)`` (also ``category=``) in a body.

A warning raised only under an ``if`` that tests a parameter (``if verbose is not None``)
deprecates that parameter, not the function: the call is fine without it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from watcher.impact.syntax import dotted

CATEGORIES = frozenset({"FutureWarning", "DeprecationWarning"})
MAX_MESSAGE = 200
_BLANKS = re.compile(r"\s+")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


@dataclass
class Markers:
    """What one body warns about: the whole (``deprecated``) or some of its parameters."""

    deprecated: str | None = None
    params: dict[str, str] = field(default_factory=dict)


def decorator_marker(decorators: list[ast.expr]) -> str | None:
    """The message of a ``@deprecated`` decorator ("" without one), None when there is none."""
    for decorator in decorators:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if dotted(target).rpartition(".")[2] != "deprecated":
            continue
        if isinstance(decorator, ast.Call) and decorator.args:
            return message_text(decorator.args[0])
        return ""
    return None


def body_markers(body: list[ast.stmt], params: frozenset[str] = frozenset()) -> Markers:
    """The deprecation warnings raised in ``body`` (nested ``def``s and classes are their own
    bodies, not this one's)."""
    found = Markers()
    for call, tested in _calls(body, frozenset()):
        message = warning_message(call)
        if message is None:
            continue
        names = tested & params
        if names:
            for name in sorted(names):
                found.params.setdefault(name, message)
        elif found.deprecated is None:
            found.deprecated = message
    return found


def warning_message(call: ast.Call) -> str | None:
    """The message of a ``warnings.warn(message, FutureWarning)`` call, None for any other."""
    if dotted(call.func) not in ("warnings.warn", "warn"):
        return None
    category = call.args[1] if len(call.args) > 1 else next(
        (keyword.value for keyword in call.keywords if keyword.arg == "category"), None)
    if category is None or dotted(category).rpartition(".")[2] not in CATEGORIES:
        return None
    return message_text(call.args[0]) if call.args else ""


def message_text(node: ast.expr) -> str:
    """A message as its reader sees it, one line, trimmed: an f-string keeps its ``{...}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(str(part.value) if isinstance(part, ast.Constant) else
                       "{" + ast.unparse(part.value) + "}"  # type: ignore[attr-defined]
                       for part in node.values)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        text = message_text(node.left)
    else:
        text = ast.unparse(node)
    text = _BLANKS.sub(" ", text).strip()
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1].rstrip() + "…"


Found = Iterator[tuple[ast.Call, frozenset[str]]]


def _calls(nodes: list[ast.stmt], tested: frozenset[str]) -> Found:
    """Every call in ``nodes`` outside nested scopes, with the names the ``if``s around it
    test."""
    for node in nodes:
        yield from _walk(node, tested)


def _walk(node: ast.AST, tested: frozenset[str]) -> Found:
    if isinstance(node, _SCOPES):
        return
    if isinstance(node, ast.If | ast.IfExp | ast.While):
        inner = tested | {name.id for name in ast.walk(node.test) if isinstance(name, ast.Name)}
        yield from _walk(node.test, tested)
        for child in (*_as_list(node.body), *_as_list(node.orelse)):
            yield from _walk(child, inner)
        return
    if isinstance(node, ast.Call):
        yield node, tested
    for child in ast.iter_child_nodes(node):
        yield from _walk(child, tested)


def _as_list(value: ast.AST | list[ast.stmt]) -> list[ast.AST]:
    return list(value) if isinstance(value, list) else [value]
