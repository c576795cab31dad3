"""A wheel read as a zip: which modules of a package it holds, and their ``.py``/``.pyi``
source text. Nothing in it is imported or run.

What reading it can cost is known from the zip directory before a byte is decompressed (a
member never yields more than the size the directory states: ``zipfile`` stops there and
checks the CRC), so the budget's caps are checked up front: a module larger than
``max_module`` is not read (``oversized``), and a wheel whose source adds up to more than
``max_modules`` is refused."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from watcher.impact.atlas.budget import Budget, megabytes
from watcher.impact.atlas.errors import OverBudget, WheelUnreadable

SUFFIXES = (".py", ".pyi")


@dataclass(frozen=True, slots=True)
class ModuleFile:
    """Where one module's source is in the wheel: its ``.py``, its stub, or both."""

    name: str
    is_package: bool
    py: str | None = None
    pyi: str | None = None


class Wheel:
    """The modules of ``package`` in a wheel file, read on demand (a private module is read
    only when a public name leads into it)."""

    def __init__(self, path: Path, package: str, budget: Budget | None = None) -> None:
        self.path = path
        self.package = package
        try:
            self._zip = zipfile.ZipFile(path)
        except (OSError, zipfile.BadZipFile) as error:
            raise WheelUnreadable(f"{path}: not a readable wheel ({error})") from error
        self.modules = _modules(self._zip.namelist(), package)
        try:
            if package not in self.modules:
                raise WheelUnreadable(f"{path}: holds no package {package!r}")
            self.oversized = self._measured(budget or Budget())
        except BaseException:
            self._zip.close()
            raise

    def _measured(self, budget: Budget) -> set[str]:
        """The members too large to read as one module; refused when all the source that
        would be read adds up to more than the budget's cap."""
        sizes = {info.filename: info.file_size for info in self._zip.infolist()}
        members = [member for found in self.modules.values()
                   for member in (found.py, found.pyi) if member is not None]
        oversized = {member for member in members if sizes[member] > budget.max_module}
        total = sum(sizes[member] for member in members if member not in oversized)
        if total > budget.max_modules:
            raise OverBudget(f"{self.path.name}: its {self.package} source is "
                             f"{megabytes(total)} uncompressed, over the cap of "
                             f"{megabytes(budget.max_modules)} (impact.modules_max_size)")
        return oversized

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> Wheel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def text(self, member: str) -> str:
        # Read up to the size the directory states, no further: ``read()`` with no size would
        # inflate a whole block first (gigabytes, from a directory that lies) and only then
        # cut it; with one, the stream ends there and its CRC is checked (``BadZipFile``).
        info = self._zip.getinfo(member)
        with self._zip.open(info) as stream:
            data = stream.read(info.file_size)
        # Source files are UTF-8 (PEP 3120); a stray byte must not stop the atlas.
        return data.decode("utf-8", errors="replace")


def is_public(module: str) -> bool:
    """A module users may import: no part of its dotted name starts with ``_``."""
    return not any(part.startswith("_") for part in module.split("."))


def _modules(members: list[str], package: str) -> dict[str, ModuleFile]:
    found: dict[str, dict[str, str]] = {}
    packages: set[str] = set()
    for member in members:
        if not member.startswith(package + "/") or not member.endswith(SUFFIXES):
            continue
        stem, _, suffix = member.rpartition(".")
        parts = stem.split("/")
        if not all(part.isidentifier() for part in parts):
            continue  # data or templates shipped beside the code (``foo-bar.py``)
        if parts[-1] == "__init__":
            parts.pop()
            packages.add(".".join(parts))
        found.setdefault(".".join(parts), {})[suffix] = member
    return {name: ModuleFile(name, name in packages, files.get("py"), files.get("pyi"))
            for name, files in found.items()}
