"""The uses of a whole codebase, looked up the three ways the matcher asks: by name prefix
(``torch.load`` and everything under it), by last name component, and by the method name of
an object of unknown type.

Built once per scan with one pass that groups the uses by name; the sorted names, the
last-component and the method look-ups are made on first use from the distinct names (a few
thousand), so each subject costs a few look-ups instead of a pass over every use.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from functools import cached_property

from watcher.impact.code.gcpause import gc_paused
from watcher.impact.code.pyindex import UseRow

__all__ = ["Hit", "UseTable"]

Hit = tuple[str, UseRow]  # (path, use)


class UseTable:
    def __init__(self, files: Iterable[tuple[str, list[UseRow]]]) -> None:
        self.by_name: dict[str, list[Hit]] = {}
        self._unnamed: list[Hit] = []
        get = self.by_name.get
        for path, uses in files:
            for row in uses:
                name = row["name"]
                if not name:
                    self._unnamed.append((path, row))
                elif (hits := get(name)) is None:
                    self.by_name[name] = [(path, row)]
                else:
                    hits.append((path, row))

    @cached_property
    def names(self) -> list[str]:
        return sorted(self.by_name)

    @cached_property
    def by_part(self) -> dict[str, list[str]]:
        """The names that hold each component: "load" -> ["torch.load", "torch.load.x"]."""
        found: dict[str, list[str]] = {}
        for name in self.by_name:
            for part in set(name.split(".")):
                found.setdefault(part, []).append(name)
        return found

    @cached_property
    def by_method(self) -> dict[str, list[Hit]]:
        """The uses of a method of an object of unknown type, by method name."""
        found: dict[str, list[Hit]] = {}
        with gc_paused():  # most of a codebase's uses: a list entry each, no cycle
            for hit in self._unnamed:
                found.setdefault(hit[1].get("method", ""), []).append(hit)
        return found

    def under(self, api: str) -> list[Hit]:
        """Uses of ``api`` itself or of a name under it: ``torch.load`` and
        ``torch.load.x``, never ``torch.loads``."""
        # Dotted identifiers sort "api" < "api.x" < "api/" (the character after "."), and
        # no identifier character falls between "." and "/".
        names = self.names
        start = bisect_left(names, api)
        end = bisect_left(names, api + "/", start)
        return [hit for name in names[start:end] for hit in self.by_name[name]]

    def ending_with(self, last: str) -> list[Hit]:
        """Uses whose name's last component is ``last``."""
        return [hit for name in self.by_part.get(last, ()) if name.rpartition(".")[2] == last
                for hit in self.by_name[name]]

    def names_ending_with(self, last: str) -> list[str]:
        """The distinct names whose last component is ``last``."""
        return [name for name in self.by_part.get(last, ()) if name.rpartition(".")[2] == last]

    def through(self, part: str) -> list[Hit]:
        """Uses whose name holds the component ``part`` (``x.part`` or ``x.part.y``)."""
        return [hit for name in self.by_part.get(part, ()) for hit in self.by_name[name]]
