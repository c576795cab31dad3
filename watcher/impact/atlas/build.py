"""Builds the atlas of a wheel: its public modules read, their names linked (``link``), the
version, the Python and the packages it requires taken from the wheel's own metadata.

A module ``ast`` cannot take (a nesting deep enough for ``RecursionError`` in ``ast.parse`` or
``ast.unparse``, or a ``MemoryError``), or larger than the budget lets one module be, is
skipped: named in the atlas's ``skipped``, what it defines unknown rather than removed. Run in
this process it trusts the wheel's size to its caps; ``sandbox`` runs it in a child process
with limits on memory and CPU, which is how wheels from the index are built.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import re
import zipfile
from pathlib import Path
from typing import NamedTuple

from watcher.impact.atlas.budget import Budget
from watcher.impact.atlas.errors import WheelUnreadable
from watcher.impact.atlas.extract import ModuleFacts, read_module
from watcher.impact.atlas.link import Linker, link
from watcher.impact.atlas.model import Atlas
from watcher.impact.atlas.wheel import Wheel

# PEP 427: {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl
_WHEEL_NAME = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)-")
_METADATA_READ = 64 * 1024  # the headers come first; the long description is never needed
_HEADERS = frozenset({"Version", "Requires-Python", "Requires-Dist"})

logger = logging.getLogger(__name__)


def build_atlas(path: Path, package: str = "torch", budget: Budget | None = None) -> Atlas:
    """The atlas of ``package`` in the wheel at ``path`` (read as a zip; nothing imported)."""
    # The trees ``ast`` builds are thousands of small objects that hold no cycle: the cyclic
    # collector's passes over them cost a fifth of the build and free nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(path, package, budget)
    finally:
        if collecting:
            gc.enable()


def _build(path: Path, package: str, budget: Budget | None) -> Atlas:
    skipped: list[str] = []
    with Wheel(path, package, budget) as wheel:
        def skip(module: str, why: str) -> ModuleFacts:
            # What the module defines is unknown: the atlas says so (``skipped``), and a diff
            # leaves it out rather than report everything in it removed.
            skipped.append(module)
            logger.debug("%s: module %s skipped (%s)", path.name, module, why)
            return ModuleFacts(module, wheel.modules[module].is_package)

        def read(module: str) -> ModuleFacts:
            found = wheel.modules[module]
            if {found.py, found.pyi} & wheel.oversized:
                return skip(module, "larger than impact.module_max_size")
            try:
                return read_module(module, found.is_package,
                                   wheel.text(found.py) if found.py else None,
                                   wheel.text(found.pyi) if found.pyi else None)
            except (RecursionError, MemoryError) as error:
                return skip(module, type(error).__name__)

        linker = Linker(package, set(wheel.modules), read)
        metadata = wheel_metadata(path)
        atlas = link(package, metadata.version, linker)
    return dataclasses.replace(atlas, skipped=tuple(sorted(skipped)),
                               requires_python=metadata.requires_python,
                               requires=metadata.requires)


class WheelMetadata(NamedTuple):
    """What a wheel's ``*.dist-info/METADATA`` headers state of it: its version (without a
    local label: ``2.13.0+cpu`` is the release 2.13.0), its ``Requires-Python`` and its
    ``Requires-Dist`` lines (every platform's: their markers say which)."""

    version: str
    requires_python: str = ""
    requires: tuple[str, ...] = ()


def wheel_version(path: Path) -> str:
    """The release a wheel holds (``wheel_metadata``)."""
    return wheel_metadata(path).version


def wheel_metadata(path: Path) -> WheelMetadata:
    """The wheel's metadata headers; the version from its file name where they state none."""
    headers: dict[str, list[str]] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            metadata = next((name for name in archive.namelist()
                             if name.count("/") == 1 and name.endswith(".dist-info/METADATA")),
                            None)
            if metadata is not None:
                with archive.open(metadata) as member:
                    head = member.read(_METADATA_READ)
                for line in head.decode("utf-8", "replace").splitlines():
                    if not line:
                        break  # the headers end at the first empty line (RFC 822)
                    key, sep, value = line.partition(":")
                    if sep and key in _HEADERS:
                        headers.setdefault(key, []).append(value.strip())
    except (OSError, zipfile.BadZipFile) as error:
        raise WheelUnreadable(f"{path}: not a readable wheel ({error})") from error
    version = next(iter(headers.get("Version", ())), None)
    if version is None:
        match = _WHEEL_NAME.match(path.name)
        if match is None:
            raise WheelUnreadable(f"{path}: no version in its metadata or its name")
        version = match["version"]
    return WheelMetadata(version.partition("+")[0],
                         next(iter(headers.get("Requires-Python", ())), ""),
                         tuple(headers.get("Requires-Dist", ())))
