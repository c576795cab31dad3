"""What ``impact`` and ``upgrade`` found: each item with its impact and release (``Found``),
what a report needs to know of the run (``Scope``), and how the uses of several releases are
kept (``under_releases``)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import NamedTuple

from watcher.impact import CodeRoot, ItemImpact
from watcher.models import Affect, ClassifiedItem, Tier

__all__ = ["Found", "Scope", "change_id", "shown_uses", "under_releases"]

# "(#160000)", "(#1, #2)", "([#162726](https://github.com/pytorch/pytorch/pull/162726))".
_REFERENCES = re.compile(r"\(\s*\[?#\d+[^)]*\)+|\[#\d+\]\([^)]*\)|#\d+")


class Found(NamedTuple):
    item: ClassifiedItem
    impact: ItemImpact | None
    release: str | None
    origin: str = "notes"  # "package": an API change the notes do not mention


@dataclass(frozen=True)
class Scope:
    """The run a report is of: the repo whose releases were read (release links), the
    codebases (``roots``: where each use's path starts), and whether mentions are shown."""

    repo: str
    roots: tuple[CodeRoot, ...] = ()
    show_all: bool = False
    tool_version: str = ""
    failing: frozenset[Tier] = field(default_factory=lambda: frozenset({"breaks"}))

    def root_of(self, use: Affect) -> CodeRoot | None:
        return next((root for root in self.roots if root.label == use.root), None)


def shown_uses(entry: Found, show_all: bool) -> list[Affect]:
    """The uses a report lists for an item: every tier but mentions, unless asked."""
    uses = entry.impact.affects if entry.impact else []
    return [use for use in uses if show_all or use.tier != "mentions"]


def change_id(entry: Found) -> str:
    """Names one change, the same in every run and release: a notes item by its PR numbers
    (else its text), an API change of the package by what it says (which names its
    release). A patch release's notes repeating a change of the minor one name it alike."""
    item = entry.item
    if entry.origin == "notes" and item.prs:
        return "pr-" + "-".join(str(number) for number in sorted(item.prs))
    digest = hashlib.sha256(f"{entry.origin}\n{item.kind}\n{item.text}".encode()).hexdigest()
    return f"{'package' if entry.origin == 'package' else 'item'}-{digest[:12]}"


def _same_change(entry: Found) -> tuple[str, ...]:
    """The names under which a later item is the same change: its PR numbers, and its words
    without the PR references (2.10's notes saying again what 2.9's did, under a new PR)."""
    words = _REFERENCES.sub("", entry.item.text)
    text = " ".join(words.lower().split())
    digest = hashlib.sha256(f"{entry.origin}\n{entry.item.kind}\n{text}".encode()).hexdigest()
    return (change_id(entry), f"text-{digest[:16]}")


def under_releases(found: list[Found]) -> list[Found]:
    """Over releases read oldest first: every (use, change) pair, each under the release that
    makes the change; a later change to the same call is listed too (2.8's opset change and
    2.9's ``dynamo=True`` default on one ``torch.onnx.export``). A change a later release's
    notes repeat (the same PRs, or the same words) is kept under the first; an item left with
    no use keeps its APIs."""
    seen: set[tuple[str, str, str, int, str]] = set()
    kept = []
    for entry in found:
        if entry.impact is None:
            kept.append(entry)
            continue
        names = _same_change(entry)
        uses = []
        for use in entry.impact.affects:
            pairs = [(name, use.root, use.path, use.line, use.api) for name in names]
            if not any(pair in seen for pair in pairs):
                uses.append(use)
            seen.update(pairs)
        kept.append(entry._replace(impact=entry.impact._replace(affects=uses)))
    return kept
