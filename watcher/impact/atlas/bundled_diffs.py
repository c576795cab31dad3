"""The diffs of every pair of bundled atlases, bundled too: a release's API changes are the
same every time they are computed, and computing them costs more than everything else an
``impact`` run does (0.4-0.5 s a release), so ``scripts/build_atlases.py --diffs`` writes them
beside the atlases and the analysis (consecutive releases) and ``atlas diff`` (any two) read
them instead (``tests/test_atlas_bundled.py`` and ``tests/test_atlas_span.py`` check each
equals a fresh diff)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from watcher.impact.atlas.compare import REMOVED, ApiChange, diff
from watcher.impact.atlas.model import CLASS, Atlas
from watcher.impact.atlas.source import bundled_dir, bundled_versions

__all__ = ["bundled_diff", "candidates", "changes_between", "diff_path", "span_diff",
           "write_diff"]


def diff_path(package: str, old: str, new: str, directory: Path | None = None) -> Path:
    return (directory or bundled_dir()) / "diffs" / f"{package}-{old}-{new}.json.gz"


def bundled_diff(package: str, old: str, new: str, directory: Path | None = None,
                 ) -> list[ApiChange] | None:
    path = diff_path(package, old, new, directory)
    if not path.is_file():
        return None
    rows = json.loads(gzip.decompress(path.read_bytes()))["changes"]
    return [ApiChange.from_json_dict(row) for row in rows]


def changes_between(before: Atlas, after: Atlas) -> list[ApiChange]:
    """The API changes from ``before`` to ``after``: bundled when both are, else computed."""
    found = bundled_diff(after.package, before.version, after.version)
    return found if found is not None else diff(before, after)


def span_diff(before: Atlas, after: Atlas, directory: Path | None = None
              ) -> list[ApiChange] | None:
    """``diff(before, after)`` of two bundled releases that are not consecutive, comparing
    only the APIs a bundled diff on the way names: an API that differs from ``before`` to
    ``after`` differs on some step between two consecutive bundled releases, whose diff
    names it (``tests/test_atlas_span.py`` holds every bundled pair to the whole diff), so
    the other APIs are neither decoded nor compared (a twentieth of them from 2.5.0 to
    2.7.0). None where a step's diff is not bundled."""
    versions = bundled_versions(after.package, directory)
    if before.version not in versions or after.version not in versions:
        return None
    start, end = versions.index(before.version), versions.index(after.version)
    if start >= end:
        return None
    steps = []
    for old, new in zip(versions[start:end], versions[start + 1:end + 1], strict=True):
        step = bundled_diff(after.package, old, new, directory)
        if step is None:
            return None
        steps.append(step)
    return diff(before, after, among=candidates(before, steps))


def candidates(before: Atlas, steps: Iterable[list[ApiChange]]) -> frozenset[str]:
    """The canonical APIs of ``before`` that the steps' changes may reach: each name a
    change gives (its ``api`` and ``names``), what ``before`` spells with it, every name
    inside a module a step removed (a module removed and brought back without some of its
    names), and the classes a method or class change reaches through inheritance (a change
    of a method is named through every class that has it)."""
    named = {name for step in steps for change in step for name in (change.api, *change.names)}
    removed = {name for step in steps for change in step if change.change == REMOVED
               for name in (change.api, *change.names)}
    keep = {canonical for canonical, names in before.spellings().items()
            if any(name in named or any(head in removed for head in _heads(name))
                   for name in names)}
    # A member (method, property, attribute, an enum's member) is named through a class:
    # that class, whatever the member's kind, and the class defining the member.
    keep.update(found for name in named for spelled in (name, name.rpartition(".")[0])
                if spelled and (found := before.resolve(spelled)) is not None)
    for api in list(keep):
        owner = api if before.kind(api) == CLASS else api.rpartition(".")[0]
        if before.kind(owner) == CLASS:
            keep.add(owner)
            keep.update(before.subclasses(owner))
    return frozenset(keep)


def _heads(name: str) -> Iterator[str]:
    """``a.b.c`` → ``a.b``, ``a``."""
    head = name.rpartition(".")[0]
    while head:
        yield head
        head = head.rpartition(".")[0]


def write_diff(before: Atlas, after: Atlas, directory: Path | None = None) -> Path:
    path = diff_path(after.package, before.version, after.version, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"changes": [change.to_json_dict() for change in diff(before, after)]}
    path.write_bytes(gzip.compress(json.dumps(data, separators=(",", ":")).encode(), mtime=0))
    return path
