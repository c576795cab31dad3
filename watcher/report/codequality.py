"""A SARIF log of release-watch as a GitLab Code Quality report, for GitLab's merge request
widget (``artifacts:reports:codequality``, every tier): GitLab reads no SARIF artifact of its
own (a direct upload is only proposed, gitlab-org/gitlab#452042).

Run by the GitLab job after ``upgrade --format sarif`` (``deploy/ci/gitlab-ci.yml``)::

    python -m watcher.report.codequality release-watch.sarif > gl-code-quality-report.json

The report is GitLab's subset of the Code Climate format: per unsuppressed result its
``description``, ``check_name``, ``fingerprint``, ``severity`` and ``location`` (the path from
the project's root, the working directory of a GitLab job, and the line).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

__all__ = ["code_quality"]

SEVERITIES = {"error": "critical", "warning": "major", "note": "info", "none": "info"}


def code_quality(log: dict[str, Any], project: Path) -> list[dict[str, Any]]:
    """The Code Quality entries of every result no suppression accepted."""
    entries = []
    for run in log.get("runs", []):
        bases = {name: Path(unquote(urlparse(base["uri"]).path))
                 for name, base in run.get("originalUriBaseIds", {}).items()}
        for result in run.get("results", []):
            if result.get("suppressions"):
                continue
            where = result["locations"][0]["physicalLocation"]
            artifact = where["artifactLocation"]
            path = _path(artifact["uri"], bases.get(artifact.get("uriBaseId", "")), project)
            entries.append({
                "description": result["message"]["text"],
                "check_name": result["ruleId"],
                "fingerprint": next(iter(result.get("partialFingerprints", {}).values()), ""),
                "severity": SEVERITIES[result.get("level", "warning")],
                "location": {"path": path, "lines": {"begin": where["region"]["startLine"]}},
            })
    return entries


def _path(uri: str, base: Path | None, project: Path) -> str:
    if base is None:
        return uri
    try:
        return (base / uri).resolve().relative_to(project.resolve()).as_posix()
    except ValueError:
        return uri


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m watcher.report.codequality SARIF_FILE", file=sys.stderr)
        return 2
    log = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    print(json.dumps(code_quality(log, Path.cwd()), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
