"""Reads the environment a codebase declares: the Python it supports, its package pins and
the CUDA of its wheel index or base image, from pyproject.toml and pixi.toml
(``manifests``), requirements and constraints files, setup.cfg, setup.py, Dockerfiles and
conda environment files.

Each declaration keeps its 1-based line and the line as written, so a report can point at it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from watcher.impact.environment.abi import abi_flags
from watcher.impact.environment.declarations import (
    exact_version,
    python,
    requirement,
    requirement_lines,
)
from watcher.impact.environment.files import environment_kind
from watcher.impact.environment.images import (
    conda_environment,
    dockerfile,
    held_below,
    pinned_to,
    shell_script,
    torch_unseen,
)
from watcher.impact.environment.manifests import pixi_toml, pyproject
from watcher.impact.environment.recipes import conda_recipe
from watcher.impact.model import Declaration, FileIndex

__all__ = ["index_environment", "is_environment_file"]

Reader = Callable[[list[str]], list[Declaration]]


def index_environment(path: str, text: str) -> FileIndex:
    """The declarations of one environment file (none for a file of no known kind)."""
    kind = environment_kind(path)
    lines = text.replace("\r\n", "\n").split("\n")
    found = READERS[kind](lines) if kind else []
    if kind in COMPILING:
        found = [*found, *abi_flags(lines)]
    if kind in ONE_ENVIRONMENT or (kind in PACKAGE_METADATA and (
            only_exact_torch(found) or held_below(found))):
        # A package requiring one torch release exactly runs that one, wherever installed; one
        # requiring torch below a release never runs that release.
        found = pinned_to(found)
    if kind in INSTALLERS:
        found = torch_unseen(found)
    return FileIndex(path=path, declarations=tuple(found))


def only_exact_torch(found: list[Declaration]) -> bool:
    """Every torch requirement the file declares (its extras' too) pins a release exactly."""
    torch = [d for d in found if d.kind == "package" and d.name == "torch"]
    return bool(torch) and all(exact_version(d.specifier) is not None for d in torch)


def is_environment_file(path: str) -> bool:
    return environment_kind(path) is not None


def setup_cfg(lines: list[str]) -> list[Declaration]:
    """``python_requires`` and ``install_requires`` (a value on the next indented lines)."""
    found: list[Declaration] = []
    listing = False
    for number, text in enumerate(lines, 1):
        key, sep, value = text.partition("=")
        if listing and text[:1].isspace() and text.strip():
            found += requirement(number, text, text)
            continue
        listing = False
        if not sep or text[:1].isspace():
            continue
        if key.strip() == "python_requires" and value.strip():
            found.append(python(number, text, value.strip()))
        elif key.strip() == "install_requires":
            listing = True
            if value.strip():
                found += requirement(number, text, value)
    return found


def setup_py(lines: list[str]) -> list[Declaration]:
    """``python_requires="..."``, ``install_requires=[...]`` and ``extras_require={...}``
    passed to any call; without ``python_requires``, the version check it makes itself."""
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError):
        return []  # the Python index reports it
    found: list[Declaration] = []
    # Module-level names bound once to a literal (``REQUIRES_PYTHON = ">=3.9.0"``, then
    # ``python_requires=REQUIRES_PYTHON``): the value is the literal, where it is written.
    constants: dict[str, ast.expr] = {}
    for statement in tree.body:
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            name = statement.targets[0].id
            constants[name] = statement.value if name not in constants else ast.Constant(None)
    for node in ast.walk(tree):
        if not isinstance(node, ast.keyword) or node.arg not in SETUP_KEYWORDS:
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in constants:
            value = constants[value.id]
        if node.arg == "python_requires":
            text = string_value(value, constants)
            if text is not None:
                found.append(python(value.lineno, lines[value.lineno - 1], text))
            continue
        # An extra's requirements are what ``pip install pkg[extra]`` installs.
        groups = value.values if node.arg == "extras_require" and isinstance(value, ast.Dict) \
            else [value]
        for group in groups:
            if isinstance(group, ast.Name) and group.id in constants:
                group = constants[group.id]
            if isinstance(group, ast.List | ast.Tuple):
                for item in group.elts:
                    if isinstance(item, ast.Constant) and isinstance(item.value, str):
                        found += requirement(item.lineno, lines[item.lineno - 1], item.value)
    if not any(declaration.kind == "python" for declaration in found):
        found += version_check(tree, lines)
    return found


def string_value(node: ast.expr, constants: dict[str, ast.expr], depth: int = 0) -> str | None:
    """The text an expression of literals builds: ``">={}".format(MIN)``, ``">=%s" % MIN``,
    ``f">={MIN}"``, ``">=" + MIN`` (``MIN`` a module-level literal); None for anything else."""
    if depth > 4:
        return None
    if isinstance(node, ast.Name):
        bound = constants.get(node.id)
        return None if bound is None else string_value(bound, constants, depth + 1)
    if isinstance(node, ast.Constant):
        value = node.value
        return value if isinstance(value, str) else (
            str(value) if type(value) in (int, float) else None)
    parts: list[str | None]
    if isinstance(node, ast.JoinedStr):
        parts = [string_value(part.value if isinstance(part, ast.FormattedValue) else part,
                              constants, depth + 1) for part in node.values]
        return None if None in parts else "".join(parts)  # type: ignore[arg-type]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        left = string_value(node.left, constants, depth + 1)
        right = node.right.elts if isinstance(node.op, ast.Mod) and isinstance(
            node.right, ast.Tuple) else [node.right]
        parts = [string_value(part, constants, depth + 1) for part in right]
        if left is None or None in parts:
            return None
        if isinstance(node.op, ast.Add):
            return left + str(parts[0])
        try:
            return left % tuple(parts)
        except (TypeError, ValueError):
            return None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "format" and not node.keywords):
        template = string_value(node.func.value, constants, depth + 1)
        parts = [string_value(part, constants, depth + 1) for part in node.args]
        if template is None or None in parts:
            return None
        try:
            return template.format(*parts)
        except (IndexError, KeyError, ValueError):
            return None
    return None


def version_check(tree: ast.Module, lines: list[str]) -> list[Declaration]:
    """The Python floor a ``setup.py`` without ``python_requires`` enforces itself: an
    ``if sys.version_info < (3, 6):`` that exits or raises, run whenever the file is (at
    module level, or first thing under ``if __name__ == "__main__":``), is ``>=3.6``."""
    for statement in run_always(tree.body):
        if not isinstance(statement, ast.If) or not statement.body or not stops(statement.body):
            continue
        test = statement.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Lt)):
            continue
        floor = test.comparators[0]
        version = None
        if is_version_info(test.left) and isinstance(floor, ast.Tuple) and \
                1 <= len(floor.elts) <= 3 and all(isinstance(e, ast.Constant) and
                                                  type(e.value) is int for e in floor.elts):
            version = ".".join(str(e.value) for e in floor.elts)  # type: ignore[attr-defined]
        elif is_version_string(test.left):
            version = written_version(floor)
        if version is not None:
            return [python(statement.lineno, lines[statement.lineno - 1], f">={version}")]
    return []


def is_version_string(node: ast.expr) -> bool:
    """``LooseVersion(sys.version)``, ``parse(platform.python_version())``: the running
    Python's version as a string, wrapped in a version class to compare."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Call) and not node.args and isinstance(node.func, ast.Attribute):
        return node.func.attr == "python_version"  # platform.python_version()
    return isinstance(node, ast.Attribute) and node.attr == "version" and \
        isinstance(node.value, ast.Name) and node.value.id == "sys"


def written_version(node: ast.expr) -> str | None:
    """``LooseVersion("3.7")`` or ``"3.7"``: the version written, when it is one."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
            re.fullmatch(r"3\.\d{1,2}(?:\.\d+)?", node.value):
        return node.value
    return None


def run_always(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a module that run when it is run as a script: its own, and those of
    its ``if __name__ == "__main__":`` blocks."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If) and is_main_guard(statement.test):
            yield from statement.body


def is_main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(side, ast.Name) and side.id == "__name__" for side in sides) and any(
        isinstance(side, ast.Constant) and side.value == "__main__" for side in sides)


def is_version_info(node: ast.expr) -> bool:
    """``sys.version_info`` (or its first fields, ``sys.version_info[:2]``)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    return (isinstance(node, ast.Attribute) and node.attr == "version_info"
            and isinstance(node.value, ast.Name) and node.value.id == "sys")


def stops(body: list[ast.stmt]) -> bool:
    """The block ends the install: a ``raise``, or a call of ``sys.exit``/``exit``."""
    last = body[-1]
    if isinstance(last, ast.Raise):
        return True
    return (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
            and ((isinstance(last.value.func, ast.Attribute) and last.value.func.attr == "exit")
                 or (isinstance(last.value.func, ast.Name) and last.value.func.id in (
                     "exit", "quit"))))


SETUP_KEYWORDS = ("python_requires", "install_requires", "extras_require")


READERS: dict[str, Reader] = {"pyproject": pyproject, "setup.cfg": setup_cfg, "setup.py": setup_py,
                              "requirements": requirement_lines, "dockerfile": dockerfile,
                              "conda": conda_environment, "conda-recipe": conda_recipe,
                              "shell": shell_script, "cmake": abi_flags, "pixi": pixi_toml}
# Files that hold more than C++ flags but can hold those too (``abi.abi_flags``; a CMake file's
# reader is that alone).
COMPILING = frozenset({"setup.py", "shell", "dockerfile"})
# Files that set up one environment, whose exact torch pin is the torch it runs (a Dockerfile
# does it stage by stage; a package's metadata declares what it supports, not what it runs).
ONE_ENVIRONMENT = frozenset({"requirements", "shell", "conda"})
# A package's own metadata: what it supports, unless it pins torch to one release.
PACKAGE_METADATA = frozenset({"pyproject", "setup.py", "setup.cfg"})
# Files that install a Python (a Dockerfile marks its stages itself, ``images.dockerfile``).
INSTALLERS = frozenset({"shell", "conda", "pixi"})
