"""Trains the subsystem model shipped as ``config/subsystem_model.json``.

Training data is every labelled item in ``shared/data`` (``corpus.py``: the notes' headed items,
the maintainers' worksheets and the 2.7 commit list, one copy of each change). The model is
a linear SVM (scikit-learn, the ``train`` extra) over the item's distinct
features (``watcher.notes.model.features`` and the text rules that matched), each worth
``1 / sqrt(count)``. Two things are chosen on releases held out of training, never on the
items they are then measured on:

* ``C`` (the SVM's inverse regularisation strength), from ``GRID``: the one whose models,
  trained with each release left out in turn, get the left-out releases' notes right most often;
* the softmax temperature that makes those held-out probabilities honest (``calibrate.py``), and
  how often decisive rules were right on those releases (a rule's verdict's confidence).

The output is deterministic: same data, same bytes.

    python scripts/train_classifier.py [--data ../shared/data] [--out config/subsystem_model.json]
                                       [--exclude 2.8 ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from calibrate import fit_temperature
from corpus import Example, held_out_notes, load_examples, training_set

from watcher.models import Item
from watcher.notes.classify import Classifier
from watcher.notes.model import SubsystemModel, features
from watcher.notes.taxonomy import Taxonomy, builtin_taxonomy

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data"
DEFAULT_OUT = ROOT / "config" / "subsystem_model.json"
RELEASES = ("2.5", "2.7", "2.8", "2.9", "2.10")  # the releases held out, one at a time
GRID = (0.3, 1.0, 3.0)  # candidate C values, chosen among on held-out releases
MIN_COUNT = 2  # a feature seen in fewer training items is mostly one PR's own name
PRUNE = 0.02  # weights nearer than this to their feature's mean change no decision; dropped
DIGITS = 3
SHRINK = 10  # a subsystem's rules count as this many items right at the overall rate


@dataclass(frozen=True)
class Row:
    """An example as the model sees it: what the classifier passes it at run time."""

    features: tuple[str, ...]
    subsystem: str
    decisive: str | None  # what a decisive rule names when the item stands without a heading


class Featurizer:
    """Features of each text, computed once: matching the rules is the slow part."""

    def __init__(self, taxonomy: Taxonomy | None = None) -> None:
        self.classifier = Classifier(taxonomy or builtin_taxonomy(), model=None)

    @cache  # noqa: B019 - one featurizer per run, texts repeat across held-out folds
    def _row(self, text: str) -> tuple[tuple[str, ...], str | None]:
        words = self.classifier.words(Item(text=text))
        scores = self.classifier.rule_scores(words)
        found = (*features(words), *scores.cues(self.classifier.order))
        return found, self.classifier.decisive(scores)

    def rows(self, examples: Iterable[Example]) -> list[Row]:
        rows = []
        for example in examples:
            found, decisive = self._row(example.text)
            rows.append(Row(found, example.subsystem, decisive))
        return rows


def fit(rows: Sequence[Row], c: float) -> SubsystemModel:
    """A linear SVM (one class against the rest) on ``rows``: as accurate on held-out releases
    as logistic regression and some 20 times faster to fit; its scores become probabilities
    through the calibrated softmax. scikit-learn is imported here only (training time)."""
    from scipy.sparse import csr_matrix
    from sklearn.svm import LinearSVC

    rows = [row for row in rows if row.features]  # an item of code only teaches nothing
    counts = Counter(f for row in rows for f in set(row.features))
    vocabulary = sorted(f for f, n in counts.items() if n >= MIN_COUNT)
    column = {f: i for i, f in enumerate(vocabulary)}
    data, indices, pointers = [], [], [0]
    for row in rows:
        known = sorted({column[f] for f in row.features if f in column})
        indices.extend(known)
        data.extend([1 / math.sqrt(len(row.features))] * len(known))
        pointers.append(len(indices))
    matrix = csr_matrix((data, indices, pointers), shape=(len(rows), len(vocabulary)))
    classes = sorted({row.subsystem for row in rows})
    fitted = LinearSVC(C=c, max_iter=5000, random_state=0).fit(
        matrix, [classes.index(row.subsystem) for row in rows])
    intercept, coef = fitted.intercept_.tolist(), fitted.coef_.tolist()
    if len(classes) == 2:  # one score for the second class: the first one scores its opposite
        intercept, coef = [-intercept[0], intercept[0]], [[-w for w in coef[0]], coef[0]]
    return exported(tuple(classes), intercept, [list(col) for col in zip(*coef, strict=True)],
                    vocabulary)


def exported(classes: tuple[str, ...], intercept: list[float], columns: list[list[float]],
             vocabulary: list[str]) -> SubsystemModel:
    """The shipped form. A softmax does not change when one feature's weights all move by the
    same amount, so each feature's weights are centred on their mean and those near zero are
    dropped: about a tenth of the numbers, the same decisions."""
    if len(classes) == 1:  # scikit-learn fits one class as no model at all
        return SubsystemModel(classes, (0.0,), {})
    weights = {}
    for feature, row in zip(vocabulary, columns, strict=True):
        mean = sum(row) / len(row)
        kept = [(i, round(w - mean, DIGITS)) for i, w in enumerate(row) if abs(w - mean) >= PRUNE]
        if kept:
            weights[feature] = tuple(v for pair in kept for v in pair)
    bias = tuple(round(b, DIGITS) for b in intercept)
    return SubsystemModel(classes, bias, weights)


@dataclass(frozen=True)
class HeldOut:
    """One item of a held-out release's notes, classified from its text alone."""

    release: str
    gold: str
    scores: tuple[float, ...]
    classes: tuple[str, ...]
    decisive: str | None


def cross_predict(examples: Sequence[Example], releases: Sequence[str], c: float,
                  featurizer: Featurizer) -> list[HeldOut]:
    """Each release left out in turn: a model trained on the rest scores its notes' items."""
    found = []
    for release in releases:
        model = fit(featurizer.rows(training_set(examples, release)), c)
        for row in featurizer.rows(held_out_notes(examples, release)):
            found.append(HeldOut(release, row.subsystem,
                                 tuple(model.feature_scores(row.features)), model.classes,
                                 row.decisive))
    return found


def accuracy(held: Sequence[HeldOut]) -> float:
    right = sum(h.classes[max(range(len(h.scores)), key=h.scores.__getitem__)] == h.gold
                for h in held)
    return right / len(held) if held else 0.0


def calibration(held: Sequence[HeldOut]) -> tuple[float, float, dict[str, float]]:
    """The temperature for the model's items; how often decisive rules were right, overall and
    per subsystem they named (shrunk towards the overall figure by ``SHRINK`` items' worth)."""
    temperature = fit_temperature([(h.scores, h.classes.index(h.gold)) for h in held
                                   if not h.decisive and h.gold in h.classes])
    ruled = [(h.decisive, h.decisive == h.gold) for h in held if h.decisive]
    overall = sum(right for _, right in ruled) / len(ruled) if ruled else 0.9
    per: dict[str, list[bool]] = {}
    for named, right in ruled:
        per.setdefault(named, []).append(right)
    confidences = {named: round((sum(rights) + SHRINK * overall) / (len(rights) + SHRINK), 3)
                   for named, rights in sorted(per.items())}
    return temperature, round(overall, 3), confidences


def choose(examples: Sequence[Example], releases: Sequence[str], featurizer: Featurizer,
           grid: Sequence[float] = GRID) -> tuple[float, list[HeldOut]]:
    """The C of ``grid`` whose models get ``releases``' notes right most often, each release
    left out in turn, and those held-out predictions."""
    best: tuple[float, float, list[HeldOut]] | None = None
    for c in grid:
        held = cross_predict(examples, releases, c, featurizer)
        score = accuracy(held)
        if best is None or score > best[0]:
            best = score, c, held
    assert best is not None
    return best[1], best[2]


class Trained(NamedTuple):
    model: SubsystemModel
    c: float  # the SVM's C, chosen on held-out releases


def train(examples: Sequence[Example], *, releases: Sequence[str] = RELEASES,
          featurizer: Featurizer | None = None, grid: Sequence[float] = GRID) -> Trained:
    """The model as shipped. ``examples`` must hold none of the release it will be measured
    on: C, the temperature and the rules' confidence are measured on ``releases`` held out
    in turn, then the model is fitted on everything."""
    featurizer = featurizer or Featurizer()
    present = [r for r in releases if held_out_notes(examples, r) and training_set(examples, r)]
    c, held = choose(examples, present, featurizer, grid)
    temperature, overall, per_subsystem = calibration(held)
    model = replace(fit(featurizer.rows(training_set(examples)), c), temperature=temperature,
                    rule_confidence=overall, rule_confidences=per_subsystem)
    return Trained(model, c)


def rules_digest() -> str:
    """The model learns from which rules match, so it is tied to the rules it was trained with
    (their patterns and weights; heading names are no input of the model); a test compares
    this digest with the shipped rules."""
    rules = sorted((r.subsystem, r.pattern.pattern, r.weight)
                   for r in builtin_taxonomy().text_rules)
    return hashlib.sha256(json.dumps(rules).encode("utf-8")).hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--exclude", nargs="*", default=[], metavar="RELEASE",
                        help="releases to leave out, e.g. 2.8 or xla-2.0")
    args = parser.parse_args(argv)
    examples = [e for e in load_examples(args.data) if e.release not in set(args.exclude)]
    model, c = train(examples)
    kept = training_set(examples)
    meta = {"rules_sha256": rules_digest(), "c": c,
            "trained_on": dict(sorted(Counter(f"{e.source} {e.release}" for e in kept).items()))}
    args.out.write_text(json.dumps(model.to_json(**meta), separators=(",", ":"),
                                   ensure_ascii=False) + "\n", encoding="utf-8")
    size = args.out.stat().st_size / 1e6
    print(f"{len(kept)} examples, {len(model.weights)} features, {len(model.classes)} "
          f"classes, temperature {model.temperature:g} → {args.out} ({size:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
