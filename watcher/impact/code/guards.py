"""Version guards the walk can decide: ``if torch.__version__ < "1.7":``, ``if
digit_version(TORCH_VERSION) >= digit_version("1.8.0"):``, ``if _TORCH_GREATER_EQUAL_2_4:``
(``versions`` reads the tests), and the other guards a use sits under: feature checks and
``except TypeError`` fallbacks.

A codebase that supports old torch releases keeps their code behind such guards; on any release
the analysis reads (torch 2.0 or newer, ``FLOOR``) a branch for older ones never runs, so its
uses touch nothing (mmengine's ``torch.load`` calls defined only below 1.7). A guard that
depends on which 2.x release runs (``>= 2.6``) decides nothing: both branches stay.

A test ``versions`` cannot read (``TORCH_VERSION == 'parrots'``, a flag computed elsewhere under
a name that does not say its test) is undecided. ``flags``: the module-level names of the file
assigned a version test (``versions.module_flags``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any, Literal

from watcher.impact.code.nodes import push_children
from watcher.impact.code.versions import FLOOR, Test, callee_name, compared, version_test

__all__ = ["FLOOR", "Test", "called_in", "catches_type_error", "caught_names", "dead_branch",
           "exits", "expected_names", "probed_names", "raised_type", "retried_calls",
           "runs_below", "tried_keywords"]



def dead_branch(test: ast.expr, flags: dict[str, Test] | None = None
                ) -> Literal["body", "orelse"] | None:
    """Which branch of an ``if`` (or a conditional expression) never runs on torch 2.0 or
    newer, when its test says."""
    verdict = always(test, flags)
    return "orelse" if verdict is True else "body" if verdict is False else None


def runs_below(test: ast.expr, flags: dict[str, Test] | None = None
               ) -> tuple[Literal["body", "orelse"], tuple[int, int]] | None:
    """The branch of an ``if`` that runs only on torch releases below a version the test
    writes, with that version: the ``else`` of ``if TORCH_VERSION >= (2, 5):`` runs only below
    2.5, so no change of 2.5 or later reaches it (the analysis reads each release's changes as
    run by that release). None when the test bounds neither branch from above."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = runs_below(test.operand, flags)
        if inner is None:
            return None
        return ("orelse" if inner[0] == "body" else "body"), inner[1]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        # The body runs only where every operand holds: the lowest bound on any of them.
        bounds = [bound[1] for value in test.values
                  if (bound := runs_below(value, flags)) is not None and bound[0] == "body"]
        return ("body", min(bounds)) if bounds else None
    comparison = version_test(test, flags)
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


def exits(body: list[ast.stmt]) -> bool:
    """Whether a block always leaves its function (``return`` or ``raise`` on every path):
    ending in one, in an ``if`` both of whose branches do, in a ``with`` whose body does, or in
    a ``try`` whose body and every handler do."""
    if not body:
        return False
    last = body[-1]
    kind = type(last)
    if kind is ast.Return or kind is ast.Raise:
        return True
    if kind is ast.If:
        return exits(last.body) and exits(last.orelse)  # type: ignore[attr-defined]
    if kind is ast.With or kind is ast.AsyncWith:
        return exits(last.body)  # type: ignore[attr-defined]
    if kind is ast.Try or kind is ast.TryStar:
        return exits(last.body) and all(  # type: ignore[attr-defined]
            exits(handler.body) for handler in last.handlers)  # type: ignore[attr-defined]
    return False


def always(test: ast.expr, flags: dict[str, Test] | None = None) -> bool | None:
    """True (False) when ``test`` holds (fails) on every torch release from ``FLOOR`` on;
    None when it depends on the release or on anything else."""
    if isinstance(test, ast.BoolOp):
        verdicts = [always(value, flags) for value in test.values]
        if isinstance(test.op, ast.And):
            return False if False in verdicts else True if all(verdicts) else None
        return True if True in verdicts else False if all(v is False for v in verdicts) else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = always(test.operand, flags)
        return None if inner is None else not inner
    comparison = version_test(test, flags)
    return None if comparison is None else compared(*comparison)


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


def caught_names(handlers: list[ast.ExceptHandler]) -> frozenset[str]:
    """The exception types a ``try``'s handlers catch, by last name (``except
    torch.OutOfMemoryError`` is ``OutOfMemoryError``); a bare ``except:`` is ``BaseException``."""
    return frozenset(name for handler in handlers for name in exception_names(handler.type))


def exception_names(kind: ast.expr | None) -> set[str]:
    """The exception types an expression names (a type, a tuple of them), by last name; None
    (a bare ``except:``) is ``BaseException``, a computed type "?" (anything may be caught)."""
    names: set[str] = set()
    for each in kind.elts if type(kind) is ast.Tuple else [kind]:
        if each is None:
            names.add("BaseException")
        elif type(each) is ast.Name:
            names.add(each.id)
        elif type(each) is ast.Attribute:
            names.add(each.attr)
        else:
            names.add("?")
    return names


# Test helpers whose ``with`` block expects its first argument's exception types
# (``pytest.raises(RuntimeError)``, unittest's ``self.assertRaises(RuntimeError)``): a test
# written for the type an API raised fails once it raises another, as a handler stops running.
EXPECTING = frozenset({"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


def expected_names(node: ast.With | ast.AsyncWith) -> frozenset[str]:
    """The exception types a ``with pytest.raises(...)`` (or ``assertRaises``) block expects;
    empty for any other ``with``."""
    names: set[str] = set()
    for item in node.items:
        context = item.context_expr
        if type(context) is ast.Call and context.args and \
                callee_name(context.func) in EXPECTING:
            names |= exception_names(context.args[0])
    return frozenset(names)


def called_in(body: Iterable[ast.AST]) -> frozenset[str]:
    """The functions (by last name) the statements (a ``try`` body, its handlers) call."""
    return frozenset(name for statement in body for call in ast.walk(statement)
                     if type(call) is ast.Call and (name := callee_name(call.func)))


def raised_type(node: ast.Raise) -> str:
    """The last name of the type a ``raise`` statement raises (``raise errors.LoadError(...)``
    is ``LoadError``), "" for a bare re-raise or a computed exception."""
    exception = node.exc.func if type(node.exc) is ast.Call else node.exc
    if type(exception) is ast.Name:
        return exception.id
    if type(exception) is ast.Attribute:
        return exception.attr
    return ""


def retried_calls(node: ast.Try | ast.TryStar, looped: bool) -> frozenset[str]:
    """The functions (by last name) a ``try``'s handlers call again, and, for a ``try`` in a
    loop with a handler that goes round again (no ``return``, ``raise`` or ``break`` ending it),
    every one its body calls. A handler that retries is meant for a failure a retry can fix,
    such as running out of memory (Megatron-LM's CPU fallback of ``torch.cat``, fairseq's
    chunked retry), never for bad input, which fails the same way again."""
    names = called_in(node.handlers)
    if looped and any(not handler.body or type(handler.body[-1]) not in LEAVING
                      for handler in node.handlers):
        names |= called_in(node.body)
    return names


LEAVING = (ast.Return, ast.Raise, ast.Break)


def catches_type_error(kind: ast.expr | None) -> bool:
    """``except TypeError`` or ``except (TypeError, ValueError)`` (a bare ``except`` or
    ``Exception`` catches anything, so it says nothing about why the handler runs)."""
    if type(kind) is ast.Tuple:
        return any(catches_type_error(element) for element in kind.elts)
    return type(kind) is ast.Name and kind.id == "TypeError"
