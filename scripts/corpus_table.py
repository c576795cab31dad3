"""Prints, per real release-notes file, what the parser makes of it: items, PR references, the
share of items placed by their heading, and whether every invariant holds (the README's table).

    python scripts/corpus_table.py [--data tests/fixtures]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from watcher.notes.classify import Classifier
from watcher.notes.invariants import check_items, placement
from watcher.notes.parse import parse_notes
from watcher.notes.taxonomy import builtin_taxonomy

ROOT = Path(__file__).resolve().parent.parent


def rows(data: Path) -> list[list[str]]:
    taxonomy = builtin_taxonomy()
    classifier = Classifier(taxonomy)
    out = []
    for path in sorted([*data.glob("releases/*/*"), *data.glob("seeds/*.txt")]):
        body = path.read_text(encoding="utf-8")
        notes = parse_notes(body, lookup=taxonomy)
        report = check_items(body, notes.items, taxonomy)
        placed = placement(classifier.classify_all(notes.items), taxonomy)
        grouped = sum(1 for item in notes.items if item.group_depth)
        out.append([str(path.relative_to(data)), str(len(notes.items)), str(report.references),
                    str(grouped),
                    f"{placed.area_kept}/{placed.under_area} ({placed.area_share:.0%})",
                    f"{placed.section_kept}/{placed.under_section} ({placed.section_share:.0%})",
                    "all hold" if report.ok else f"{len(report.problems)} problems"])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=ROOT / "tests" / "fixtures")
    args = parser.parse_args(argv)
    header = ["file", "items", "PR references", "items split out of a group",
              "under an area heading: its subsystem", "under a section: its kind", "invariants"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows(args.data):
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
