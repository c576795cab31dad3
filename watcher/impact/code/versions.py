"""Tests of the running torch release that code writes, read as ``(op, (major, minor))``:
"the running release <op> that one". ``guards`` decides branches with them.

The shapes read, each the way codebases in the field write it:

- a comparison, either way round, of the torch version (``torch.__version__``, a name that
  says it is torch's, ``TORCH_VERSION``, bare or through a parser) with a written one (a
  string, a parser of one, a tuple of numbers), or of one component of it
  (``int(torch.__version__.split(".")[1]) >= 4``, PyG);
- a helper asked about a written version: ``torch_version_ge("2.5")``,
  ``is_torch_greater_or_equal("2.5")`` (transformers), ``is_torch_version(">=", "2.1")``
  (accelerate), ``compare_version("torch", operator.ge, "2.1")``,
  ``RequirementCache("torch>=2.5.0")`` (Lightning);
- a flag named for the test it holds: ``_TORCH_GREATER_EQUAL_2_5`` (Lightning, torchmetrics),
  ``TORCH_GE_2_4``, ``WITH_PT24`` (PyG), bare or as an attribute of a module;
- a module-level name of the same file assigned one of these (``flags``), ``and``-ed with
  tests every release read passes (``WITH_PT24 = WITH_PT20 and ...``).

Anything else (``TORCH_VERSION == 'parrots'``, a flag computed from several releases) is no
version test.
"""

from __future__ import annotations

import ast
import re

__all__ = ["FLOOR", "Test", "callee_name", "module_flags", "version_test"]

FLOOR = (2, 0)  # the oldest torch release the analysis reads code as run by
Test = tuple[type[ast.cmpop], tuple[int, int]]

PARSERS = frozenset({"Version", "parse", "parse_version", "digit_version", "LooseVersion",
                     "StrictVersion", "version_tuple"})
TORCH_NAME = re.compile(r"torch\w*version|version\w*torch", re.IGNORECASE)
# "1.7", "1.7.0", "v2.0", "2.1.0a0", "1.13.0+cu117": major and minor, the rest ignored.
VERSION = re.compile(r"v?(\d{1,3})(?:\.(\d{1,3}))?(?:\.\d{1,5})?(?:[.+-]?[a-z]{1,5}[\w.]{0,20})?")
FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
SYMBOLS: dict[str, type[ast.cmpop]] = {
    ">=": ast.GtE, ">": ast.Gt, "<=": ast.LtE, "<": ast.Lt, "==": ast.Eq, "!=": ast.NotEq}
OPERATORS: dict[str, type[ast.cmpop]] = {
    "ge": ast.GtE, "gt": ast.Gt, "le": ast.LtE, "lt": ast.Lt, "eq": ast.Eq, "ne": ast.NotEq}
REQUIREMENT = re.compile(r"\s*torch\s*(>=|>|<=|<|==)\s*(\S+)\s*", re.IGNORECASE)
# The words of a helper's or flag's name that say its test, longest first ("_ge_" would
# find nothing in "greater_equal", but "greater" alone would in "greater_equal").
NAME_OPS: tuple[tuple[str, type[ast.cmpop]], ...] = (
    ("_greater_or_equal_", ast.GtE), ("_greater_equal_", ast.GtE), ("_at_least_", ast.GtE),
    ("_or_newer_", ast.GtE), ("_or_later_", ast.GtE), ("_or_above_", ast.GtE),
    ("_greater_than_", ast.Gt), ("_newer_than_", ast.Gt), ("_less_or_equal_", ast.LtE),
    ("_less_equal_", ast.LtE), ("_less_than_", ast.Lt), ("_older_than_", ast.Lt),
    ("_before_", ast.Lt), ("_below_", ast.Lt), ("_ge_", ast.GtE), ("_gte_", ast.GtE),
    ("_geq_", ast.GtE), ("_gt_", ast.Gt), ("_le_", ast.LtE), ("_lte_", ast.LtE),
    ("_leq_", ast.LtE), ("_lt_", ast.Lt))
# A flag's release at the end of its name: "_2_5", "_2_5_0", or PyG's "pt24".
FLAG_RELEASE = re.compile(r"(?:_(\d)_(\d{1,2})(?:_\d{1,2})?|pt(\d)(\d{1,2}))$")
TORCH_WORD = re.compile(r"(?:^|_)(?:torch|pytorch|pt)(?:\d|_|$)")


def version_test(node: ast.expr, flags: dict[str, Test] | None = None) -> Test | None:
    """The test ``node`` makes of the running torch release, or None (see the module)."""
    kind = type(node)
    if kind is ast.Compare:
        return comparison(node)  # type: ignore[arg-type]
    if kind is ast.Call:
        return helper_test(node)  # type: ignore[arg-type]
    if kind is ast.Name:
        name = node.id  # type: ignore[attr-defined]
        if flags and name in flags:
            return flags[name]
        return named_test(name)
    if kind is ast.Attribute:
        return named_test(node.attr)  # type: ignore[attr-defined]
    return None


def module_flags(tree: ast.Module) -> dict[str, Test]:
    """The module-level names a file assigns a version test, in order, each read with the
    ones before it (``WITH_PT24 = WITH_PT20 and int(...) >= 4``)."""
    flags: dict[str, Test] = {}
    for statement in tree.body:
        if type(statement) is ast.Assign and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif type(statement) is ast.AnnAssign and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if type(target) is ast.Name:
            found = flag_value(value, flags)
            if found is not None:
                flags[target.id] = found
    return flags


def flag_value(node: ast.expr, flags: dict[str, Test]) -> Test | None:
    """A flag's test; an ``and`` of tests all but one of which every release read passes is
    that one (``bool(...)`` around it read through)."""
    if type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "bool" \
            and len(node.args) == 1:
        node = node.args[0]
    if type(node) is ast.BoolOp and type(node.op) is ast.And:
        tests = [version_test(value, flags) for value in node.values]
        if any(test is None for test in tests):
            return None
        open_ = [test for test in tests if test is not None and compared(*test) is not True]
        return open_[0] if len(open_) == 1 else None
    return version_test(node, flags)


def comparison(test: ast.Compare) -> Test | None:
    """``torch_version <op> written``, written either way round, or of one component."""
    if len(test.ops) != 1:
        return None
    left, right, op = test.left, test.comparators[0], type(test.ops[0])
    if is_torch_version(left):
        written = written_version(right)
    elif is_torch_version(right):
        written, op = written_version(left), FLIPPED.get(op, op)
    else:
        return component_test(left, op, right)
    return None if written is None else (op, written)


def component_test(left: ast.expr, op: type[ast.cmpop], right: ast.expr) -> Test | None:
    """``int(torch.__version__.split(".")[0]) >= 2`` (major), ``[1] >= 4`` (minor, read as
    2.4: every release the analysis reads is a 2.x)."""
    if type(left) is ast.Call and type(left.func) is ast.Name and left.func.id == "int" \
            and len(left.args) == 1:
        left = left.args[0]
    if not (type(left) is ast.Subscript and type(left.slice) is ast.Constant
            and left.slice.value in (0, 1) and type(right) is ast.Constant
            and type(right.value) is int):
        return None
    split = left.value
    if not (type(split) is ast.Call and type(split.func) is ast.Attribute
            and split.func.attr == "split" and is_torch_version(split.func.value)):
        return None
    number = right.value
    if left.slice.value == 1:
        return op, (FLOOR[0], number)
    # A major is a range of releases: "> 1" is ">= 2.0", "<= 1" is "< 2.0".
    majors: dict[type[ast.cmpop], Test] = {
        ast.GtE: (ast.GtE, (number, 0)), ast.Gt: (ast.GtE, (number + 1, 0)),
        ast.Lt: (ast.Lt, (number, 0)), ast.LtE: (ast.Lt, (number + 1, 0))}
    return majors.get(op)


def helper_test(call: ast.Call) -> Test | None:
    """A helper asked about a written release (see the module)."""
    strings = [arg.value for arg in call.args
               if type(arg) is ast.Constant and isinstance(arg.value, str)]
    for text in strings:
        found = REQUIREMENT.fullmatch(text)
        if found is not None:
            written = release_of(found[2])
            return None if written is None else (SYMBOLS[found[1]], written)
    name = callee_name(call.func).lower()
    if not TORCH_WORD.search(name) and not any(text.lower() == "torch" for text in strings):
        return None
    op = None
    versions = []
    for arg in call.args:
        if type(arg) is ast.Constant and isinstance(arg.value, str) and arg.value in SYMBOLS:
            op = SYMBOLS[arg.value]
        elif type(arg) in (ast.Attribute, ast.Name) and callee_name(arg) in OPERATORS:
            op = OPERATORS[callee_name(arg)]
        elif not (type(arg) is ast.Constant and arg.value == "torch"):
            versions.append(written_version(arg))
    if len(versions) != 1 or versions[0] is None:
        return None
    op = op or name_op(name)
    return None if op is None else (op, versions[0])


def named_test(name: str) -> Test | None:
    """A flag named for its test: ``_TORCH_GREATER_EQUAL_2_5``, ``TORCH_GE_2_4``, ``WITH_PT24``
    (a ``with``/``has`` flag of a release holds from it on)."""
    lower = name.lower()
    if not TORCH_WORD.search(lower.lstrip("_")) or (found := FLAG_RELEASE.search(lower)) is None:
        return None
    major, minor = (found[1], found[2]) if found[1] else (found[3], found[4])
    op = name_op(lower[:found.start()] + "_")
    if op is None and lower.lstrip("_").startswith(("with_", "has_")):
        op = ast.GtE
    return None if op is None else (op, (int(major), int(minor)))


def name_op(name: str) -> type[ast.cmpop] | None:
    padded = f"_{name.strip('_')}_"
    return next((op for word, op in NAME_OPS if word in padded), None)


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
        return release_of(node.value)
    if type(node) is ast.Tuple and 1 <= len(node.elts) <= 3 and all(
            type(e) is ast.Constant and type(e.value) is int for e in node.elts):
        numbers = [e.value for e in node.elts]  # type: ignore[attr-defined]
        return int(numbers[0]), int(numbers[1]) if len(numbers) > 1 else 0
    return None


def release_of(text: str) -> tuple[int, int] | None:
    found = VERSION.fullmatch(text.strip())
    return None if found is None else (int(found[1]), int(found[2] or 0))


def parser(func: ast.expr) -> bool:
    return callee_name(func) in PARSERS


def callee_name(func: ast.expr) -> str:
    """The last name of what a call calls (``load`` of ``torch.load``), "" for anything else."""
    return func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name \
        else ""
