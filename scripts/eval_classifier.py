"""Measures subsystem classification of items with no headings, on releases held out of training.

For each held-out release the model is trained on every other release (never on random items
of the same release: the same change appears in a release's commit list, worksheets and notes),
then each labelled item of the held-out release is classified from its text alone, three ways:

* ``rules``: the text rules of config/subsystems.toml only ("other" when none matches);
* ``model``: the statistical model only;
* ``combined``: what ``release-watch classify`` does for an item without a deciding heading.

Prints accuracy, macro-F1 and per-subsystem precision/recall/F1, the confusion between the five
most frequent subsystems, and, from the worksheets' ``### <topic>`` sections, how often the kind
rules get an item's kind right.

    python scripts/eval_classifier.py [--data ../shared/data] [--holdout 2.8 ...]
                                      [--model config/subsystem_model.json] [--summary]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_classifier import DEFAULT_DATA, Example, load_examples, train

from watcher.models import Item
from watcher.notes.classify import Classifier
from watcher.notes.model import SubsystemModel, load_model
from watcher.notes.taxonomy import Taxonomy, builtin_taxonomy, top_level

Predict = Callable[[str], str]


@dataclass(frozen=True)
class Scores:
    n: int
    accuracy: float
    macro_f1: float
    per_class: dict[str, tuple[float, float, float, int]]  # precision, recall, F1, support
    pairs: list[tuple[str, str]]  # (gold, predicted)


def score(pairs: list[tuple[str, str]]) -> Scores:
    """Accuracy and macro-F1 over the gold classes (a class never in the gold set does not
    count towards the macro average, though predicting it still costs precision elsewhere)."""
    gold = Counter(g for g, _ in pairs)
    predicted = Counter(p for _, p in pairs)
    hits = Counter(g for g, p in pairs if g == p)
    per_class = {}
    for name in sorted(gold):
        precision = hits[name] / predicted[name] if predicted[name] else 0.0
        recall = hits[name] / gold[name]
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class[name] = (precision, recall, f1, gold[name])
    n = len(pairs)
    macro = sum(f1 for _, _, f1, _ in per_class.values()) / len(per_class) if per_class else 0.0
    return Scores(n, sum(hits.values()) / n if n else 0.0, macro, per_class, pairs)


def predictors(taxonomy: Taxonomy, model: SubsystemModel) -> dict[str, Predict]:
    rules = Classifier(taxonomy, model=None)
    combined = Classifier(taxonomy, model=model)
    return {
        "rules": lambda text: top_level(rules.classify(Item(text=text)).subsystem),
        "model": lambda text: model.predict(*model_input(rules, text)).subsystem,
        "combined": lambda text: top_level(combined.classify(Item(text=text)).subsystem),
    }


def model_input(classifier: Classifier, text: str) -> tuple[str, list[str]]:
    words = classifier.words(Item(text=text))
    return words, classifier.model_cues(words)


def evaluate(examples: Sequence[Example], predict: Predict) -> Scores:
    return score([(e.subsystem, predict(e.text)) for e in examples])


def kind_accuracy(taxonomy: Taxonomy, examples: Sequence[Example]) -> tuple[int, float]:
    """Kinds from text alone, against the worksheets' topic sections."""
    classifier = Classifier(taxonomy, model=None)
    labelled = [e for e in examples if e.kind is not None]
    if not labelled:
        return 0, 0.0
    right = sum(classifier.classify(Item(text=e.text)).kind == e.kind for e in labelled)
    return len(labelled), right / len(labelled)


def confusion(pairs: list[tuple[str, str]], size: int = 5) -> str:
    top = [name for name, _ in Counter(g for g, _ in pairs).most_common(size)]
    counts = Counter(pairs)
    width = max(len(name) for name in top) + 2
    lines = ["gold \\ predicted".ljust(width) + "".join(name[:12].rjust(13) for name in top)
             + "    elsewhere"]
    for gold in top:
        row = [counts[(gold, p)] for p in top]
        rest = sum(n for (g, p), n in counts.items() if g == gold and p not in top)
        lines.append(gold.ljust(width) + "".join(f"{n:13d}" for n in row) + f"{rest:13d}")
    return "\n".join(lines)


def report(title: str, results: dict[str, Scores], per_class: bool) -> None:
    print(f"\n== {title}")
    for mode, result in results.items():
        print(f"  {mode:9} n={result.n:4d}  accuracy {result.accuracy:.3f}  "
              f"macro-F1 {result.macro_f1:.3f}")
    combined = results["combined"]
    if per_class:
        print("  per subsystem (combined): precision recall F1 support")
        for name, (p, r, f1, n) in sorted(combined.per_class.items(), key=lambda kv: -kv[1][3]):
            print(f"    {name:16} {p:6.2f} {r:6.2f} {f1:6.2f} {n:5d}")
    print("  confusion between the five most frequent subsystems (combined):")
    print("    " + confusion(combined.pairs).replace("\n", "\n    "))


def groups(examples: Sequence[Example]) -> dict[str, list[Example]]:
    found: dict[str, list[Example]] = {}
    for example in examples:
        found.setdefault(f"{example.release} {example.source}", []).append(example)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--holdout", nargs="*", default=["2.7", "2.8", "2.9"],
                        metavar="RELEASE", help="releases to hold out one at a time")
    parser.add_argument("--model", type=Path,
                        help="evaluate this model on every labelled set instead (no training)")
    parser.add_argument("--summary", action="store_true",
                        help="accuracy, macro-F1 and confusion only, no per-subsystem table")
    args = parser.parse_args(argv)
    taxonomy = builtin_taxonomy()
    examples = load_examples(args.data, taxonomy)
    if args.model:
        model = load_model(args.model)
        modes = predictors(taxonomy, model)
        for name, group in groups(examples).items():
            report(f"{name} (model {args.model.name})",
                   {mode: evaluate(group, predict) for mode, predict in modes.items()},
                   not args.summary)
        return 0
    for release in args.holdout:
        model = train(e for e in examples if e.release != release)
        modes = predictors(taxonomy, model)
        held = [e for e in examples if e.release == release]
        if not held:
            print(f"no labelled items for release {release}", file=sys.stderr)
            return 1
        for name, group in groups(held).items():
            report(f"{name}, trained without {release}",
                   {mode: evaluate(group, predict) for mode, predict in modes.items()},
                   not args.summary)
            count, accuracy = kind_accuracy(taxonomy, group)
            if count:
                print(f"  kind from text: n={count} accuracy {accuracy:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
