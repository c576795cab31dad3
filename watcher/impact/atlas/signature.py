"""Parameters read from a ``def`` with ``ast`` (defaults as source text), and the merge of a
stub's ``@overload`` variants into one signature."""

from __future__ import annotations

import ast

from watcher.impact.atlas.model import (
    KEYWORD_ONLY,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Param,
)

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
# The more callers a kind accepts, the higher: an overload accepting a keyword makes the
# merged parameter accept it.
_OPENNESS = {POSITIONAL_ONLY: 0, KEYWORD_ONLY: 0, POSITIONAL_OR_KEYWORD: 1}


def params_of(node: FunctionNode, *, bound: bool) -> tuple[Param, ...]:
    """The parameters of a ``def``; ``bound``: a method's first (``self``/``cls``) is left out."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults.extend(args.defaults)
    params = [Param(arg.arg, POSITIONAL_ONLY if index < len(args.posonlyargs)
                    else POSITIONAL_OR_KEYWORD, _text(default))
              for index, (arg, default) in enumerate(zip(positional, defaults, strict=True))]
    if bound and params:
        params.pop(0)
    if args.vararg is not None:
        params.append(Param(args.vararg.arg, VAR_POSITIONAL))
    params.extend(Param(arg.arg, KEYWORD_ONLY, _text(default))
                  for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True))
    if args.kwarg is not None:
        params.append(Param(args.kwarg.arg, VAR_KEYWORD))
    return tuple(params)


def merge_overloads(variants: list[tuple[Param, ...]]) -> tuple[Param, ...]:
    """One signature for a stub's overloads: every parameter any of them has, in first-seen
    order; the kind that accepts the most calls; a default only where every variant having
    the parameter agrees on it (else a stub-style unknown one); required only where every
    variant requires it."""
    if len(variants) == 1:
        return variants[0]
    order: list[str] = []
    seen: dict[str, list[Param]] = {}
    for variant in variants:
        for param in variant:
            if param.name not in seen:
                order.append(param.name)
            seen.setdefault(param.name, []).append(param)
    merged = []
    for name in order:
        found = seen[name]
        kind = max((param.kind for param in found), key=lambda kind: _OPENNESS.get(kind, 2))
        defaults = {param.default for param in found}
        if len(found) < len(variants):
            defaults.add("...")  # absent from a variant: not required
        default = defaults.pop() if len(defaults) == 1 else "..."
        merged.append(Param(name, kind, default))
    return tuple(merged)


def _text(node: ast.expr | None) -> str | None:
    if node is None:
        return None
    # The defaults most parameters have, written as ``ast.unparse`` writes them without its
    # cost (an unparser made per call: a fifth of reading a module's functions).
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (bool, int)):
        return repr(node.value)
    if isinstance(node, ast.Name):
        return node.id
    return ast.unparse(node)
