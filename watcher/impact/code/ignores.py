"""Ignore comments, read while a codebase is scanned: ``# release-watch: ignore[ITEM]`` on a
line (or alone on the line above it) names the items (a PR number, or ``*``) whose uses of that
line a team accepted. What is done with them is ``analysis.suppress``'s job."""

from __future__ import annotations

import re

__all__ = ["MARKER", "line_markers"]

MARKER = "release-watch:"
_INLINE = re.compile(r"#.*?\brelease-watch:\s*ignore\[([^\]]{1,400})\]")


def line_markers(text: str) -> dict[int, tuple[str, ...]]:
    """Line number → the items its ignore comment names; a comment alone on its line covers
    the line below it. Empty (and cheap) for the files that have none, nearly all."""
    if MARKER not in text:
        return {}
    found: dict[int, tuple[str, ...]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _INLINE.search(line) if MARKER in line else None
        if match is None:
            continue
        names = tuple(dict.fromkeys(part.strip().lstrip("#") for part in match[1].split(",")
                                    if part.strip()))
        target = number + 1 if line.lstrip().startswith("#") else number
        found[target] = tuple(dict.fromkeys((*found.get(target, ()), *names)))
    return found
