"""The versions lock files hold: ``uv.lock`` and ``poetry.lock`` (TOML, a ``[[package]]``
table per package with its ``name`` and ``version``) and ``Pipfile.lock`` (JSON, packages by
name under ``default`` and ``develop``, each with ``"version": "==X"``). A lock file says what
is installed, exactly: each entry is a package declaration pinned with ``==``.

Kept apart from the environment files the impact analysis reads: a lock file repeats every
transitive dependency, which a release's requirements would touch over and over; only the
version of the package a codebase is on is read from it (``watcher.impact.environment.pins``).
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from packaging.utils import canonicalize_name

from watcher.impact.model import Declaration, UnparsableError

__all__ = ["LOCK_FILES", "is_lock_file", "read_lock"]

LOCK_FILES = frozenset({"uv.lock", "poetry.lock", "pipfile.lock"})


def is_lock_file(path: str) -> bool:
    return path.rpartition("/")[2].lower() in LOCK_FILES


def read_lock(path: str, text: str) -> list[Declaration]:
    """Each locked package as a declaration ``==VERSION`` on the line that names it;
    ``UnparsableError`` for a file that is not what its name says."""
    lines = text.replace("\r\n", "\n").split("\n")
    if path.rpartition("/")[2].lower() == "pipfile.lock":
        return _pipfile_lock(text, lines)
    return _toml_lock(text, lines)


def _toml_lock(text: str, lines: list[str]) -> list[Declaration]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise UnparsableError(f"invalid TOML: {error}") from None
    packages = data.get("package")
    found = []
    cursor = 0
    for entry in packages if isinstance(packages, list) else []:
        if not isinstance(entry, dict):
            continue
        name, version = entry.get("name"), entry.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            continue
        pattern = re.compile(rf"^\s*name\s*=\s*[\"']{re.escape(name)}[\"']")
        cursor = _line(lines, pattern, cursor)
        found.append(_locked(cursor, lines, name, version))
    return found


def _pipfile_lock(text: str, lines: list[str]) -> list[Declaration]:
    try:
        data: Any = json.loads(text)
    except ValueError as error:
        raise UnparsableError(f"invalid JSON: {error}") from None
    found = []
    for section in ("default", "develop"):
        packages = data.get(section) if isinstance(data, dict) else None
        for name, entry in (packages or {}).items() if isinstance(packages, dict) else ():
            version = entry.get("version") if isinstance(entry, dict) else None
            if not isinstance(version, str) or not version.startswith("=="):
                continue
            number = _line(lines, re.compile(rf"^\s*\"{re.escape(name)}\"\s*:"), 0)
            found.append(_locked(number, lines, name, version[2:]))
    return found


def _line(lines: list[str], pattern: re.Pattern[str], start: int) -> int:
    """The 1-based line from ``start`` on that matches (1 when none does)."""
    for index in range(start, len(lines)):
        if pattern.match(lines[index]):
            return index + 1
    return 1


def _locked(number: int, lines: list[str], name: str, version: str) -> Declaration:
    code = lines[number - 1].strip() if lines else ""
    return Declaration(line=number, code=f"{code} (locked {version})"[:200], kind="package",
                       name=canonicalize_name(name), specifier=f"=={version}")
