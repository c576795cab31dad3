"""TOML manifests: a ``pyproject.toml`` (PEP 621 ``[project]``, Poetry's tables, uv's indexes and
sources, pixi's tables under ``[tool.pixi]``) and pixi's own ``pixi.toml``.

uv and pixi are where a project says which wheel index its torch comes from (PyTorch's
``download.pytorch.org/whl/cu128``): the CUDA of that build is what a release dropping a CUDA
version or the GPUs a build runs on reaches, as a requirements file's ``--index-url`` does.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from itertools import chain
from typing import Any

from watcher.impact.environment.declarations import (
    TORCH_FAMILY,
    conda_spec,
    cuda_in,
    python,
    requirement,
)
from watcher.impact.environment.images import torch_channel
from watcher.impact.model import Declaration, UnparsableError

__all__ = ["pixi_toml", "pyproject"]


def pyproject(lines: list[str]) -> list[Declaration]:
    """PEP 621 ``[project]`` (requires-python, dependencies, optional-dependencies), Poetry's
    ``[tool.poetry.*dependencies]`` (``python = "^3.9"``), uv's indexes and pixi's tables."""
    data = loaded(lines)
    finder = LineFinder(lines)
    project = table(data, "project")
    found: list[Declaration] = []
    spec = project.get("requires-python")
    if isinstance(spec, str):
        number = finder.key("requires-python")
        found.append(python(number, lines[number - 1], spec))
    groups = [project.get("dependencies")]
    groups += list(table(project, "optional-dependencies").values())
    groups += list(table(data, "dependency-groups").values())
    for group in groups:
        for text in group if isinstance(group, list) else ():
            if isinstance(text, str):
                number = finder.string(text)
                found += requirement(number, lines[number - 1], text)
    tool = table(data, "tool")
    poetry = table(tool, "poetry")
    sections = [("tool.poetry.dependencies", table(poetry, "dependencies")),
                ("tool.poetry.dev-dependencies", table(poetry, "dev-dependencies"))]
    sections += [(f"tool.poetry.group.{name}.dependencies", table(group, "dependencies"))
                 for name, group in table(poetry, "group").items() if isinstance(group, dict)]
    for header, section in sections:
        found += poetry_section(finder, header, section)
    found += uv_indexes(LineFinder(lines), table(tool, "uv"))
    if "pixi" in tool:
        found += pixi(LineFinder(lines), table(tool, "pixi"), "tool.pixi")
    return found


def pixi_toml(lines: list[str]) -> list[Declaration]:
    """A ``pixi.toml``: pixi's tables at the top level."""
    return pixi(LineFinder(lines), loaded(lines), "")


def loaded(lines: list[str]) -> dict[str, Any]:
    try:
        return tomllib.loads("\n".join(lines))
    except tomllib.TOMLDecodeError as error:
        raise UnparsableError(f"invalid TOML: {error}") from None


def table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def poetry_section(finder: LineFinder, header: str,
                   section: dict[str, Any]) -> list[Declaration]:
    found: list[Declaration] = []
    for name, value in section.items():
        constraint = value.get("version") if isinstance(value, dict) else value
        if not isinstance(constraint, str):
            continue
        number = finder.key(name, header)
        code = finder.lines[number - 1]
        specifier = poetry_specifier(constraint)
        if name == "python":
            found.append(python(number, code, specifier))
        else:
            found += requirement(number, code, f"{name}{specifier}")
    return found


def poetry_specifier(constraint: str) -> str:
    """Poetry's constraints in PEP 440: ``^3.9`` is >=3.9,<4.0, ``~3.9`` >=3.9,<3.10, a bare
    version is exact, ``*`` is anything."""
    text = constraint.strip()
    if text in ("", "*"):
        return ""
    operator = text[0] if text[0] in "^~" and not text.startswith("~=") else ""
    release = text[len(operator):].strip().removesuffix(".*")
    if not re.fullmatch(r"\d+(\.\d+)*", release):
        return ",".join(part.strip() for part in re.split(r"[,\s]+(?=[<>=!~])", text))
    parts = [int(part) for part in release.split(".")]
    if not operator:
        return f"=={release}.*" if text.endswith(".*") else f"=={release}"
    if operator == "^":
        position = next((i for i, part in enumerate(parts) if part), len(parts) - 1)
    else:
        position = min(1, len(parts) - 1) if len(parts) > 1 else 0
    upper = [*parts[:position], parts[position] + 1]
    return f">={release},<{'.'.join(map(str, upper))}"


def uv_indexes(finder: LineFinder, uv: dict[str, Any]) -> list[Declaration]:
    """The CUDA of the PyTorch wheel indexes uv installs torch from: an ``[[tool.uv.index]]``
    every package may come from, or an ``explicit`` one that ``[tool.uv.sources]`` names for
    a torch-family package (``torch = [{ index = "pytorch-cu128", extra = "gpu" }]``); and
    the older ``index-url`` / ``extra-index-url`` settings."""
    sourced = {entry.get("index") for name, entries in table(uv, "sources").items()
               if name.lower() in TORCH_FAMILY for entry in listed(entries)}
    found: list[Declaration] = []
    for index in listed(uv.get("index")):
        url = index.get("url")
        if isinstance(url, str) and (not index.get("explicit") or index.get("name") in sourced):
            found += cuda_at(finder, url)
    for key in ("index-url", "extra-index-url"):
        for url in strings(uv.get(key)):
            found += cuda_at(finder, url)
    return found


def pixi(finder: LineFinder, manifest: dict[str, Any], prefix: str) -> list[Declaration]:
    """What a pixi manifest installs, in every feature and platform target: its conda
    ``dependencies`` (torch's channel among them), its ``pypi-dependencies`` with the index
    each names, and the indexes of its ``pypi-options``."""
    channels = strings(table(manifest, "workspace").get("channels")) or strings(
        table(manifest, "project").get("channels"))
    scopes: list[tuple[str, dict[str, Any], list[str]]] = [(prefix, manifest, channels)]
    for name, feature in table(manifest, "feature").items():
        if isinstance(feature, dict):
            own = strings(feature.get("channels"))
            scopes.append((joined(prefix, f"feature.{name}"), feature, [*own, *channels]))
    found: list[Declaration] = []
    for header, scope, scope_channels in scopes:
        targets = [(header, scope)] + [
            (joined(header, f"target.{platform}"), target)
            for platform, target in table(scope, "target").items() if isinstance(target, dict)]
        for target_header, target in targets:
            found += pixi_conda(finder, joined(target_header, "dependencies"),
                                table(target, "dependencies"), scope_channels)
            found += pixi_pypi(finder, joined(target_header, "pypi-dependencies"),
                               table(target, "pypi-dependencies"))
        options = table(scope, "pypi-options")
        for url in chain(strings(options.get("index-url")),
                         strings(options.get("extra-index-urls"))):
            found += cuda_at(finder, url)
    return found


def pixi_conda(finder: LineFinder, header: str, section: dict[str, Any],
               channels: list[str]) -> list[Declaration]:
    """``pytorch = ">=2.5"``, ``cuda-version = "==12.8"``, ``python = "3.12.*"``,
    ``pytorch = { version = "2.5.*", channel = "pytorch" }``: conda match specs."""
    found: list[Declaration] = []
    for name, value in section.items():
        version = value.get("version", "") if isinstance(value, dict) else value
        if not isinstance(version, str):
            continue
        number = finder.key(name, header)
        code = finder.lines[number - 1]
        spec = f"{name} {version.strip() if version.strip() != '*' else ''}".strip()
        found += conda_spec(number, code, spec)
        channel = value.get("channel") if isinstance(value, dict) else None
        found += torch_channel(number, code, [f"{channel}::{spec}" if isinstance(
            channel, str) else spec], channels)
    return found


def pixi_pypi(finder: LineFinder, header: str, section: dict[str, Any]) -> list[Declaration]:
    """``torch = ">=2.7"`` or ``torch = { version = ">=2.7.0", index =
    "https://download.pytorch.org/whl/cu128" }``: PEP 440 requirements, and the CUDA of the
    index a package is taken from."""
    found: list[Declaration] = []
    for name, value in section.items():
        version = value.get("version", "") if isinstance(value, dict) else value
        if not isinstance(version, str):
            continue  # not a constraint (a path, git or URL source names no version: "")
        number = finder.key(name, header)
        code = finder.lines[number - 1]
        found += requirement(number, code, name + ("" if version.strip() == "*" else version))
        index = value.get("index") if isinstance(value, dict) else None
        if isinstance(index, str):
            found += cuda_in(number, code, index)
    return found


def cuda_at(finder: LineFinder, url: str) -> list[Declaration]:
    """The CUDA of a wheel index URL, on the line that writes it."""
    if not cuda_in(0, "", url):
        return []
    number = finder.string(url)
    return cuda_in(number, finder.lines[number - 1], url)


def listed(value: object) -> list[dict[str, Any]]:
    """A TOML table or array of tables as a list of tables."""
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict)]


def strings(value: object) -> list[str]:
    """A TOML string or array of strings as a list."""
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, str)]


def joined(prefix: str, header: str) -> str:
    return f"{prefix}.{header}" if prefix else header


class LineFinder:
    """The line of a TOML key or string, found in the text (tomllib keeps no positions);
    searches go forward so that repeated strings land on successive lines."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.cursor = 0

    def key(self, key: str, header: str = "") -> int:
        start = 0
        if header:
            pattern = re.compile(r"^\s*\[\s*" + re.escape(header).replace(r"\.", r"\s*\.\s*")
                                 + r"\s*\]")
            start = next((i for i, text in enumerate(self.lines) if pattern.match(text)), 0)
        pattern = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
        return self.search(pattern.match, start)

    def string(self, text: str) -> int:
        quoted = (f'"{text}"', f"'{text}'")
        found = self.search(lambda line: any(q in line for q in quoted), self.cursor)
        self.cursor = found - 1
        return found

    def search(self, test: Callable[[str], object], start: int) -> int:
        for index in chain(range(start, len(self.lines)), range(start)):
            if test(self.lines[index]):
                return index + 1
        return 1

