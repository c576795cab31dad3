"""Version guards the walk can decide: ``if torch.__version__ < "1.7":``, ``if
digit_version(TORCH_VERSION) >= digit_version("1.8.0"):``, ``TORCH_VERSION >= (2, 1)``.

A codebase that supports old torch releases keeps their code behind such guards; on any release
the analysis reads (torch 2.0 or newer, ``FLOOR``) a branch for older ones never runs, so its
uses touch nothing (mmengine's ``torch.load`` calls defined only below 1.7). A guard that
depends on which 2.x release runs (``>= 2.6``) decides nothing: both branches stay.

Only comparisons of a torch version with a version written in the code are read: the version is
``torch.__version__`` or a name that says it is torch's (``TORCH_VERSION``, ``torch_version``),
bare or through a version parser; the other side a string (``"1.7.0"``, ``"v2.0"``), a parser of
one, or a tuple of numbers. Anything else (``TORCH_VERSION == 'parrots'``, a flag computed
elsewhere) is undecided.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Literal

from watcher.impact.code.nodes import push_children

__all__ = ["FLOOR", "catches_type_error", "dead_branch", "probed_names", "runs_below",
           "tried_keywords"]

FLOOR = (2, 0)  # the oldest torch release the analysis reads code as run by
PARSERS = frozenset({"Version", "parse", "parse_version", "digit_version", "LooseVersion",
                     "StrictVersion", "version_tuple"})
TORCH_NAME = re.compile(r"torch\w*version|version\w*torch", re.IGNORECASE)
# "1.7", "1.7.0", "v2.0", "2.1.0a0", "1.13.0+cu117": major and minor, the rest ignored.
VERSION = re.compile(r"v?(\d{1,3})(?:\.(\d{1,3}))?(?:\.\d{1,5})?(?:[.+-]?[a-z]{1,5}[\w.]{0,20})?")
FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}


def dead_branch(test: ast.expr) -> Literal["body", "orelse"] | None:
    """Which branch of an ``if`` (or a conditional expression) never runs on torch 2.0 or
    newer, when its test says."""
    verdict = always(test)
    return "orelse" if verdict is True else "body" if verdict is False else None


def runs_below(test: ast.expr) -> tuple[Literal["body", "orelse"], tuple[int, int]] | None:
    """The branch of an ``if`` that runs only on torch releases below a version the test
    writes, with that version: the ``else`` of ``if TORCH_VERSION >= (2, 5):`` runs only below
    2.5, so no change of 2.5 or later reaches it (the analysis reads each release's changes as
    run by that release). None when the test bounds neither branch from above."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = runs_below(test.operand)
        if inner is None:
            return None
        return ("orelse" if inner[0] == "body" else "body"), inner[1]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        # The body runs only where every operand holds: the lowest bound on any of them.
        bounds = [bound[1] for value in test.values
                  if (bound := runs_below(value)) is not None and bound[0] == "body"]
        return ("body", min(bounds)) if bounds else None
    comparison = torch_comparison(test)
    if comparison is None:
        return None
    op, written = comparison
    following = (written[0], written[1] + 1)  # "<= 2.4" is "below 2.5", as minors compare
    if op is ast.Lt:
        return "body", written
    if op is ast.LtE or op is ast.Eq:
        return "body", following
    if op is ast.GtE:
        return "orelse", written
    if op is ast.Gt:
        return "orelse", following
    return None


def always(test: ast.expr) -> bool | None:
    """True (False) when ``test`` holds (fails) on every torch release from ``FLOOR`` on;
    None when it depends on the release or on anything else."""
    if isinstance(test, ast.BoolOp):
        verdicts = [always(value) for value in test.values]
        if isinstance(test.op, ast.And):
            return False if False in verdicts else True if all(verdicts) else None
        return True if True in verdicts else False if all(v is False for v in verdicts) else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = always(test.operand)
        return None if inner is None else not inner
    comparison = torch_comparison(test)
    return None if comparison is None else compared(*comparison)


def torch_comparison(test: ast.expr) -> tuple[type[ast.cmpop], tuple[int, int]] | None:
    """``torch_version <op> written`` read from a comparison written either way round, as
    (op, (major, minor)); None for any other test."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, right, op = test.left, test.comparators[0], type(test.ops[0])
    if is_torch_version(left):
        written = written_version(right)
    elif is_torch_version(right):
        written, op = written_version(left), FLIPPED.get(op, op)
    else:
        return None
    return None if written is None else (op, written)


def compared(op: type[ast.cmpop], written: tuple[int, int]) -> bool | None:
    """``v <op> written`` for every torch version ``v`` from ``FLOOR`` on, when it is the same
    for all of them (versions are compared by major and minor: ``2.0.1`` is 2.0)."""
    below, at_or_below = written < FLOOR, written <= FLOOR
    if op is ast.Lt:
        return False if at_or_below else None
    if op is ast.LtE or op is ast.Eq:
        return False if below else None
    if op is ast.Gt or op is ast.NotEq:
        return True if below else None
    if op is ast.GtE:
        return True if at_or_below else None
    return None


def is_torch_version(node: ast.expr) -> bool:
    """``torch.__version__``, ``TORCH_VERSION``, or either through a parser."""
    if type(node) is ast.Call and node.args and parser(node.func):
        node = node.args[0]
    if type(node) is ast.Attribute:
        root = node.value
        return node.attr == "__version__" and (
            (type(root) is ast.Name and root.id == "torch")
            or (type(root) is ast.Attribute and root.attr == "version"
                and type(root.value) is ast.Name and root.value.id == "torch"))
    return type(node) is ast.Name and TORCH_NAME.search(node.id) is not None


def written_version(node: ast.expr) -> tuple[int, int] | None:
    """(major, minor) of ``"1.7.0"``, ``parse("1.7")`` or ``(1, 7)``."""
    if type(node) is ast.Call and len(node.args) == 1 and parser(node.func):
        node = node.args[0]
    if type(node) is ast.Constant and isinstance(node.value, str):
        found = VERSION.fullmatch(node.value.strip())
        if found is None:
            return None
        return int(found[1]), int(found[2] or 0)
    if type(node) is ast.Tuple and 1 <= len(node.elts) <= 3 and all(
            type(e) is ast.Constant and type(e.value) is int for e in node.elts):
        numbers = [e.value for e in node.elts]  # type: ignore[attr-defined]
        return int(numbers[0]), int(numbers[1]) if len(numbers) > 1 else 0
    return None


def parser(func: ast.expr) -> bool:
    return callee_name(func) in PARSERS


def probed_names(test: ast.expr) -> frozenset[str]:
    """The names a feature check asks about before it uses them: ``"symmetric" in
    inspect.signature(f).parameters``, ``hasattr(torch, "compile")`` (also under ``and``).
    Code behind such a check adapts to a release that dropped the name: it asked first.

    Every node of the test is looked at, as ``ast.walk`` would, but the shapes an ``if`` test
    is made of are opened by hand (the rest by ``push_children``): ``ast.walk``'s generators cost
    more than the check itself, once per ``if`` of the codebase."""
    found: set[str] = set()
    pending: list[Any] = [test]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name | ast.Constant):
            continue  # no expression below either
        if isinstance(node, ast.Compare):
            if (len(node.ops) == 1 and type(node.ops[0]) is ast.In
                    and type(node.left) is ast.Constant and type(node.left.value) is str
                    and node.left.value.isidentifier()):
                found.add(node.left.value)
            pending.append(node.left)
            pending.extend(node.comparators)
        elif isinstance(node, ast.Call):
            if (type(node.func) is ast.Name and node.func.id == "hasattr"
                    and len(node.args) == 2 and type(node.args[1]) is ast.Constant
                    and type(node.args[1].value) is str):
                found.add(node.args[1].value)
            pending.append(node.func)
            pending.extend(node.args)
            pending.extend(keyword.value for keyword in node.keywords)
        elif isinstance(node, ast.Attribute):
            pending.append(node.value)
        elif isinstance(node, ast.BoolOp):
            pending.extend(node.values)
        elif isinstance(node, ast.UnaryOp):
            pending.append(node.operand)
        else:
            push_children(pending, node, type(node))
    return frozenset(found)


def tried_keywords(body: list[ast.stmt]) -> dict[str, frozenset[str]] | None:
    """For ``try: torch.load(f, weights_only=False) except TypeError: torch.load(f)``: the
    keywords each function called in the ``try``'s ``body`` is tried with (by the function's
    last name). A call of the same function in a ``TypeError`` handler, without one of them, is
    a fallback for releases that refuse the keyword: on a release that takes it the fallback
    never runs."""
    tried: dict[str, set[str]] = {}
    for statement in body:
        for call in ast.walk(statement):
            if type(call) is ast.Call and call.keywords:
                name = callee_name(call.func)
                keywords = {keyword.arg for keyword in call.keywords if keyword.arg}
                if name and keywords:
                    tried.setdefault(name, set()).update(keywords)
    return {name: frozenset(keywords) for name, keywords in tried.items()} or None


def catches_type_error(kind: ast.expr | None) -> bool:
    """``except TypeError`` or ``except (TypeError, ValueError)`` (a bare ``except`` or
    ``Exception`` catches anything, so it says nothing about why the handler runs)."""
    if type(kind) is ast.Tuple:
        return any(catches_type_error(element) for element in kind.elts)
    return type(kind) is ast.Name and kind.id == "TypeError"


def callee_name(func: ast.expr) -> str:
    """The last name of what a call calls (``load`` of ``torch.load``), "" for anything else."""
    return func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name \
        else ""
