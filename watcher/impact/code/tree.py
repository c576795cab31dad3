"""The files of a codebase, as the scan and any reader of the whole tree walk them: sorted,
depth first, without version control, virtual environments, build output and caches, and
without following a symlinked folder (a link to a file inside the codebase is a file of it)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

__all__ = ["MAX_BYTES", "SKIPPED_DIRS", "walk"]

SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", "site-packages", "build", "dist", "node_modules",
    "__pycache__", ".tox", ".nox", ".mypy_cache", ".eggs", ".pytest_cache", ".ruff_cache",
    ".ipynb_checkpoints"})
MAX_BYTES = 8_000_000  # a generated file this big would take ast seconds; never hand-written


def walk(root: str, unparsable: list[tuple[str, str]],
         keep: Callable[[str], bool]) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """The files ``keep`` wants (by path, "/"-separated, relative to ``root``), sorted, depth
    first; skipped folders and symlinked folders are not entered. A symlinked file is yielded
    at its own path when it points at a file inside the codebase (a recipe importing a shared
    ``model.py`` through a link runs it there too); one pointing outside is not read."""
    pending: list[tuple[str, str]] = [("", root)]
    real_root = ""
    while pending:
        relative, folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            if not relative:
                raise
            unparsable.append((relative + "/", f"cannot list: {error.strerror or error}"))
            continue
        if relative and any(entry.name == "pyvenv.cfg" for entry in entries):
            continue  # a virtual environment, whatever its name
        folders = []
        for entry in entries:
            path = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS and not entry.name.endswith(".egg-info"):
                    folders.append((path, entry.path))
            elif entry.is_file(follow_symlinks=False) and keep(path):
                yield path, entry
            elif entry.is_symlink() and keep(path):
                real_root = real_root or os.path.realpath(root)
                if inside(entry.path, real_root):
                    yield path, entry
        pending.extend(reversed(folders))


def inside(link: str, real_root: str) -> bool:
    """Whether a symlink points at a regular file under ``real_root``."""
    target = os.path.realpath(link)
    return target.startswith(real_root + os.sep) and os.path.isfile(target)
