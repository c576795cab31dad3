"""Custom operators whose outputs share storage with their inputs: a function registered as a
``torch.library`` operator (``@torch.library.custom_op("ns::op", ...)``), or as one's fake or
kernel (``@op.register_fake``, ``@torch.library.register_fake("ns::op")``,
``@torch.library.impl(...)``), that returns one of its own parameters or a view of one
(``return key_cache, value_cache``; ``return x.view(-1)``). Such outputs are undefined behaviour
that 2.9 may turn into silently wrong results under ``torch.compile``.

Each such ``return`` is a row, a use of ``torch.library.custom_op`` showing the aliasing
(``returns_input``); an item naming the shape in words reaches these rows only. Read only in
files whose text names one of those registrations (a substring test first).
"""

from __future__ import annotations

import ast
from collections.abc import Set as AbstractSet

from watcher.impact.code.shapes import chain_of

__all__ = ["OPERATOR", "aliasing_rows"]

OPERATOR = "torch.library.custom_op"  # what each row is a use of
# Decorators registering a function as an operator, or as its fake or kernel, by the name
# they resolve to; and the methods of an operator object doing the same.
REGISTERING = frozenset({"torch.library.custom_op", "torch._library.custom_ops.custom_op",
                         "torch.library.register_fake", "torch.library.impl_abstract",
                         "torch.library.impl", "torch.library.register_kernel"})
REGISTERING_METHODS = frozenset({"register_fake", "register_kernel", "impl_abstract"})
# Methods and attributes giving a view of a tensor: its storage, not a copy
VIEWS = frozenset({"view", "view_as", "t", "transpose", "permute", "expand", "expand_as",
                   "squeeze", "unsqueeze", "narrow", "select", "detach", "as_strided",
                   "unfold", "diagonal", "movedim", "swapaxes", "unflatten", "T", "mT",
                   "real", "imag"})
# What a file's text must hold to register one (``torch.library.impl(`` included)
MARKERS = ("custom_op", "register_fake", "register_kernel", "impl_abstract", "library.impl(")


def aliasing_rows(tree: ast.Module, text: str, aliases: dict[str, str],
                  lines: list[str]) -> list[dict[str, object]]:
    """Each ``return`` of a registered operator function handing back an input, as a use row
    (``returns_input``: what it returns and whose implementation it is)."""
    if not any(marker in text for marker in MARKERS):
        return []
    functions = [node for node in ast.walk(tree)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    operators = {node.name for node in functions
                 if any(registering(decorator, aliases, frozenset()) == "operator"
                        for decorator in node.decorator_list)}
    rows: list[dict[str, object]] = []
    for node in functions:
        roles = [role for decorator in node.decorator_list
                 if (role := registering(decorator, aliases, operators))]
        if not roles:
            continue
        parameters = {argument.arg for argument in (*node.args.posonlyargs, *node.args.args,
                                                    *node.args.kwonlyargs)}
        for returned, line in returns(node):
            inputs = [name for value in elements(returned)
                      if (name := input_of(value, parameters)) is not None]
            if inputs:
                code = lines[line - 1].strip()[:200] if line <= len(lines) else ""
                what = "the operator" if roles[0] == "operator" else \
                    f"the {roles[0]} of an operator"
                rows.append({"line": line, "code": code, "name": OPERATOR, "is_call": True,
                             "returns_input": f"{node.name}, {what}, returns its input "
                                              f"{', '.join(inputs)}"})
    return rows


def registering(decorator: ast.expr, aliases: dict[str, str], operators: AbstractSet[str]
                ) -> str:
    """How a decorator registers the function: "operator" (``custom_op``), "fake" or
    "kernel" (``@op.register_fake``, ``torch.library.register_fake(...)``), "" for none."""
    target = decorator.func if type(decorator) is ast.Call else decorator
    chain = chain_of(target)
    if chain is None:
        return ""
    root, attributes = chain
    if attributes and attributes[-1] in REGISTERING_METHODS and root in operators and \
            len(attributes) == 1:
        return "fake" if attributes[-1] != "register_kernel" else "kernel"
    resolved = ".".join((aliases.get(root, root), *attributes))
    if resolved not in REGISTERING:
        return ""
    if resolved.endswith("custom_op"):
        return "operator"
    return "kernel" if resolved.endswith(("impl", "register_kernel")) else "fake"


def returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.expr, int]]:
    """The values the function's own ``return`` statements give (not its nested functions')."""
    found: list[tuple[ast.expr, int]] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if type(node) is ast.Return and node.value is not None:
            found.append((node.value, node.lineno))
        pending.extend(ast.iter_child_nodes(node))
    return found


def elements(value: ast.expr) -> list[ast.expr]:
    """A returned tuple's or list's elements, or the value itself."""
    return list(value.elts) if isinstance(value, (ast.Tuple, ast.List)) else [value]


def input_of(value: ast.expr, parameters: set[str]) -> str | None:
    """The parameter a returned value is, or is a view of (``x``, ``x.view(-1)``, ``x.T``,
    ``x[0]``); None for anything else (a new tensor, a copy: ``x.clone()``)."""
    while True:
        if type(value) is ast.Name:
            return value.id if value.id in parameters else None
        if type(value) is ast.Subscript:
            value = value.value
        elif type(value) is ast.Attribute and value.attr in VIEWS:
            value = value.value  # ``x.T``
        elif type(value) is ast.Call and type(value.func) is ast.Attribute and \
                value.func.attr in VIEWS:
            value = value.func.value
        else:
            return None
