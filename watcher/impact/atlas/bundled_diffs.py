"""The diffs of consecutive bundled atlases, bundled too: a release's API changes are the same
every time they are computed, and computing them costs more than everything else an
``impact`` run does (0.4-0.5 s a release), so ``scripts/build_atlases.py --diffs`` writes them
beside the atlases and the analysis reads them instead (``tests/test_atlas_bundled.py`` checks
each equals a fresh diff)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from watcher.impact.atlas.compare import ApiChange, diff
from watcher.impact.atlas.model import Atlas
from watcher.impact.atlas.source import bundled_dir

__all__ = ["bundled_diff", "changes_between", "diff_path", "write_diff"]


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


def write_diff(before: Atlas, after: Atlas, directory: Path | None = None) -> Path:
    path = diff_path(after.package, before.version, after.version, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"changes": [change.to_json_dict() for change in diff(before, after)]}
    path.write_bytes(gzip.compress(json.dumps(data, separators=(",", ":")).encode(), mtime=0))
    return path
