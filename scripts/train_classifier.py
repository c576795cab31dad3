"""Trains the subsystem model shipped as ``config/subsystem_model.json``.

Training data is every labelled item in ``shared/data`` (``corpus.py``: the notes' headed items,
the maintainers' worksheets and the 2.7 commit list, one copy of each change), the rows the
maintainers marked "not user facing" included: they are filed under an area like the rest, and
teach the model how commit titles of that area read; so that they do not also teach it that
torch.compile and distributed are even more common than the notes say, an area's not user
facing rows together weigh at most ``NOT_USER_FACING_SHARE`` of its user-facing ones. The model
is a linear SVM (scikit-learn, the ``train`` extra) over the item's distinct
features (``watcher.notes.model.features`` and the text rules that matched), each worth
``1 / sqrt(count)``. Two things are chosen on releases held out of training, never on the
items they are then measured on:

* ``C`` (the SVM's inverse regularisation strength), from ``GRID``: the one whose models,
  trained with each release left out in turn, get the left-out releases' notes right most often;
* the softmax temperature that makes those held-out probabilities honest (``calibrate.py``), and
  how often decisive rules were right on those releases (a rule's verdict's confidence).

The model file also carries each repository's prior (``REPO_PRIORS``): PyTorch/XLA's releases
start from XLA's areas, and never from PyTorch's device back ends unless an item names one.

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
from watcher.notes.model import RepoPrior, SubsystemModel, features
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
# An area's "not user facing" rows together weigh this much of its user-facing rows at most (each
# at most 1). At full weight they cost the held-out notes a point of top-1 and gained commit
# titles six; at 0.3 both gain (scripts/eval_classifier.py, README).
NOT_USER_FACING_SHARE = 0.3

# PyTorch/XLA's own areas, and PyTorch's device back ends. On PyTorch/XLA a device is an XLA
# device (TPU, XLA:GPU, XLA:CPU) behind XLA's runtime, which the contract files under
# xla_runtime; CUDA and cuDNN kernels, ROCm/HIP, Metal, Intel XPU, PyTorch's x86/Arm CPU kernels
# and mobile back ends have no code in it, so an XLA item is in one of them only if it says so
# (a text rule of the area matches: "CUDA 12", "ROCm"). Ruled out rather than penalised: any
# finite penalty still lets such an area win an item the model knows nothing about ("Support
# int as index type" was MPS at p=0.32).
XLA_AREAS = frozenset({"xla_runtime", "spmd", "lazy_tensor"})
TORCH_DEVICE_AREAS = frozenset({"cuda", "rocm", "mps", "xpu", "cpu", "mobile"})
# An XLA area is e**2 (7.4) times as likely as the PyTorch-trained model thinks. The XLA areas
# are under 1 % of the training items but 21 of the 27 area items of PyTorch/XLA 2.0's notes, a
# ratio (about 100) a full correction would apply; but the model learned XLA's words from those
# very items, and from e**3.5 (33) up, items of those notes that name a shared area ("reduce
# graph execution per step", torch.compile's) go to an XLA area although the model was trained
# on them. 2 keeps well below that: an item naming a shared area keeps it, and one naming no
# area mostly goes to an XLA area, unsure.
XLA_FAVOUR = 2.0
REPO_PRIORS = {"pytorch/xla": RepoPrior(XLA_AREAS, XLA_FAVOUR, TORCH_DEVICE_AREAS)}


@dataclass(frozen=True)
class Row:
    """An example as the model sees it: what the classifier passes it at run time."""

    features: tuple[str, ...]
    subsystem: str
    decisive: str | None  # what a decisive rule names when the item stands without a heading
    user_facing: bool = True


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
            rows.append(Row(found, example.subsystem, decisive, example.user_facing))
        return rows


def fit(rows: Sequence[Row], c: float) -> SubsystemModel:
    """A linear SVM (one class against the rest) on ``rows``: as accurate on held-out releases
    as logistic regression and some 20 times faster to fit; its scores become probabilities
    through the calibrated softmax. scikit-learn is imported here only (training time)."""
    from scipy.sparse import csr_matrix
    from sklearn.svm import LinearSVC

    rows = [row for row in rows if row.features]  # an item of code only teaches nothing
    weights = sample_weights(rows)
    rows = [row for row, weight in zip(rows, weights, strict=True) if weight > 0]
    weights = [weight for weight in weights if weight > 0]
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
        matrix, [classes.index(row.subsystem) for row in rows], sample_weight=weights)
    intercept, coef = fitted.intercept_.tolist(), fitted.coef_.tolist()
    if len(classes) == 2:  # one score for the second class: the first one scores its opposite
        intercept, coef = [-intercept[0], intercept[0]], [[-w for w in coef[0]], coef[0]]
    return exported(tuple(classes), intercept, [list(col) for col in zip(*coef, strict=True)],
                    vocabulary)


def sample_weights(rows: Sequence[Row]) -> list[float]:
    """1 for a user-facing row; a not user facing row of an area with ``facing`` user-facing
    and ``hidden`` other rows weighs ``min(1, NOT_USER_FACING_SHARE * facing / hidden)`` (0
    where the area has no user-facing row: nothing says how common it is in the notes)."""
    facing = Counter(row.subsystem for row in rows if row.user_facing)
    hidden = Counter(row.subsystem for row in rows if not row.user_facing)
    return [1.0 if row.user_facing
            else min(1.0, NOT_USER_FACING_SHARE * facing[row.subsystem] / hidden[row.subsystem])
            for row in rows]


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
                    rule_confidence=overall, rule_confidences=per_subsystem,
                    repo_priors=REPO_PRIORS)
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
            "not_user_facing_share": NOT_USER_FACING_SHARE,
            "trained_on": dict(sorted(Counter(
                f"{e.source} {e.release}" + ("" if e.user_facing else " not user facing")
                for e in kept).items()))}
    args.out.write_text(json.dumps(model.to_json(**meta), separators=(",", ":"),
                                   ensure_ascii=False) + "\n", encoding="utf-8")
    size = args.out.stat().st_size / 1e6
    hidden = sum(not e.user_facing for e in kept)
    print(f"{len(kept)} examples ({hidden} not user facing), {len(model.weights)} features, "
          f"{len(model.classes)} "
          f"classes, temperature {model.temperature:g} → {args.out} ({size:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
