"""The short names release notes write for torch's APIs (``DTensor``, ``fully_shard``,
``ReduceLROnPlateau``), each with the one public name it stands for, from a release's atlas:
what lets the classifier place an item that names an API without its module.

A short name is kept only where it is unambiguous: the last component of public names
(no ``_`` part) of classes and functions that are all one API, owned by a subsystem
(``config/apis.toml``). ``pad`` (``torch.nn.functional.pad`` and ONNX's symbolic ``pad``),
``load`` and ``export`` stand for several, so they name nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from watcher.impact.atlas.model import CLASS, FUNCTION, Atlas

__all__ = ["short_names", "write_short_names"]

KINDS = (CLASS, FUNCTION)


def short_names(atlas: Atlas, owner: Callable[[str], str | None]) -> dict[str, str]:
    """Short name → the shortest public name of the one API it stands for."""
    apis: dict[str, set[str]] = {}
    for name, api in atlas.names.items():
        if any(part.startswith("_") for part in name.split(".")) or atlas.kind(api) not in KINDS:
            continue
        apis.setdefault(name.rpartition(".")[2], set()).add(api)
    found = {}
    for short, targets in apis.items():
        if len(targets) != 1:
            continue
        public = atlas.public_name(next(iter(targets)))
        if owner(public) is not None:
            found[short] = public
    return dict(sorted(found.items()))


def write_short_names(atlas: Atlas, owner: Callable[[str], str | None], path: Path) -> str:
    names = short_names(atlas, owner)
    path.write_text(json.dumps({"from": f"{atlas.package} {atlas.version}", "names": names},
                               indent=0, sort_keys=True) + "\n", encoding="utf-8")
    return f"{path.name}: {len(names)} short names from {atlas.package} {atlas.version}"
