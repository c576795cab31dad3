"""The statistical subsystem model: features of an item's words, and a shipped linear model.

The model guesses a top-level subsystem for items that no heading decides and no decisive rule
names. It is trained offline by ``scripts/train_classifier.py`` (a linear SVM, with scikit-learn)
on PyTorch's own release-notes labels and shipped as ``config/subsystem_model.json``; here it is
only loaded and applied, in pure Python. An item is the set of its distinct features (words, word
pairs, namespaces, identifier parts, and which text rules matched), each worth ``1 / sqrt(count)``
(an L2-normalised binary vector), so a class scores ``bias[c] + sum(weights[f][c]) /
sqrt(count)``; features the shipped file left out (too rare, or near zero for every class) count
towards ``count`` but add nothing.

Probabilities are the softmax of the scores divided by ``temperature``, fitted on releases held
out of training (``scripts/calibrate.py``), so that "p=0.9" is right about nine times in ten on
a release the model never saw.

The model learns from PyTorch's own labels, so its sense of how common each area is is
PyTorch's. A release of another repository starts from that repository's prior (``RepoPrior``,
stored with the model): PyTorch/XLA's own areas are favoured, and areas it has no part in
(PyTorch's device back ends) are ruled out unless the item names them.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from watcher.errors import ConfigError
from watcher.notes.text import strip_code
from watcher.resources import defaults_dir

FORMAT = 3  # 3: each feature's weights one string, decoded when the feature is looked up

# Bounded repeats keep every pattern linear in the item's length, whatever its brackets.
_LINK = re.compile(r"\[([^\[\]\n]{0,300})\]\([^)\s]{0,500}\)")
_URL = re.compile(r"https?://\S{1,500}")
_PR = re.compile(r"#\d+")
# A dotted identifier (torch.distributed.checkpoint), a C++ path (torch::lazy::Shape) or a word.
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*|\d+(?:\.\d+)*")
_SEPARATOR = re.compile(r"\.|::")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP = frozenset([
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with", "when",
    "we", "our", "now", "can", "has", "have", "been", "which", "also",
    # Verbs that say what kind of change an item is, not where: every area adds and fixes.
    "add", "added", "adds", "adding", "fix", "fixed", "fixes", "fixing", "support", "supported",
    "supports", "improve", "improved", "improves", "enable", "enabled", "update", "updated",
    "make", "made", "use", "used", "allow", "allowed", "remove", "removed",
])


def _pieces(word: str) -> list[str]:
    """``scaled_dot_product_attention`` → its parts; ``XLAGraphExecutor`` → xla, graph, executor."""
    if word.isalpha() and (word.islower() or word.isupper()):
        return []  # one piece: the word itself
    parts = [p for p in word.split("_") if p]
    out: list[str] = []
    for part in parts:
        out.extend(piece.lower() for piece in _CAMEL.findall(part))
    return out if len(out) > 1 else []


def _prose(text: str) -> str:
    text = strip_code(text, " ")
    # Each pattern only where its literal is: asked of every item the model reads.
    if "](" in text:
        text = _LINK.sub(r"\1", text)
    if "://" in text:
        text = _URL.sub(" ", text)
    return _PR.sub(" ", text) if "#" in text else text


def features(text: str) -> list[str]:
    """The distinct features of an item's prose (code, links' targets and PR numbers left
    out): words, word bigrams, identifier parts, and every namespace prefix of a dotted name
    (``torch.distributed.checkpoint`` also gives ``ns:torch.distributed``), so a new function
    in a known module still points at its area."""
    return word_features(_prose(text))


def word_features(prose: str) -> list[str]:
    found: dict[str, None] = {}
    words: list[str] = []
    for match in _WORD.finditer(prose):
        token = match.group(0)
        if token[0].isdigit():
            if len(token) < 4 or "." in token:  # versions like 3.13 or 12.8, not PR numbers
                words.append(token)
            continue
        names = _SEPARATOR.split(token) if "." in token or ":" in token else [token]
        if len(names) > 1:
            lowered = [n.lower() for n in names]
            for end in range(2, len(lowered) + 1):
                found.setdefault("ns:" + ".".join(lowered[:end]))
            for name in names:
                found.setdefault(name.lower())
                for piece in _pieces(name):
                    found.setdefault(piece)
            words.append(lowered[-1])
            continue
        lower = token.lower()
        for piece in _pieces(token):
            found.setdefault(piece)
        words.append(lower)
    kept = [w for w in words if w not in _STOP]
    for word in kept:
        found.setdefault(word)
    for first, second in itertools.pairwise(kept):
        found.setdefault(f"{first} {second}")
    return list(found)


RANKED = 5  # classes a prediction lists beside its best, most likely first


@dataclass(frozen=True)
class Prediction:
    subsystem: str
    probability: float
    ranked: tuple[tuple[str, float], ...] = ()  # the likeliest ``RANKED`` classes


Row = tuple[float, ...]  # class index, weight, class index, weight, …: compact and fast to load


class EncodedRows(Mapping[str, Row]):
    """The shipped weights, each feature's row kept as the file writes it (``"0 0.093 5 0.383"``)
    and decoded the first time the feature is looked up. Decoding all ~6,000 rows at load took
    most of the 35 ms a process paid for the model, and a classify reads a few hundred."""

    def __init__(self, encoded: Mapping[str, str], classes: int) -> None:
        self._encoded = encoded
        self._classes = classes
        self._decoded: dict[str, Row] = {}

    def __getitem__(self, feature: str) -> Row:
        row = self._decoded.get(feature)
        if row is None:
            row = self._decoded[feature] = decode_row(self._encoded[feature], self._classes)
        return row

    def get(self, feature: str, default: Row | None = None) -> Row | None:  # type: ignore[override]
        return self[feature] if feature in self._encoded else default

    def __contains__(self, feature: object) -> bool:
        return feature in self._encoded

    def __iter__(self) -> Iterator[str]:
        return iter(self._encoded)

    def __len__(self) -> int:
        return len(self._encoded)


def encode_row(row: Row) -> str:
    """``(0, 0.093, 5, 0.383)`` → ``"0 0.093 5 0.383"``: ``repr`` gives back the same float."""
    return " ".join(str(int(v)) if at % 2 == 0 else repr(float(v)) for at, v in enumerate(row))


def decode_row(text: str, classes: int) -> Row:
    values = text.split()
    row = tuple(int(v) if at % 2 == 0 else float(v) for at, v in enumerate(values))
    if len(values) % 2 or any(not 0 <= i < classes for i in row[::2]):
        raise ConfigError(f"the subsystem model's weights {text[:60]!r} name a class it does "
                          "not have")
    return row
RULE_CUE = "rule:"  # the classifier's feature for "a text rule of this area matched the item"


@dataclass(frozen=True)
class RepoPrior:
    """How a repository's releases differ from PyTorch's before an item is read: ``favour``
    is added to the log-probability of the ``favoured`` areas (e**favour times as likely), and
    an area of ``unless_named`` is impossible unless one of its text rules matches the item (it
    names the area: "CUDA", "Metal", "ROCm")."""

    favoured: frozenset[str] = frozenset()
    favour: float = 0.0
    unless_named: frozenset[str] = frozenset()

    def log_odds(self, classes: Sequence[str], found: Sequence[str]) -> list[float | None]:
        """Per class what the prior adds to its log-probability; None rules it out."""
        named = {f[len(RULE_CUE):] for f in found if f.startswith(RULE_CUE)}
        return [None if c in self.unless_named and c not in named
                else self.favour if c in self.favoured else 0.0 for c in classes]

    def to_json(self) -> dict[str, Any]:
        return {"favoured": sorted(self.favoured), "favour": self.favour,
                "unless_named": sorted(self.unless_named)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RepoPrior:
        return cls(frozenset(data["favoured"]), float(data["favour"]),
                   frozenset(data["unless_named"]))


def _softmax(scaled: Sequence[float], odds: Sequence[float | None] | None) -> list[float]:
    """Probabilities of ``scaled`` scores, moved by a prior's log-odds (0 where ruled out)."""
    if odds is not None and any(o is not None for o in odds):
        logits = [-math.inf if o is None else s + o for s, o in zip(scaled, odds, strict=True)]
    else:
        logits = list(scaled)
    top = max(logits)  # finite: a prior that ruled out every class is no prior
    exps = [math.exp(s - top) for s in logits]  # exp(-inf) is 0
    total = sum(exps)
    return [e / total for e in exps]


@dataclass(frozen=True)
class SubsystemModel:
    classes: tuple[str, ...]
    bias: tuple[float, ...]
    weights: Mapping[str, Row]
    temperature: float = 1.0
    # How often decisive rules were right on held-out releases: all of them, and per subsystem
    # named (shrunk towards the first where it named few items).
    rule_confidence: float = 0.9
    rule_confidences: Mapping[str, float] = field(default_factory=dict)
    repo_priors: Mapping[str, RepoPrior] = field(default_factory=dict)  # by lower-case owner/name

    def rule_sureness(self, subsystem: str) -> float:
        return self.rule_confidences.get(subsystem, self.rule_confidence)

    def prior(self, repo: str | None) -> RepoPrior | None:
        """``repo``'s prior; None (PyTorch's, as trained) for a repository without one."""
        return self.repo_priors.get(repo.lower()) if repo else None

    def scores(self, text: str, extra: Sequence[str] = ()) -> list[float]:
        """``extra`` are features from outside the text: the classifier passes which text
        rules matched (``rule:nn``), so the model learns how far to trust each rule."""
        return self.feature_scores([*features(text), *extra])

    def feature_scores(self, found: Sequence[str]) -> list[float]:
        totals = [0.0] * len(self.classes)
        for feature in found:
            row = self.weights.get(feature)
            if row is not None:
                for at in range(0, len(row), 2):
                    totals[int(row[at])] += row[at + 1]
        scale = 1 / math.sqrt(len(found)) if found else 0.0
        return [bias + total * scale for bias, total in zip(self.bias, totals, strict=True)]

    def calibrated(self, scores: Sequence[float], prior: RepoPrior | None = None,
                   found: Sequence[str] = ()) -> list[tuple[str, float]]:
        """Every class with its probability, most likely first; ``found`` (the item's
        features) tells ``prior`` which areas the item names."""
        return sorted(zip(self.classes, self._probabilities(scores, prior, found), strict=True),
                      key=lambda pair: -pair[1])

    def _probabilities(self, scores: Sequence[float], prior: RepoPrior | None,
                       found: Sequence[str]) -> list[float]:
        odds = prior.log_odds(self.classes, found) if prior is not None else None
        return _softmax([s / self.temperature for s in scores], odds)

    def probabilities(self, text: str, extra: Sequence[str] = (),
                      prior: RepoPrior | None = None) -> list[tuple[str, float]]:
        found = [*features(text), *extra]
        return self.calibrated(self.feature_scores(found), prior, found)

    def predict(self, text: str, extra: Sequence[str] = (),
                prior: RepoPrior | None = None) -> Prediction:
        return self.predict_features([*features(text), *extra], prior)

    def predict_features(self, found: Sequence[str],
                         prior: RepoPrior | None = None) -> Prediction:
        """``calibrated``'s first class without sorting them all (asked once per item)."""
        probabilities = self._probabilities(self.feature_scores(found), prior, found)
        best = max(range(len(probabilities)), key=probabilities.__getitem__)  # first of ties
        order = sorted(range(len(probabilities)), key=lambda c: -probabilities[c])[:RANKED]
        return Prediction(self.classes[best], probabilities[best],
                          tuple((self.classes[c], probabilities[c]) for c in order))

    def to_json(self, **meta: Any) -> dict[str, Any]:
        """The shipped form: features sorted, so retraining on the same data gives the same
        bytes."""
        return {
            "format": FORMAT, **meta, "classes": list(self.classes), "bias": list(self.bias),
            "temperature": self.temperature, "rule_confidence": self.rule_confidence,
            "rule_confidences": dict(sorted(self.rule_confidences.items())),
            "repo_priors": {repo: prior.to_json()
                            for repo, prior in sorted(self.repo_priors.items())},
            "weights": {feature: encode_row(row) for feature, row in sorted(self.weights.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SubsystemModel:
        if data.get("format") != FORMAT:
            raise ValueError(f"model format {data.get('format')!r} is not {FORMAT}")
        classes = tuple(data["classes"])
        encoded = data["weights"]
        if not all(isinstance(row, str) for row in encoded.values()):
            raise ValueError("a feature's weights are not one string")
        weights = EncodedRows(encoded, len(classes))
        priors = {repo.lower(): RepoPrior.from_json(prior)
                  for repo, prior in data.get("repo_priors", {}).items()}
        return cls(classes, tuple(map(float, data["bias"])), weights,
                   float(data["temperature"]), float(data["rule_confidence"]),
                   {name: float(p) for name, p in data["rule_confidences"].items()}, priors)


def model_path() -> Path:
    return defaults_dir() / "subsystem_model.json"


def load_model(path: Path) -> SubsystemModel:
    try:
        return SubsystemModel.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"cannot load the subsystem model {path}: {error}") from None


@cache
def builtin_model() -> SubsystemModel:
    """The shipped model, loaded once on first use (not at import)."""
    return load_model(model_path())


def top_features(model: SubsystemModel, found: Sequence[str], subsystem: str,
                 count: int = 3) -> list[str]:
    """Which of an item's features pull hardest towards ``subsystem``, for explanations."""
    index = model.classes.index(subsystem)
    pulls = []
    for feature in found:
        row = model.weights.get(feature)
        if row:
            weights = dict(zip(row[::2], row[1::2], strict=True))
            mean = sum(weights.values()) / len(model.classes)
            pulls.append((weights.get(index, 0.0) - mean, feature))
    return [f for pull, f in sorted(pulls, reverse=True)[:count] if pull > 0]
