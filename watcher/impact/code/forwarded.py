"""Where a keyword's value comes from when it passes on a parameter of the calling function that
defaults to None (``def run_model(self, m, dynamic_axes=None): export(m, dynamic_axes=
dynamic_axes)``): the function, the parameter's position, and whether any call of the function
in this file may give it a value.

With that, the matcher can ask every visible caller (``reach.match``): when the function is
called and no call gives the parameter, the option only ever reaches the inner call as None.
Read only for the few uses that pass such a parameter, with one walk of the file's functions.
"""

from __future__ import annotations

import ast
from typing import Any

from watcher.impact.code.shapes import chain_of

__all__ = ["mark_forwarded"]


def mark_forwarded(rows: list[dict[str, Any]], tree: ast.Module,
                   aliases: dict[str, str]) -> None:
    """Sets ``forwarded`` on each row whose keywords pass a None-default parameter
    (``unset_params``: option -> parameter): option -> ``[function, position, called,
    given]``: the position the parameter is passed at (-1: keyword only), whether this file
    calls the function, and whether such a call may give it (by keyword, by position, or
    through ``*``/``**``)."""
    pending = [row for row in rows if "unset_params" in row]
    if not pending:
        return
    functions = [node for node in ast.walk(tree)
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    calls = [node for node in ast.walk(tree) if type(node) is ast.Call]
    for row in pending:
        forwarded: dict[str, list[Any]] = {}
        for option, parameter in row.pop("unset_params").items():
            function = innermost(functions, row["line"], parameter)
            if function is None:
                continue
            position = position_of(function, parameter)
            here = calls_of(calls, function.name, aliases)
            forwarded[option] = [function.name, position, bool(here),
                                 any(may_pass(call, parameter, position) for call in here)]
        if forwarded:
            row["forwarded"] = forwarded


def innermost(functions: list[ast.FunctionDef | ast.AsyncFunctionDef], line: int,
              parameter: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function around ``line`` that takes ``parameter``."""
    found = None
    for function in functions:
        end = function.end_lineno or function.lineno
        if function.lineno <= line <= end and parameter in names_of(function) and (
                found is None or function.lineno >= found.lineno):
            found = function
    return found


def names_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    arguments = function.args
    return {argument.arg for argument in (*arguments.posonlyargs, *arguments.args,
                                          *arguments.kwonlyargs)}


def position_of(function: ast.FunctionDef | ast.AsyncFunctionDef, parameter: str) -> int:
    """The position a caller passes ``parameter`` at, ``self``/``cls`` of a method left out
    (a method is called on its object); -1 when it can only be passed by keyword."""
    positional = [argument.arg for argument in (*function.args.posonlyargs, *function.args.args)]
    if positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    return positional.index(parameter) if parameter in positional else -1


def calls_of(calls: list[ast.Call], name: str, aliases: dict[str, str]) -> list[ast.Call]:
    """The calls of ``name`` in the file: ``name(...)`` and ``x.name(...)``, not a function of
    an imported module with the same name (``torch.onnx.export`` beside a helper ``export``)."""
    found = []
    for call in calls:
        func = call.func
        if type(func) is ast.Name and func.id == name:
            found.append(call)
        elif type(func) is ast.Attribute and func.attr == name:
            chain = chain_of(func.value)
            if chain is None or chain[0] not in aliases:
                found.append(call)
    return found


def may_pass(call: ast.Call, parameter: str, position: int) -> bool:
    if any(keyword.arg is None or keyword.arg == parameter for keyword in call.keywords):
        return True
    if any(type(argument) is ast.Starred for argument in call.args):
        return True
    return 0 <= position < len(call.args)
