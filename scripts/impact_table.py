"""Prints, per PyTorch release-notes file, what ``release-watch impact`` finds in a codebase
(default: the pytorch/examples fixture): BC-breaking and deprecation items, those that name an
API, those that touch the code, the files and uses they touch (the README's table); and
TorchFix's TOR102 check: the 2.6 item that flipped ``torch.load``'s default must touch exactly
the calls TOR102 flags (17 in pytorch/examples) and no other file.

    python scripts/impact_table.py [--code DIR] [--data tests/fixtures]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from watcher.impact import CodeRoot, ImpactAnalyzer
from watcher.models import ATTENTION_KINDS
from watcher.notes import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy

ROOT = Path(__file__).resolve().parent.parent
HEADERS = ["release", "BC-breaking + deprecation items", "name an API", "touch the code",
           "files", "uses"]


def rows(data: Path, code: Path) -> tuple[list[list[str]], list[tuple[str, int]]]:
    """The table's rows, and the 2.6 torch.load item's uses as (path, line)."""
    analyzer = Analyzer(builtin_taxonomy())
    impact = ImpactAnalyzer([CodeRoot(code.name, code)], warn_unparsable=False)
    out, torch_load = [], []
    for path in sorted(data.glob("releases/pytorch/*.md"), key=_version):
        items = [i for i in analyzer.items(path.read_text(encoding="utf-8"))
                 if i.kind in ATTENTION_KINDS]
        found = [(item, impact.impact(item)) for item in items]
        named = [f for _, f in found if f is not None]
        touching = [f for f in named if f.affects]
        uses = [use for f in touching for use in f.affects]
        out.append([path.stem, str(len(items)), str(len(named)), str(len(touching)),
                    str(len({use.path for use in uses})), str(len(uses))])
        if path.stem.startswith("v2.6.0"):
            torch_load = [(use.path, use.line) for f in touching for use in f.affects]
    return out, torch_load


def _version(path: Path) -> tuple[int, ...]:
    digits = path.stem.lstrip("v").split("-", 1)[0]
    return tuple(int(part) for part in digits.split(".") if part.isdigit())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--code", type=Path, default=ROOT / "tests/fixtures/codebases/examples")
    parser.add_argument("--data", type=Path, default=ROOT / "tests" / "fixtures")
    args = parser.parse_args(argv)
    table, torch_load = rows(args.data, args.code)
    print("| " + " | ".join(HEADERS) + " |")
    print("|" + "---|" * len(HEADERS))
    for row in table:
        print("| " + " | ".join(row) + " |")
    files = sorted({path for path, _ in torch_load})
    print(f"\n2.6 torch.load flip: {len(torch_load)} uses in {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
