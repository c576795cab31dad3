"""A wheel read as a zip: which modules of a package it holds, and their ``.py``/``.pyi``
source text. Nothing in it is imported or run."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from watcher.impact.atlas.errors import WheelUnreadable

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

    def __init__(self, path: Path, package: str) -> None:
        self.path = path
        self.package = package
        try:
            self._zip = zipfile.ZipFile(path)
        except (OSError, zipfile.BadZipFile) as error:
            raise WheelUnreadable(f"{path}: not a readable wheel ({error})") from error
        self.modules = _modules(self._zip.namelist(), package)
        if package not in self.modules:
            self._zip.close()
            raise WheelUnreadable(f"{path}: holds no package {package!r}")

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> Wheel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def text(self, member: str) -> str:
        # Source files are UTF-8 (PEP 3120); a stray byte must not stop the atlas.
        return self._zip.read(member).decode("utf-8", errors="replace")


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
