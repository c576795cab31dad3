"""The release below which a use runs because every call of the function it is in does: a
backport kept for an old torch (avalanche's copy of 1.13's ``torch.load``) is called only from
``if 1.13 <= torch < 1.14:`` in another file, so no 2.x change reaches the ``torch.jit.load``
inside it.

What the use's own file shows is on the row (``code.callers``); here the other files join in.
Any reference to a name ending like the function that may run on any release (a call, a
callback passed, ``x.name()`` on an object of unknown type) leaves the use unbounded, and so
does a function no file is seen calling (a library's public function has callers elsewhere).
A caller in a function of its own is bounded the same way, a few calls deep.
"""

from __future__ import annotations

from watcher.impact.code import CodeIndex, UseRow, module_name

__all__ = ["Callers"]

Version = tuple[int, int]
DEPTH = 3  # callers of callers followed; a guard further up is not looked for


class Callers:
    """``below(path, row)`` for the uses of one scanned codebase, each function read once."""

    def __init__(self, index: CodeIndex) -> None:
        self.index = index
        # Keyed by depth too: a bound cut short by DEPTH must not stand for a shallower ask, nor
        # one found shallow for a deeper ask, or the answer would hang on the order of uses.
        self._known: dict[tuple[str, int, int], Version | None] = {}
        self._starts: dict[tuple[str, str], int] | None = None
        self._unreached: dict[str, list[tuple[str, Version]]] | None = None

    def below(self, path: str, row: UseRow, depth: int = 0) -> Version | None:
        """The release every call of the function ``row`` is in runs below, or None."""
        scope = row.get("scope")
        return self.bound(path, scope, depth) if scope else None

    def bound(self, path: str, start: int, depth: int) -> Version | None:
        # Each call deeper is one depth more, so a cycle of calls ends at DEPTH, unbounded.
        key = (path, start, depth)
        if key not in self._known:
            self._known[key] = self._bound(path, start, depth)
        return self._known[key]

    def _bound(self, path: str, start: int, depth: int) -> Version | None:
        local = self.index.functions.get((path, start))
        if local is None:
            return None  # a class, a decorated function, or one called on any release here
        function, here, callers = local
        versions = [here] if here else []
        for caller in callers:  # its file's other functions calling it
            bound = self.bound(path, self.start_of(path, caller), depth + 1) \
                if depth < DEPTH else None
            if bound is None:
                return None
            versions.append(bound)
        module = module_name(path)
        versions.extend(version for name, version in self.unreached_ending(function)
                        if names_in(name, function, module))
        table = self.index.table
        for caller_path, row in (*table.ending_with(function),
                                 *table.by_method.get(function, ())):
            if row.get("ref") == "import":
                continue
            bound = row.get("below")
            if bound is None and depth < DEPTH:
                bound = self.below(caller_path, row, depth + 1)
            if bound is None:
                return None
            if row["name"] and names_in(row["name"], function, module):
                versions.append((bound[0], bound[1]))
        return max(versions) if versions else None

    def start_of(self, path: str, function: str) -> int:
        if self._starts is None:
            self._starts = {(where, name): start
                            for (where, start), (name, _, _) in self.index.functions.items()}
        return self._starts.get((path, function), 0)

    def unreached_ending(self, function: str) -> list[tuple[str, Version]]:
        if self._unreached is None:
            self._unreached = {}
            for name, version in self.index.unreached.items():
                self._unreached.setdefault(name.rpartition(".")[2], []).append((name, version))
        return self._unreached.get(function, [])


def names_in(name: str, function: str, module: str) -> bool:
    """Whether ``name`` is ``function`` of ``module``, however much of the module's path the
    import wrote (``pkg.io.load`` of the file ``src/pkg/io.py``, module ``src.pkg.io``)."""
    prefix, _, last = name.rpartition(".")
    if last != function:
        return False
    return prefix == module or module.endswith("." + prefix) or (not prefix and not module)
