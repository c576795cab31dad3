"""How long parsing and classifying real release notes takes, model included.

Prints, for each real note (and for the 2.7 and 2.8 notes joined into one ~100 KB body, the size
of the largest PyTorch notes), the time to parse it, to classify its items with headings and
again as one flat list (so every item goes through the rules and the model), and items/second.
The shipped model's load time is printed first, since the first classification pays it once.

    python bench/bench_classify.py [NOTES.md ...]   # default: tests/fixtures/releases/**/*.md
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from watcher.classify import Classifier
from watcher.model import builtin_model
from watcher.models import Item
from watcher.notes import parse_notes
from watcher.taxonomy import builtin_taxonomy

ROOT = Path(__file__).resolve().parent.parent
RELEASES = ROOT / "tests" / "fixtures" / "releases"
T = TypeVar("T")


def timed(call: Callable[[], T], repeat: int = 5) -> tuple[T, float]:
    """The result and the best of ``repeat`` wall-clock times, in seconds."""
    best = float("inf")
    result: T
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return result, best


def bench(name: str, body: str, classifier: Classifier) -> None:
    taxonomy = classifier.taxonomy
    notes, parse = timed(lambda: parse_notes(body, is_known_heading=taxonomy.is_known_heading))
    items = notes.items
    flat = [Item(text=item.text) for item in items]
    _, headed = timed(lambda: classifier.classify_all(items))
    _, bare = timed(lambda: classifier.classify_all(flat))
    rate = len(items) / bare if bare else float("inf")
    print(f"{name:28} {len(body) / 1000:6.1f} KB {len(items):5d} items  parse {parse:6.3f} s  "
          f"classify {headed:6.3f} s  flat {bare:6.3f} s  ({rate:,.0f} items/s flat)")


def main(argv: Sequence[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(RELEASES.glob("*/*.md"))
    start = time.perf_counter()
    builtin_model()
    print(f"model load {time.perf_counter() - start:.3f} s")
    classifier = Classifier(builtin_taxonomy())
    bodies = {str(p.relative_to(RELEASES) if p.is_relative_to(RELEASES) else p):
              p.read_bytes().decode("utf-8") for p in paths}
    for name, body in bodies.items():
        bench(name, body, classifier)
    joined = [b for n, b in bodies.items() if n.endswith(("v2.7.0.md", "v2.8.0.md"))]
    if len(joined) == 2:
        bench("pytorch 2.7 + 2.8 joined", "\n\n".join(joined), classifier)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
