"""Follows names that a codebase's own modules re-export: ``from torch.serialization import
load`` in ``mypkg/io.py`` makes ``from mypkg.io import load`` elsewhere a use of
``torch.serialization.load``.

A module is known by two names: its path from the codebase root ("src/mypkg/io.py" is
``src.mypkg.io``, what relative imports resolve to) and its name from its top package's parent
folder (``mypkg.io``, what ``import mypkg.io`` says; a script folder without ``__init__.py``
is its own root, so ``dcgan/utils.py`` is ``utils`` for ``dcgan/main.py``). Bounded: a chain of
re-exports is followed at most ``DEPTH`` modules deep, and cycles stop there. Names a star
import bound (``*.x`` rows, see ``starred``) are settled here too, and dropped where no module
can be told to bind them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from watcher.impact.code.pyindex import UseRow, module_name
from watcher.impact.code.starred import is_starred

__all__ = ["DEPTH", "Module", "resolve_reexports"]

DEPTH = 5


class Module(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def uses(self) -> list[UseRow]: ...
    @property
    def exports(self) -> dict[str, str]: ...
    @property
    def stars(self) -> list[str]: ...


def resolve_reexports(modules: Iterable[Module], packages: set[str]) -> None:
    """Rewrites, in place, each use whose name goes through a module of the codebase to the
    outside name that module binds. ``packages``: the folders holding an ``__init__.py``."""
    tree = Tree()
    listed = list(modules)
    for module in listed:
        if module.path.endswith(".py"):
            tree.add(module.path, packages, module.exports, module.stars)
    tops = tree.tops
    for module in listed:
        root = sys_path_root(module.path, packages)
        unsettled = []
        for row in module.uses:
            name = row["name"]
            if is_starred(name):
                settled = tree.through_stars(name[2:], module.stars, root, 0)
                if settled is None:
                    unsettled.append(row)
                else:
                    row["name"] = settled
            elif name and name.partition(".")[0] in tops:
                target = tree.resolve(name, root, 0)
                # Kept as written when it stays inside the codebase: a codebase that holds a
                # package named like a library (pytorch's own tree) must keep "torch.load".
                if target is not None and target.partition(".")[0] not in tops:
                    row["name"] = target
        if unsettled:  # a name no module could be told to bind is no use of anything
            gone = {id(row) for row in unsettled}
            module.uses[:] = [row for row in module.uses if id(row) not in gone]


def sys_path_root(path: str, packages: set[str]) -> str:
    """The folder a file's top package sits in: where ``sys.path`` would point."""
    folder = path.rpartition("/")[0]
    while folder and folder in packages:
        folder = folder.rpartition("/")[0]
    return folder


# A module of the codebase: the folder it is seen from, its exports, its star imports.
Entry = tuple[str, dict[str, str], list[str]]


class Tree:
    def __init__(self) -> None:
        self.modules: dict[str, list[Entry]] = {}
        self.tops: set[str] = set()
        self._memo: dict[tuple[str, str], str | None] = {}

    def add(self, path: str, packages: set[str], exports: dict[str, str],
            stars: list[str]) -> None:
        root = sys_path_root(path, packages)
        names = [("", module_name(path))]
        if root:
            names.append((root, module_name(path[len(root) + 1:])))
        for folder, name in names:
            if name:
                self.modules.setdefault(name, []).append((folder, exports, stars))
                self.tops.add(name.partition(".")[0])

    def find(self, module: str, root: str) -> Entry | None:
        """The module of that name seen from a file under ``root``: the one beside it, else
        the one named from the codebase root, else the only one."""
        found = self.modules.get(module)
        if not found:
            return None
        for wanted in (root, ""):
            for entry in found:
                if entry[0] == wanted:
                    return entry
        return found[0] if len(found) == 1 else None

    def resolve(self, name: str, root: str, depth: int) -> str | None:
        key = (name, root)
        if key not in self._memo:
            self._memo[key] = self._resolve(name, root, depth)
        return self._memo[key]

    def _resolve(self, name: str, root: str, depth: int) -> str | None:
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # the longest module first
            entry = self.find(".".join(parts[:cut]), root)
            if entry is None or parts[cut] not in entry[1]:
                continue
            target = ".".join((entry[1][parts[cut]], *parts[cut + 1:]))
            if depth < DEPTH and target.partition(".")[0] in self.tops:
                return self.resolve(target, entry[0], depth + 1) or target
            return target
        return None

    def through_stars(self, name: str, stars: list[str], root: str, depth: int) -> str | None:
        """What ``name``, bound by one of ``stars``, names: the last module of the codebase
        that binds it (following its own star imports), else the one star import from
        outside the codebase; None when neither can be told."""
        first = name.partition(".")[0]
        outside = []
        for star in reversed(stars):
            entry = self.find(star, root)
            if entry is None:
                if star.partition(".")[0] not in self.tops:
                    outside.append(star)
                continue
            if first in entry[1]:
                return self.resolve(f"{star}.{name}", root, 0)
            if depth < DEPTH and entry[2]:
                found = self.through_stars(name, entry[2], entry[0], depth + 1)
                if found is not None:
                    return found
        return f"{outside[0]}.{name}" if len(outside) == 1 else None
