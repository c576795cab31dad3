"""The shapes of expression the walk reads as one piece: a plain dotted name, the string keys
of a config ``patch``, the keys of a dict built literally, and the imports that run at module
level."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from watcher.impact.code.guards import dead_branch
from watcher.impact.code.nodes import push_children

__all__ = ["chain_of", "literal_keys", "methods_by_name", "returned_keys", "root_name",
           "string_keys", "top_level_imports"]


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


def root_name(node: ast.expr) -> str | None:
    """The name an attribute or subscript chain starts from (``hparams`` of
    ``hparams["a"].b``); None where it starts from anything else (a call, a literal)."""
    while type(node) in (ast.Attribute, ast.Subscript):
        node = node.value  # type: ignore[attr-defined]
    return node.id if type(node) is ast.Name else None


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


def literal_keys(node: ast.expr, functions: Callable[[str], set[str] | None] | None = None,
                 copies: str | None = None) -> set[str] | None:
    """The keys of ``{"a": 1, "b": 2}``, ``dict(a=1, b=2)``, of both branches of
    ``{"a": 1} if c else {}`` (any path's keys: a call passing it says those options), or of
    ``f()`` / ``self.f()`` where ``functions`` knows what ``f`` (``.f``, a method) returns;
    None for anything else (a ``**`` inside, a computed key, another value). ``copies``: the
    ``**kwargs`` of the function the dict is built in, whose ``{**kwargs}`` / ``dict(**kwargs)``
    stand for the keywords its caller passes (``CALL_KEYWORDS``)."""
    kind = type(node)
    if kind is ast.Dict:
        keys = set()
        for key, value in zip(node.keys, node.values, strict=True):  # type: ignore[attr-defined]
            if key is None and copied(value, copies):
                keys.add(CALL_KEYWORDS)
            elif type(key) is not ast.Constant or not isinstance(key.value, str):
                return None
            else:
                keys.add(key.value)
        return keys
    if kind is ast.IfExp:
        dead = dead_branch(node.test)  # type: ignore[attr-defined]
        body = literal_keys(node.body, functions, copies) if dead != "body" else set()  # type: ignore[attr-defined]
        orelse = literal_keys(node.orelse, functions, copies) if dead != "orelse" else set()  # type: ignore[attr-defined]
        return None if body is None or orelse is None else body | orelse
    if kind is not ast.Call:
        return None
    func = node.func  # type: ignore[attr-defined]
    if type(func) is ast.Name:
        name = func.id
    elif type(func) is ast.Attribute and type(func.value) is ast.Name and \
            func.value.id in ("self", "cls"):
        name = "." + func.attr  # a method of the class the call is in
    else:
        return None
    spread = [keyword.value for keyword in node.keywords if keyword.arg is None]  # type: ignore[attr-defined]
    passed = {keyword.arg for keyword in node.keywords if keyword.arg is not None}  # type: ignore[attr-defined]
    if name == "dict":
        if node.args or not all(copied(value, copies) for value in spread):  # type: ignore[attr-defined]
            return None
        return passed | ({CALL_KEYWORDS} if spread else set())
    known = functions(name) if functions is not None else None
    if known is None or CALL_KEYWORDS not in known:
        return None if known is None else set(known)
    # A helper returning the keywords it is given: those this call passes, unless a ``**``
    # of its own may pass any.
    return None if spread else (known - {CALL_KEYWORDS}) | passed


def copied(value: ast.expr | None, copies: str | None) -> bool:
    """``kwargs`` of ``**kwargs``, when it is the function's own ``copies``."""
    return copies is not None and type(value) is ast.Name and value.id == copies


# In the keys a function returns: "and whatever keywords the call passes" (a helper that copies
# its own ``**kwargs`` into the dict it returns).
CALL_KEYWORDS = "**"
# Methods of a dict that read it or drop keys: the keys it can hold stay a superset.
READING = frozenset({"get", "items", "keys", "values", "copy", "pop", "popitem"})


def returned_keys(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str] | None:
    """The keys of every dict a function can return, when each of its ``return``s gives a
    literal one (``return {"multiprocessing_context": ctx}`` / ``return {}``) or a name bound
    once to one and then given only constant keys (``d["pin_memory"] = ...``) or the
    function's own ``**kwargs`` (``d.update(kwargs)``, ``for k, v in kwargs.items(): d[k] =
    v``: ``CALL_KEYWORDS``); None when one returns anything else or it can end without a
    return."""
    kwarg = function.args.kwarg.arg if function.args.kwarg is not None else None
    returns: list[ast.expr | None] = []
    bound: dict[str, list[set[str] | None]] = {}  # each literal dict a name is bound to
    added: dict[str, set[str]] = {}
    spoiled: set[str] = set()  # names changed in a way not followed
    copied: set[str] = set()  # loop names running over the function's **kwargs keys
    stores: list[tuple[str, ast.expr]] = []  # ``d[key] = ...``, decided once loops are known
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
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(
                        literal_keys(node.value, copies=kwarg) if len(node.targets) == 1
                        else None)
                elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    stores.append((target.value.id, target.slice))
        elif isinstance(node, ast.For) and kwarg is not None and over_keys(node.iter, kwarg):
            target = node.target
            if isinstance(target, ast.Tuple) and target.elts:
                target = target.elts[0]
            if isinstance(target, ast.Name):
                copied.add(target.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name):
            name, method = node.func.value.id, node.func.attr
            if method == "update" and all(keyword.arg is not None for keyword in node.keywords):
                more = added.setdefault(name, set())
                more.update(str(keyword.arg) for keyword in node.keywords)
                for argument in node.args:
                    if isinstance(argument, ast.Name) and argument.id == kwarg:
                        more.add(CALL_KEYWORDS)
                    else:
                        spoiled.add(name)
            elif method not in READING:
                spoiled.add(name)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and isinstance(node.target, ast.Name):
            spoiled.add(node.target.id)
        # No generator per node (``ast.iter_child_nodes``); the order the stack gives the
        # children does not matter, every one is seen.
        push_children(pending, node, kind)
    for name, key in stores:
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            added.setdefault(name, set()).add(key.value)
        elif isinstance(key, ast.Name) and key.id in copied:
            added.setdefault(name, set()).add(CALL_KEYWORDS)
        else:
            spoiled.add(name)
    keys: set[str] = set()
    for value in returns:
        if isinstance(value, ast.Name):
            bindings = bound.get(value.id, [])
            found = bindings[0] if len(bindings) == 1 and value.id not in spoiled else None
            if found is not None:
                found = found | added.get(value.id, set())
        else:
            found = literal_keys(value, copies=kwarg) if value is not None else None
        if found is None:
            return None
        keys |= found
    return keys if returns and not falls_through(function.body) else None


def over_keys(node: ast.expr, kwarg: str) -> bool:
    """``kwargs``, ``kwargs.items()`` or ``kwargs.keys()``: a loop whose first name is each key."""
    if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("items", "keys"):
        node = node.func.value
    return isinstance(node, ast.Name) and node.id == kwarg


def falls_through(body: list[ast.stmt]) -> bool:
    """Whether a block can end without a ``return`` or ``raise`` (a function returning None)."""
    last = body[-1] if body else None
    if type(last) in (ast.Return, ast.Raise):
        return False
    if type(last) is ast.If:
        return falls_through(last.body) or falls_through(last.orelse)
    return True


def methods_by_name(body: list[ast.stmt]) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """``.name`` -> the method of that name of the module's classes, for a name only one of
    them defines (``self.name()`` in another class with its own would be a guess)."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    twice: set[str] = set()
    for statement in body:
        if not isinstance(statement, ast.ClassDef):
            continue
        for member in statement.body:
            if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                key = "." + member.name
                if key in found:
                    twice.add(key)
                found[key] = member
    return {key: method for key, method in found.items() if key not in twice}
