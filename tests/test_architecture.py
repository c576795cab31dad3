"""The layout is the architecture: packages by concern, each reached only through its
``__init__``, no import circle anywhere in ``watcher/`` or ``handlers/``, and one direction
between the core and its plugins: ``handlers/`` imports the core, the core never imports
``handlers/`` but in its composition root.

Imports are read with ``ast`` (nothing is executed), function-level ones included, since a
circle through a deferred import is still a circle a reader must untangle; imports under
``if TYPE_CHECKING:`` are left out (they never run), but for the rules about which way the
layers point (the composition root on top, the GitHub client below the store, a digest below
both delivery and its wording, the PostgreSQL schema below its backend), where naming a type
is depending on it too. A package counts as importing every module its ``__init__`` names,
lazily or not (``_EXPORTS``): that is what a reader of the package sees, so importing a package
from outside depends on all of them.
"""

from __future__ import annotations

import ast
import importlib
from collections import deque
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("watcher", "handlers")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for top in PRODUCT for path in (ROOT / top).rglob("*.py")}
PACKAGES = sorted((name for name, path in MODULES.items()
                   if path.name == "__init__.py" and name not in PRODUCT), key=len, reverse=True)


def owning_package(module: str) -> str | None:
    """The innermost package (below the top level) that ``module`` belongs to."""
    return next((package for package in PACKAGES
                 if module == package or module.startswith(package + ".")), None)


def exports(package: str) -> dict[str, str]:
    return dict(getattr(importlib.import_module(package), "_EXPORTS", {}))


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


@cache  # each test reads every module's imports: parsed once per session
def imports(path: Path, *, typing: bool = False) -> list[tuple[str, list[str], int]]:
    """``(module, names, line)`` for every import that runs, absolute or relative; with
    ``typing``, those under ``if TYPE_CHECKING:`` too."""
    found: list[tuple[str, list[str], int]] = []
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if not typing and _type_checking_only(node):
            return
        if isinstance(node, ast.Import):
            found.extend((alias.name, [], node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.append((base, [alias.name for alias in node.names], node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def targets(module: str, names: list[str]) -> set[str]:
    """The product modules an import really loads: a package's name resolves to its module."""
    if module not in MODULES:
        return set()
    if not names or MODULES[module].name != "__init__.py":
        return {module}
    table = exports(module)
    resolved = set()
    for name in names:
        if f"{module}.{name}" in MODULES:
            resolved.add(f"{module}.{name}")
        elif name in table:
            resolved.add(f"{module}.{table[name]}")
        else:
            resolved.add(module)
    return resolved


@cache
def import_graph(*, typing: bool = False) -> dict[str, set[str]]:
    """Modules and packages as nodes. A package depends on every module it exports; a module
    outside a package that imports it depends on the package as a whole, one inside it on the
    sibling it names. With ``typing``, the imports for type checking count too."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        here = name if path.name == "__init__.py" else owning_package(name)
        for module, names, _ in imports(path, typing=typing):
            if module not in MODULES:
                continue
            inside = here is not None and (here == module or here.startswith(module + "."))
            if MODULES[module].name == "__init__.py" and not inside:
                graph[name].add(module)
            else:
                graph[name] |= targets(module, names) - {name}
        if path.name == "__init__.py":
            graph[name] |= {f"{name}.{module}" for module in set(exports(name).values())}
    return graph


def find_circle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle, as the modules on it, or [] (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            following = next(stack[-1], None)
            if following is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(following) == 1:
                return [*path[path.index(following):], following]
            elif not state.get(following):
                state[following] = 1
                path.append(following)
                stack.append(iter(sorted(graph[following])))
    return []


def route(graph: dict[str, set[str]], start: str, goal: str) -> list[str]:
    """The shortest chain of imports from ``start`` to a module of ``goal`` (the module, or a
    package and everything in it), or [] (breadth-first)."""
    before: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        if here == goal or here.startswith(goal + "."):
            chain = [here]
            while (previous := before[chain[-1]]) is not None:
                chain.append(previous)
            return chain[::-1]
        for following in sorted(graph[here]):
            if following not in before:
                before[following] = here
                queue.append(following)
    return []


def reaching(sources: tuple[str, ...], goal: str) -> list[str]:
    """Each module under ``sources`` that reaches ``goal``, type hints included, as the chain
    of imports that does it, each step with the file and line of its import:
    ``a -> b (a.py:3) -> goal (b.py:12)``."""
    graph = import_graph(typing=True)
    found = []
    for name in sorted(graph):
        if not name.startswith(sources) or name.startswith(goal):
            continue
        chain = route(graph, name, goal)
        if chain:
            found.append(chain[0] + "".join(f" -> {after} ({where(before, after)})"
                                            for before, after in pairwise(chain)))
    return found


def where(importer: str, imported: str) -> str:
    """Where ``importer`` imports ``imported`` (the module itself, or the package it is in),
    as ``path:line``; a package's own ``_EXPORTS`` for a module it exports."""
    path = MODULES[importer]
    for module, names, line in imports(path, typing=True):
        if module in PRODUCT:
            continue
        loaded = targets(module, names) | {module}
        if imported in loaded or any(imported.startswith(m + ".") for m in loaded):
            return f"{path.relative_to(ROOT)}:{line}"
    return f"{path.relative_to(ROOT)}: _EXPORTS"


def test_the_daemon_and_the_server_never_reach_the_composition_root():
    """The root on top: ``watcher.app`` builds the daemon and hands it what it needs
    (``DaemonParts``: a runtime, the notifiers ``run`` validates, a reader of the configuration
    for SIGHUP), so nothing under ``watcher.daemon`` or ``watcher.server`` imports the root,
    directly or through another module, not even to name a type: ``Runtime`` and
    ``Dependencies`` live below all three (``watcher.deps``)."""
    assert reaching(("watcher.daemon", "watcher.server"), "watcher.app") == []


def test_the_github_client_never_reaches_the_store():
    """The client returns values (listings, an organisation's repos with their ETags) and the
    poller records them: nothing under ``watcher.github`` reaches ``watcher.store``."""
    assert reaching(("watcher.github",), "watcher.store") == []


def test_what_a_digest_is_lives_below_delivery_and_its_wording():
    """``watcher.present`` words digests and ``watcher.delivery`` folds and sends them; the
    digest itself is present's, so nothing of present reaches delivery (no circle through
    ``Digest``)."""
    assert reaching(("watcher.present",), "watcher.delivery") == []


def test_the_postgres_schema_lives_below_its_backend():
    """``store/postgres.py`` runs ``store/pg_schema.py``'s migrations; the schema names the
    database it migrates by the backend port (``store/backend.py``), never the PostgreSQL
    backend itself."""
    assert reaching(("watcher.store.pg_schema",), "watcher.store.postgres") == []


def test_the_route_finder_names_the_chain():
    graph = {"a": {"b"}, "b": {"c.d"}, "c.d": set(), "e": set()}
    assert route(graph, "a", "c") == ["a", "b", "c.d"]
    assert route(graph, "e", "c") == []


def test_there_is_no_import_circle():
    assert find_circle(import_graph()) == []


def test_a_package_counts_as_importing_what_its_init_names():
    graph = import_graph()
    assert "watcher.delivery.notifier" in graph["watcher.delivery"]
    assert "watcher.delivery" in graph["watcher.poller"]  # the package, not just one module


def test_the_core_never_imports_a_notifier_but_in_its_composition_root():
    """Ports and adapters: the core declares the notifier interface (``watcher.delivery``)
    and the ways a slash command arrives (``watcher.subscribe``); only ``watcher.app`` knows
    the adapters in ``handlers/`` and hands them in."""
    reaching = [f"{path.relative_to(ROOT)}:{line} imports {module}"
                for name, path in MODULES.items() if name.startswith("watcher")
                and name != "watcher.app"
                for module, _, line in imports(path)
                if module == "handlers" or module.startswith("handlers.")]
    assert reaching == []


def test_the_server_imports_no_notifier_and_the_dependencies_no_server():
    graph = import_graph()
    assert not {m for m in graph["watcher.server.endpoints"] if m.startswith("handlers")}
    assert not {m for m in graph["watcher.deps"] if m.startswith("watcher.server")}


def test_the_circle_finder_finds_one():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]


def test_no_module_reaches_past_another_packages_init():
    """Outside a package, only the names its ``__init__`` exports are imported, and only from
    the package itself: ``from watcher.store import Store``, never ``watcher.store.db``."""
    reaching = []
    for name, path in MODULES.items():
        mine = owning_package(name)
        for module, names, line in imports(path):
            package = owning_package(module)
            # A package's own modules, and its parent's (``cli`` runs ``cli.commands.poll``).
            if package is None or (mine is not None and (
                    package == mine or mine.startswith(package + ".")
                    or package.startswith(mine + "."))):
                continue
            where = f"{path.relative_to(ROOT)}:{line}"
            if module != package or any(part.startswith("_") for part in module.split(".")):
                reaching.append(f"{where} imports {module}")
            reaching += [f"{where} imports {package}.{imported}, not exported"
                         for imported in names if imported not in exports(package)]
    assert reaching == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_says_its_job_and_exports_what_it_names(package):
    module = importlib.import_module(package)
    assert module.__doc__ and len(module.__doc__.split()) >= 20, f"{package} has no docstring"
    for name in getattr(module, "__all__", []):
        assert getattr(module, name) is not None  # every exported name really resolves


def test_the_top_level_of_watcher_is_at_most_fifteen_modules():
    top = sorted(path.name for path in (ROOT / "watcher").glob("*.py"))
    assert len(top) <= 15, top


def test_plugin_names_keep_working():
    """What "Write your own notifier" documents, and the entry points' spellings: the port
    moved into the core, and ``handlers.base`` re-exports it for plugins already written."""
    from handlers.base import HandlerError, MemoryProgress, Notifier, NotifierConfig, Progress
    from handlers.base import secret_field as old_secret_field
    from handlers.secrets import secret_values as old_secret_values
    from handlers.slack import SlackNotifier
    from watcher import delivery
    from watcher.cli import console_script, main

    assert issubclass(SlackNotifier, Notifier) and Notifier is delivery.Notifier
    assert callable(main) and callable(console_script)
    assert (NotifierConfig, Progress, MemoryProgress) == (
        delivery.NotifierConfig, delivery.Progress, delivery.MemoryProgress)
    assert old_secret_field is delivery.secret_field
    assert old_secret_values is delivery.secret_values
    assert issubclass(HandlerError, Exception)


def test_the_impact_analysis_is_grouped_by_step():
    """``watcher/impact/`` holds one package per step of the analysis; only the values and the
    knowledge protocol every step shares stay loose at its top."""
    loose = sorted(path.stem for path in (ROOT / "watcher" / "impact").glob("*.py"))
    assert loose == ["__init__", "knowledge", "model"]

