"""Measures subsystem classification as a user meets it: on a release the model never saw, with
the notes' headings stripped.

Each of ``RELEASES`` is held out in turn: the model is trained on the other releases' notes,
worksheets and commit lists (none of the held-out release's, and no copy of its items), with its
C, temperature and rule confidence chosen on those other releases only (``train``), then every
item of the held-out release's notes that stands under an area heading is classified from its
text alone, as one flat list, and compared with that heading. Prints per release top-1 accuracy,
macro-F1 and precision at 50/70/90 % coverage by confidence, what decided, and the calibration
buckets over all held-out items (confidence range → share right); then the same models on the
held-out release's commit titles (its worksheet and commit-list rows, user facing or not, one
copy of each), against the category maintainers filed them under.

    python scripts/eval_classifier.py [--data ../shared/data] [--holdout 2.8 ...] [--groups]
                                      [--user-facing-only]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibrate import buckets, precision_at
from corpus import Example, dedupe, held_out_notes, load_examples, training_set
from train_classifier import DEFAULT_DATA, GRID, RELEASES, Featurizer, train

from watcher.models import ClassifiedItem, Item, top_level
from watcher.notes.classify import Classifier
from watcher.notes.taxonomy import Taxonomy, builtin_taxonomy

COVERAGES = (0.5, 0.7, 0.9)


@dataclass(frozen=True)
class Outcome:
    gold: str
    item: ClassifiedItem

    @property
    def right(self) -> bool:
        return top_level(self.item.subsystem) == self.gold


@dataclass(frozen=True)
class Scores:
    n: int
    accuracy: float
    macro_f1: float
    precision: tuple[float, ...]  # at each of COVERAGES
    deciders: Counter[str]


def macro_f1(pairs: Sequence[tuple[str, str]]) -> float:
    """Mean F1 over the gold classes (predicting a class never in the gold set still costs
    recall elsewhere)."""
    gold = Counter(g for g, _ in pairs)
    predicted = Counter(p for _, p in pairs)
    hits = Counter(g for g, p in pairs if g == p)
    f1s = []
    for name in gold:
        precision = hits[name] / predicted[name] if predicted[name] else 0.0
        recall = hits[name] / gold[name]
        f1s.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return sum(f1s) / len(f1s) if f1s else 0.0


def score(outcomes: Sequence[Outcome]) -> Scores:
    pairs = [(o.gold, top_level(o.item.subsystem)) for o in outcomes]
    sure = [(o.item.confidence, o.right) for o in outcomes]
    return Scores(len(outcomes), sum(o.right for o in outcomes) / len(outcomes),
                  macro_f1(pairs), tuple(precision_at(sure, c) for c in COVERAGES),
                  Counter(o.item.decided_by for o in outcomes))


def flat_item(example: Example, *, groups: bool = False) -> Item:
    """The item from its text alone (no heading, no neighbours), or also with the group
    bullets it stands under in its list ("- c10d" above "- Fix …"), which are no headings."""
    if not groups or not example.groups:
        return Item(text=example.text)
    return Item(text=example.text, section=example.groups, group=example.groups[-1],
                group_depth=len(example.groups))


def held_out_classifier(examples: Sequence[Example], release: str, taxonomy: Taxonomy,
                        featurizer: Featurizer, grid: Sequence[float] | None = None
                        ) -> Classifier:
    """A classifier whose model never saw ``release``."""
    model, _ = train(training_set(examples, release), featurizer=featurizer,
                     grid=grid or GRID)
    return Classifier(taxonomy, model)


def classified(classifier: Classifier, examples: Sequence[Example], *,
               groups: bool = False) -> list[Outcome]:
    return [Outcome(e.subsystem, classifier.classify(flat_item(e, groups=groups)))
            for e in examples]


def held_out(examples: Sequence[Example], release: str, taxonomy: Taxonomy,
             featurizer: Featurizer, grid: Sequence[float] | None = None, *,
             groups: bool = False) -> list[Outcome]:
    """``release``'s notes classified by a model that never saw the release."""
    classifier = held_out_classifier(examples, release, taxonomy, featurizer, grid)
    return classified(classifier, held_out_notes(examples, release), groups=groups)


def commit_titles(examples: Sequence[Example], release: str) -> list[Example]:
    """``release``'s worksheet and commit-list rows, user facing or not, one copy of each."""
    return dedupe(e for e in examples if e.release == release and e.source != "notes")


def table(results: dict[str, Scores]) -> list[str]:
    lines = ["| held out | items | top-1 | macro-F1 | precision at 50 / 70 / 90 % | decided by |",
             "|---|---|---|---|---|---|"]
    for release, s in results.items():
        deciders = ", ".join(f"{name} {n}" for name, n in s.deciders.most_common())
        lines.append(f"| {release} | {s.n} | {s.accuracy:.3f} | {s.macro_f1:.3f} | "
                     + " / ".join(f"{p:.3f}" for p in s.precision) + f" | {deciders} |")
    mean = sum(s.accuracy for s in results.values()) / len(results)
    lines.append(f"| mean | | **{mean:.3f}** | | | |")
    return lines


def pooled(outcomes: Sequence[Outcome]) -> str:
    s = score(outcomes)
    return (f"all held-out items together: {s.n}, top-1 {s.accuracy:.3f}, precision at "
            + " / ".join(f"{p:.3f}" for p in s.precision))


def calibration_table(outcomes: Sequence[Outcome], decider: str | None = None) -> list[str]:
    pairs = [(o.item.confidence, o.right) for o in outcomes
             if decider is None or o.item.decided_by == decider]
    lines = ["| confidence | items | share right |", "|---|---|---|"]
    for low, high, n, share in buckets(pairs):
        lines.append(f"| {low:.1f} to {high:.1f} | {n} | {share:.3f} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--holdout", nargs="*", default=list(RELEASES), metavar="RELEASE")
    parser.add_argument("--groups", action="store_true",
                        help="keep the group bullets items stand under (still no headings)")
    parser.add_argument("--user-facing-only", action="store_true",
                        help="train without the rows maintainers marked not user facing "
                             "(as the model was trained before they were used)")
    args = parser.parse_args(argv)
    taxonomy = builtin_taxonomy()
    examples = load_examples(args.data, taxonomy)
    trained_on = [e for e in examples if e.user_facing] if args.user_facing_only else examples
    featurizer = Featurizer(taxonomy)
    results: dict[str, Scores] = {}
    titles: dict[str, Scores] = {}
    every: list[Outcome] = []
    for release in args.holdout:
        classifier = held_out_classifier(trained_on, release, taxonomy, featurizer)
        outcomes = classified(classifier, held_out_notes(examples, release), groups=args.groups)
        if not outcomes:
            print(f"no labelled notes items for release {release}", file=sys.stderr)
            return 1
        results[release] = score(outcomes)
        every.extend(outcomes)
        if rows := commit_titles(examples, release):
            titles[release] = score(classified(classifier, rows))
        print(f"held out {release}: top-1 {results[release].accuracy:.3f}", file=sys.stderr)
    print("\n".join(table(results)) + "\n" + pooled(every))
    print("\nCalibration, every held-out item:\n" + "\n".join(calibration_table(every)))
    for decider in ("rule", "model"):
        print(f"\n... decided by {decider}:\n" + "\n".join(calibration_table(every, decider)))
    if titles:
        print("\nThe same models on each held-out release's commit titles:\n"
              + "\n".join(table(titles)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
