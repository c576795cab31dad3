"""Readings of single statements and expressions the module reader (``extract``) makes: a
body left only to raise, a class attribute, what runs only as a script or only for type
checkers, a literal ``__all__``, the blocks of a compound statement."""

from __future__ import annotations

import ast

from watcher.impact.atlas.facts import Definition
from watcher.impact.atlas.markers import message_text
from watcher.impact.atlas.model import DATA, FUNCTION, METHOD
from watcher.impact.atlas.signature import FunctionNode
from watcher.impact.code import dotted

_TYPING_ONLY = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple", "NewType", "TypeAlias"})


def attribute(definitions: dict[str, Definition], value: ast.expr) -> Definition:
    """A class attribute: a method where it names a function of the module (``forward =
    _forward_unimplemented``), else data (an enum's member, ``apply = ...["apply"]``)."""
    function = definitions.get(value.id) if isinstance(value, ast.Name) else None
    if function is not None and function.kind == FUNCTION and function.params:
        return Definition(METHOD, function.params[1:], function.deprecated)
    return Definition(DATA)


def runs_as_script(test: ast.expr) -> bool:
    return isinstance(test, ast.Compare) and dotted(test.left) == "__name__" and any(
        isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)


def typing_only(node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> bool:
    """``T = TypeVar("T")``, ``X: TypeAlias = ...``: in a stub, for type checkers alone."""
    if isinstance(node, ast.AnnAssign) and dotted(node.annotation).rpartition(".")[2] \
            in _TYPING_ONLY:
        return True
    value = node.value
    return isinstance(value, ast.Call) and dotted(value.func).rpartition(".")[2] in _TYPING_ONLY


def only_raises(node: FunctionNode, constants: dict[str, str]) -> str | None:
    """The message of a body that does nothing but ``raise SomeError("...")`` (after its
    docstring and assignments that build the message): what a removed function left as a
    stub says. ``NotImplementedError`` is an
    abstract method's, not a removal."""
    last = node.body[-1]
    if not isinstance(last, ast.Raise):
        return None  # nearly every function: known without copying its body
    before = node.body[:-1]
    if last.exc is None or not all(
            isinstance(step, ast.Assign | ast.AnnAssign) or (
                isinstance(step, ast.Expr) and isinstance(step.value, ast.Constant))
            for step in before):
        return None
    error = last.exc
    raised = dotted(error.func if isinstance(error, ast.Call) else error)
    if not raised or raised.rpartition(".")[2] in ("NotImplementedError", "NotImplemented"):
        return None
    if isinstance(error, ast.Call) and error.args:
        return message_text(error.args[0], constants)
    return raised


def strings(value: ast.expr, names: list[str], sources: list[str]) -> bool:
    """The strings of a literal list/tuple (and ``+``/``X.__all__`` of them); False when the
    value is computed."""
    if isinstance(value, ast.List | ast.Tuple):
        if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
            return False
        names.extend(e.value for e in value.elts)  # type: ignore[attr-defined]
        return True
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return strings(value.left, names, sources) and strings(value.right, names, sources)
    held = dotted(value)
    if held.endswith(".__all__"):
        sources.append(held.removesuffix(".__all__"))
        return True
    return False


def unsubscripted(node: ast.expr) -> ast.expr:
    return node.value if isinstance(node, ast.Subscript) else node


def blocks(node: ast.If | ast.Try | ast.TryStar | ast.With) -> list[list[ast.stmt]]:
    if isinstance(node, ast.If):
        return [node.body, node.orelse]
    if isinstance(node, ast.With):
        return [node.body]
    return [node.body, *(handler.body for handler in node.handlers), node.orelse,
            node.finalbody]


def flat(body: list[ast.stmt]) -> list[ast.stmt]:
    """A class body with its ``if``/``try`` blocks opened."""
    found: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If | ast.Try | ast.TryStar):
            for block in blocks(node):
                found.extend(flat(block))
        else:
            found.append(node)
    return found
