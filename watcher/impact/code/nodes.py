"""Which fields of a parsed Python node can hold another node worth visiting: what every
hand-written walk over ``ast`` trees here reads instead of ``ast.iter_child_nodes``, whose
generator per node cost more than the walks' own checks."""

from __future__ import annotations

import ast
from typing import Any

__all__ = ["FIELDS", "fields_of", "push_children"]

# Fields that never hold a node worth visiting: names, numbers, flags, expression contexts,
# operators.
SKIPPED = frozenset({"ctx", "id", "attr", "name", "names", "module", "level", "type_comment",
                     "kind", "arg", "conversion", "is_async", "simple", "kwd_attrs", "rest",
                     "op", "ops"})
LEAVES = (ast.Constant, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)
# A value that is no node (the None of a ``**`` key in a dict display, a default left out, a
# pattern's constant) has nothing to visit either.
FIELDS: dict[type, tuple[str, ...]] = {type(None): (), bool: (), int: (), str: ()}


def fields_of(kind: type) -> tuple[str, ...]:
    """The fields worth visiting of a node type, last first (a walk's stack pops them back
    into file order)."""
    fields = FIELDS.get(kind)
    if fields is None:
        fields = () if not issubclass(kind, ast.AST) or issubclass(kind, LEAVES) else tuple(
            reversed([field for field in kind._fields if field not in SKIPPED]))
        FIELDS[kind] = fields
    return fields


def push_children(pending: list[Any], node: Any, kind: type) -> None:
    """Puts the nodes below ``node`` (of type ``kind``) on a walk's stack, last first."""
    for field in fields_of(kind):
        value = getattr(node, field)
        if type(value) is list:
            pending += value
        elif value is not None:
            pending.append(value)
