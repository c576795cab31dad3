"""Builds the atlas of a wheel: its public modules read, their names linked (``link``), the
version taken from the wheel's own metadata."""

from __future__ import annotations

import gc
import re
import zipfile
from pathlib import Path

from watcher.impact.atlas.errors import WheelUnreadable
from watcher.impact.atlas.extract import ModuleFacts, read_module
from watcher.impact.atlas.link import Linker, link
from watcher.impact.atlas.model import Atlas
from watcher.impact.atlas.wheel import Wheel

# PEP 427: {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl
_WHEEL_NAME = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)-")


def build_atlas(path: Path, package: str = "torch") -> Atlas:
    """The atlas of ``package`` in the wheel at ``path`` (read as a zip; nothing imported)."""
    # The trees ``ast`` builds are thousands of small objects that hold no cycle: the cyclic
    # collector's passes over them cost a fifth of the build and free nothing.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(path, package)
    finally:
        if collecting:
            gc.enable()


def _build(path: Path, package: str) -> Atlas:
    with Wheel(path, package) as wheel:
        def read(module: str) -> ModuleFacts:
            found = wheel.modules[module]
            return read_module(module, found.is_package,
                               wheel.text(found.py) if found.py else None,
                               wheel.text(found.pyi) if found.pyi else None)

        linker = Linker(package, set(wheel.modules), read)
        return link(package, wheel_version(path), linker)


def wheel_version(path: Path) -> str:
    """The version a wheel's ``*.dist-info/METADATA`` states (its file name's as a fallback),
    without a local label: ``2.13.0+cpu`` is the release 2.13.0."""
    version = None
    try:
        with zipfile.ZipFile(path) as archive:
            metadata = next((name for name in archive.namelist()
                             if name.count("/") == 1 and name.endswith(".dist-info/METADATA")),
                            None)
            if metadata is not None:
                for line in archive.read(metadata).decode("utf-8", "replace").splitlines():
                    if line.startswith("Version:"):
                        version = line.partition(":")[2].strip()
                        break
                    if not line:
                        break
    except (OSError, zipfile.BadZipFile) as error:
        raise WheelUnreadable(f"{path}: not a readable wheel ({error})") from error
    if version is None:
        match = _WHEEL_NAME.match(path.name)
        if match is None:
            raise WheelUnreadable(f"{path}: no version in its metadata or its name")
        version = match["version"]
    return version.partition("+")[0]
