"""The deprecation markers source code carries, read with ``ast``: a ``@deprecated(...)``
decorator (``typing_extensions``, ``warnings``, or a package's own of that name), and
``warnings.warn(..., FutureWarning | DeprecationWarning)`` (also ``category=``) in a body.

A warning raised only under an ``if`` that tests a parameter (``if verbose is not None``)
deprecates that parameter, not the function: the call is fine without it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from watcher.impact.code import dotted

CATEGORIES = frozenset({"FutureWarning", "DeprecationWarning"})
MAX_MESSAGE = 200
_BLANKS = re.compile(r"\s+")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
Constants = Mapping[str, str]
_EMPTY: Constants = {}


@dataclass
class Markers:
    """What one body warns about: the whole (``deprecated``) or some of its parameters."""

    deprecated: str | None = None
    params: dict[str, str] = field(default_factory=dict)


def decorator_marker(decorators: list[ast.expr], constants: Constants = _EMPTY) -> str | None:
    """The message of a ``@deprecated`` decorator ("" without one), None when there is none."""
    for decorator in decorators:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if dotted(target).rpartition(".")[2] != "deprecated":
            continue
        if isinstance(decorator, ast.Call) and decorator.args:
            return message_text(decorator.args[0], constants)
        return ""
    return None


def body_markers(body: list[ast.stmt], params: frozenset[str] = frozenset(),
                 constants: Constants = _EMPTY) -> Markers:
    """The deprecation warnings raised in ``body`` (nested ``def``s and classes are their own
    bodies, not this one's); ``constants``: the module's strings, for a message held in one."""
    found = Markers()
    for call, tested in _calls(body, frozenset()):
        message = warning_message(call, constants)
        if message is None:
            continue
        names = tested & params
        if names:
            for name in sorted(names):
                found.params.setdefault(name, message)
        elif found.deprecated is None:
            found.deprecated = message
    return found


def warning_message(call: ast.Call, constants: Constants = _EMPTY) -> str | None:
    """The message of a ``warnings.warn(message, FutureWarning)`` call, None for any other."""
    if dotted(call.func) not in ("warnings.warn", "warn"):
        return None
    category = call.args[1] if len(call.args) > 1 else next(
        (keyword.value for keyword in call.keywords if keyword.arg == "category"), None)
    if category is None or dotted(category).rpartition(".")[2] not in CATEGORIES:
        return None
    return message_text(call.args[0], constants) if call.args else ""


def message_text(node: ast.expr, constants: Constants = _EMPTY) -> str:
    """A message as its reader sees it, one line, trimmed: an f-string keeps its ``{...}``;
    a module constant is its text (``_CONTEXT_STACK_DEPRECATION``), not its name."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.Name) and node.id in constants:
        text = constants[node.id]
    elif isinstance(node, ast.JoinedStr):
        text = "".join(str(part.value) if isinstance(part, ast.Constant) else
                       "{" + ast.unparse(part.value) + "}"  # type: ignore[attr-defined]
                       for part in node.values)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        text = message_text(node.left, constants)
    else:
        text = ast.unparse(node)
    text = _BLANKS.sub(" ", text).strip()
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 1].rstrip() + "…"


_LOGS = frozenset({"warn", "warning", "warn_once", "warning_once"})


def says_deprecated(node: ast.AST) -> bool:
    """Whether a function is a deprecation helper by what it does: it warns or logs (nested
    functions included: a wrapper it returns) and a string of it says "deprecated"
    (``torch_xla.experimental.deprecation.deprecated`` logs ``f"{old} is deprecated..."``)."""
    warns = mentions = False
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            warns = warns or dotted(child.func).rpartition(".")[2] in _LOGS
        elif isinstance(child, ast.Constant) and isinstance(child.value, str):
            mentions = mentions or "deprecat" in child.value.lower()
    return warns and mentions


def wrapper_call(call: ast.Call, constants: Constants = _EMPTY) -> tuple[str, tuple[str, ...], str]:
    """A module-level ``name = helper(...)``: the helper, the dotted names passed to it (the
    module, the function wrapped), and its strings as one message (the deprecation's why,
    when the helper proves a deprecation helper)."""
    values = [*call.args, *(keyword.value for keyword in call.keywords)]
    names = tuple(dotted(value) for value in values if dotted(value))
    texts = [message_text(value, constants) for value in values if _text(value, constants)]
    return dotted(call.func), names, " ".join(texts)


def _text(node: ast.expr, constants: Constants) -> bool:
    """Whether ``node`` is a string: a literal, an f-string, or a module's string constant."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Name) and node.id in constants)


def string_constants(body: list[ast.stmt], known: Constants = _EMPTY) -> dict[str, str]:
    """The names a body's top level binds to a string (a literal, an f-string, a sum of them,
    also of ``known`` ones): their text as ``message_text`` gives it."""
    found: dict[str, str] = {}
    for node in body:
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        value = node.value
        if value is None or not isinstance(value, ast.Constant | ast.JoinedStr | ast.BinOp):
            continue
        if isinstance(value, ast.Constant) and not isinstance(value.value, str):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                found[target.id] = message_text(value, {**known, **found} if known else found)
    return found


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
