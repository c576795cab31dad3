"""Calibrates the floor of a guess's candidate subsystems (``CANDIDATE_FLOOR``): where an unsure
BC-breaking or deprecation item is routed (README "Classification").

Each of ``RELEASES`` is held out in turn, as ``eval_classifier`` does (a model trained on the
other releases only; the held-out notes' items classified from their text, headings stripped).
For every held-out item the model was unsure of (confidence below ``--unsure``), the plausible
subsystems at a floor are its guess, the model's candidates at or above the floor (at most
``MAX_CANDIDATES``) and the subsystems of the APIs it names: the floor is good when the item's
real area (its heading) is among them often and the set stays small. Prints, per floor, how
often the real area is in the set and how big the set is on average, held out; the chosen
floor is the lowest whose mean set size is at most ``--size``.

    python scripts/calibrate_candidates.py [--data ../shared/data] [--size 2.5] [--unsure 0.5]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import load_examples
from eval_classifier import Outcome, held_out
from train_classifier import DEFAULT_DATA, RELEASES, Featurizer

import watcher.notes.classify.classifier as classifier_module
from watcher.models import top_level
from watcher.notes.taxonomy import builtin_taxonomy

FLOORS = (0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)


def plausible(outcome: Outcome, floor: float, most: int) -> set[str]:
    """The top-level subsystems an unsure item would be routed to at ``floor``."""
    item = outcome.item
    model = [name for name, p in item.candidates or () if p > 0.0][:most]
    kept = {top_level(name) for name, p in item.candidates or ()
            if p >= floor and name in model}
    apis = {top_level(name) for name, p in item.candidates or () if p == 0.0}
    return {top_level(item.subsystem)} | kept | apis


def table(outcomes: Sequence[Outcome], most: int) -> list[tuple[float, float, float]]:
    """(floor, share with the real area in the set, mean set size) per floor."""
    rows = []
    for floor in FLOORS:
        sets = [plausible(o, floor, most) for o in outcomes]
        found = sum(o.gold in s for o, s in zip(outcomes, sets, strict=True))
        rows.append((floor, found / len(outcomes), sum(map(len, sets)) / len(outcomes)))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--size", type=float, default=2.5, help="largest mean set size")
    parser.add_argument("--unsure", type=float, default=0.5, help="confidence below which")
    args = parser.parse_args(argv)
    most = classifier_module.MAX_CANDIDATES
    classifier_module.CANDIDATE_FLOOR = 0.0  # every ranked class; the floors are tried here
    taxonomy = builtin_taxonomy()
    examples = load_examples(args.data, taxonomy)
    featurizer = Featurizer(taxonomy)
    unsure: list[Outcome] = []
    for release in RELEASES:
        found = [o for o in held_out(examples, release, taxonomy, featurizer)
                 if o.item.decided_by == "model" and o.item.confidence < args.unsure]
        right = sum(top_level(o.item.subsystem) == o.gold for o in found)
        print(f"held out {release}: {len(found)} unsure items, guess right {right}")
        unsure.extend(found)
    print(f"\n| floor | real area in the set | mean set size | ({len(unsure)} unsure items) |")
    print("|---|---|---|---|")
    rows = table(unsure, most)
    for floor, share, size in rows:
        print(f"| {floor:.2f} | {share:.3f} | {size:.2f} | |")
    chosen = next((floor for floor, _, size in rows if size <= args.size), FLOORS[-1])
    print(f"\nfloor: {chosen:.2f} (the lowest with a mean set size of at most {args.size})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
