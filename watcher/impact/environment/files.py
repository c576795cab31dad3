"""Which files of a codebase declare its environment, by name alone: kept apart from the
readers so that a scan whose files are all cached loads neither ``tomllib`` nor
``packaging``."""

from __future__ import annotations

from fnmatch import fnmatch
from typing import Literal

__all__ = ["EnvironmentKind", "environment_kind"]

EnvironmentKind = Literal["pyproject", "setup.cfg", "setup.py", "requirements", "dockerfile",
                          "conda", "conda-recipe", "shell", "cmake", "pixi"]


def environment_kind(path: str) -> EnvironmentKind | None:
    """The kind of environment file at ``path`` ("/"-separated), None for any other file."""
    folder, _, name = path.rpartition("/")
    lower = name.lower()
    if lower == "pyproject.toml":
        return "pyproject"
    if lower == "pixi.toml":
        return "pixi"  # pixi's manifest: conda and PyPI packages, and the indexes of each
    if lower in ("setup.cfg", "setup.py"):
        return lower  # type: ignore[return-value]
    if lower.endswith(".py"):  # most files a scan asks about: none of the patterns below
        return "dockerfile" if lower.startswith(("dockerfile", "containerfile")) else None
    if lower == "cmakelists.txt" or lower.endswith(".cmake"):
        return "cmake"  # the flags a C++ extension is compiled with
    if (fnmatch(lower, "*requirements*.txt") or fnmatch(lower, "constraints*.txt")
            or (lower.endswith(".in") and lower != "manifest.in")
            or (lower.endswith(".txt") and folder.rpartition("/")[2] == "requirements")):
        return "requirements"
    if lower.startswith(("dockerfile", "containerfile")) or lower.endswith(".dockerfile"):
        return "dockerfile"
    if lower in ("meta.yaml", "meta.yml"):
        return "conda-recipe"  # conda-build's recipe: what the package it builds needs
    if any(fnmatch(lower, pattern) for stem in ("*environment*", "conda*", "env", "env[-_]*")
           for pattern in (f"{stem}.yml", f"{stem}.yaml")):
        # environment.yml, extra_environment.yml, conda.yaml, conda-extras.yaml, env-gpu.yml
        return "conda"
    if lower.endswith((".sh", ".ps1")):
        return "shell"  # setup and install scripts: what they pip / conda install
    return None
