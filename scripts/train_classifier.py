"""Trains the subsystem model shipped as ``config/subsystem_model.json``.

Training data is PyTorch's own release-notes labelling (see ``shared/data/README.md``):

* ``labels/commitlist-<X.Y>.csv``: commit titles with the ``release notes: <category>`` label;
* ``labels/worksheets/<X.Y.Z>/done/result_<category>.md``: the maintainers' reviewed bullets,
  grouped by ``### <topic>`` (the topic is the item's kind);
* ``releases/**/v*.md``: the published notes, each item labelled by the area heading above it.

Rows marked ``skip`` or ``not user facing`` are not release-note items and are left out. The
model is multinomial naive Bayes over the item's distinct features
(``watcher.notes.model.features``) with add-alpha smoothing; its output is deterministic:
same data, same bytes.

    python scripts/train_classifier.py [--data ../shared/data] [--out config/subsystem_model.json]
                                       [--exclude 2.8 ...]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import json
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from watcher.models import SUBSYSTEMS, Item
from watcher.notes.classify import Classifier
from watcher.notes.model import SubsystemModel, features
from watcher.notes.parse import parse_notes
from watcher.notes.taxonomy import Taxonomy, builtin_taxonomy, heading_key, top_level
from watcher.resources import subsystems_path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data"
DEFAULT_OUT = ROOT / "config" / "subsystem_model.json"

# PyTorch's `release notes: <category>` labels → contract subsystem ids (shared/data/README.md).
# Categories not listed here name the contract id themselves; None drops the item.
CATEGORIES: dict[str, str | None] = {
    "dynamo": "compile", "inductor": "compile", "torch.compile": "compile",
    "aotdispatcher": "compile", "export": "export", "inductor (aoti)": "export",
    "aoti": "export", "python_frontend": "python_frontend", "complex_frontend": "python_frontend",
    "foreach_frontend": "python_frontend", "serialization": "python_frontend",
    "package": "python_frontend", "indexing": "python_frontend", "nn_frontend": "nn",
    "releng": "build", "build_frontend": "build", "caffe2": "build", "benchmark": "build",
    "dataloader_frontend": "data", "functorch": "autograd", "torch.func": "autograd",
    "autograd_frontend": "autograd", "vulkan": "mobile", "intel": "xpu", "cudnn": "cuda",
    "linalg_frontend": "linalg", "sparse_frontend": "sparse",
    "nested tensor_frontend": "nested_tensor", "optimizer_frontend": "optim",
    "lazy": "lazy_tensor", "context parallel": "distributed", "devicemesh": "distributed",
    "skip": None, "uncategorized": None, "performance_as_product": None, "package/deploy": None,
}

# Worksheet `### <topic>` headings → kinds; "untopiced" items still carry a subsystem.
TOPICS: dict[str, str | None] = {
    "bc breaking": "bc_breaking", "deprecation": "deprecation", "deprecations": "deprecation",
    "new features": "new_feature", "improvements": "improvement", "bug fixes": "bug_fix",
    "performance": "performance", "docs": "docs", "documentation": "docs", "devs": "developers",
    "developers": "developers", "developer": "developers", "security": "security",
    "untopiced": None,
}
DROPPED_TOPICS = ("not user facing", "removed because not released yet")

ALPHA = 0.1
MIN_COUNT = 2
DIGITS = 3


@dataclass(frozen=True)
class Example:
    text: str
    subsystem: str
    kind: str | None
    release: str  # "2.7", "xla-2.0": whole releases are held out together
    source: str  # "commitlist", "worksheet" or "notes"


def category_subsystem(category: str) -> str | None:
    key = category.strip().lower()
    if key in CATEGORIES:
        return CATEGORIES[key]
    if key.startswith("distributed"):
        return "distributed"
    if key.startswith("cpu"):
        return "cpu"
    return key if key in SUBSYSTEMS else None


def _release(name: str) -> str:
    """``v2.7.0.md``, ``2.7.0``, ``commitlist-2.7.csv`` → ``2.7``."""
    match = re.search(r"(\d+)\.(\d+)", name)
    if not match:
        raise ValueError(f"no release number in {name!r}")
    return f"{match.group(1)}.{match.group(2)}"


def commitlist_examples(path: Path) -> Iterator[Example]:
    csv.field_size_limit(sys.maxsize)  # files_changed holds whole file lists
    release = _release(path.name)
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            subsystem = category_subsystem(row["category"])
            if subsystem is None or row["topic"].strip().lower() in DROPPED_TOPICS:
                continue
            kind = TOPICS.get(row["topic"].strip().lower())
            yield Example(row["title"], subsystem, kind, release, "commitlist")


def _topic(section: Sequence[str]) -> tuple[bool, str | None]:
    """(dropped, kind) for a worksheet item standing under ``section``."""
    kind = None
    for heading in section:
        key = heading_key(heading)
        if key.startswith(DROPPED_TOPICS):
            return True, None
        if key in TOPICS:
            kind = TOPICS[key]
    return False, kind


def worksheet_examples(folder: Path) -> Iterator[Example]:
    """Bullets of ``<folder>/done/result_<category>.md``; the category is in the file name."""
    release = _release(folder.name)
    for path in sorted((folder / "done").glob("result_*.md")):
        subsystem = category_subsystem(path.stem.removeprefix("result_"))
        if subsystem is None:
            continue
        # Every heading of a worksheet is structure, never a BC entry's title.
        notes = parse_notes(path.read_text(encoding="utf-8"), is_known_heading=lambda _: True)
        for item in notes.items:
            if len(item.section) < 2:  # the instructions above the category heading
                continue
            dropped, kind = _topic(item.section)
            if not dropped:
                yield Example(item.text, subsystem, kind, release, "worksheet")


def heading_area(taxonomy: Taxonomy, section: Sequence[str]) -> str | None:
    """The top-level id of the first area heading above an item: the notes' own label."""
    for heading in section:
        ids = [i for i in taxonomy.area_ids(heading) if i not in taxonomy.context_only]
        if ids:
            return top_level(ids[0])
    return None


def heading_kind(taxonomy: Taxonomy, section: Sequence[str]) -> str | None:
    for heading in reversed(section):
        if kind := taxonomy.kind_of_heading(heading):
            return kind
    return None


def notes_examples(path: Path, taxonomy: Taxonomy) -> Iterator[Example]:
    """Items of real notes that stand under an area heading, labelled by it."""
    release = _release(path.name)
    if path.parent.name != "pytorch":
        release = f"{path.parent.name}-{release}"
    notes = parse_notes(path.read_bytes().decode("utf-8"),
                        is_known_heading=taxonomy.is_known_heading)
    for item in notes.items:
        area = heading_area(taxonomy, item.section)
        if area is not None:
            yield Example(item.text, area, heading_kind(taxonomy, item.section), release,
                          "notes")


def load_examples(data: Path, taxonomy: Taxonomy | None = None) -> list[Example]:
    """Every labelled item under ``data`` (a ``shared/data`` or ``tests/fixtures`` folder)."""
    taxonomy = taxonomy or builtin_taxonomy()
    labels, releases = data / "labels", data / "releases"
    examples: list[Example] = []
    for path in sorted(labels.glob("commitlist-*.csv")):
        examples.extend(commitlist_examples(path))
    for folder in sorted((labels / "worksheets").glob("*")):
        if (folder / "done").is_dir():
            examples.extend(worksheet_examples(folder))
    for path in sorted(releases.glob("*/v*.md")):
        examples.extend(notes_examples(path, taxonomy))
    return examples


@dataclass(frozen=True)
class Row:
    """An example as the model sees it."""

    features: tuple[str, ...]
    subsystem: str
    release: str


def featurize(examples: Iterable[Example], taxonomy: Taxonomy | None = None) -> list[Row]:
    """What the model sees of each item at run time: its words and which text rules matched
    (``Classifier.model_cues``), computed once, since matching the rules is the slow part."""
    classifier = Classifier(taxonomy or builtin_taxonomy(), model=None)
    rows = []
    for example in examples:
        words = classifier.words(Item(text=example.text))
        found = (*features(words), *classifier.model_cues(words))
        rows.append(Row(found, example.subsystem, example.release))
    return rows


def fit_naive_bayes(rows: Iterable[Row], *, alpha: float = ALPHA, min_count: int = MIN_COUNT,
                    digits: int = DIGITS) -> SubsystemModel:
    """Multinomial naive Bayes over distinct features; features seen fewer than ``min_count``
    times are dropped (they are mostly PR-specific names and would only bloat the file)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    docs: Counter[str] = Counter()
    for row in rows:
        docs[row.subsystem] += 1
        for feature in row.features:
            counts[feature][row.subsystem] += 1
    vocabulary = sorted(f for f, per in counts.items() if sum(per.values()) >= min_count)
    classes = tuple(sorted(docs))
    index = {name: i for i, name in enumerate(classes)}
    totals = Counter[str]()
    for feature in vocabulary:
        totals.update(counts[feature])
    size = len(vocabulary)
    n_docs = sum(docs.values())
    bias = tuple(round(math.log(docs[c] / n_docs), digits) for c in classes)
    unseen = tuple(round(math.log(alpha / (totals[c] + alpha * size)), digits) for c in classes)
    weights = {feature: {index[c]: round(math.log((n + alpha) / alpha), digits)
                         for c, n in sorted(counts[feature].items())}
               for feature in vocabulary}
    return SubsystemModel(classes, bias, unseen, weights)


def fit_temperature(rows: Sequence[Row], *, minimum: int = 100) -> float:
    """The softmax temperature that makes held-out probabilities honest.

    Naive Bayes counts every feature as independent evidence, so its raw probabilities are far
    too sure of themselves. Each release with at least ``minimum`` items is held out in turn and
    predicted by a model trained on the others; the temperature that minimises the log-loss of
    those predictions is kept, so "model (p=0.8)" is right about 80% of the time.
    """
    releases = Counter(row.release for row in rows)
    held: list[tuple[list[float], int]] = []
    for release in sorted(r for r, n in releases.items() if n >= minimum):
        model = fit_naive_bayes(row for row in rows if row.release != release)
        index = {name: i for i, name in enumerate(model.classes)}
        held.extend((model.feature_scores(row.features), index[row.subsystem]) for row in rows
                    if row.release == release and row.subsystem in index)
    if not held:
        return 1.0

    def loss(temperature: float) -> float:
        total = 0.0
        for scores, gold in held:
            scaled = [s / temperature for s in scores]
            top = max(scaled)
            total += top + math.log(sum(math.exp(s - top) for s in scaled)) - scaled[gold]
        return total / len(held)

    grid = [1 + 0.25 * step for step in range(60)]  # 1.0 … 15.75
    return min(grid, key=loss)


def train(examples: Iterable[Example], *, taxonomy: Taxonomy | None = None) -> SubsystemModel:
    """The model as shipped: naive Bayes on every example, temperature from held-out releases."""
    rows = featurize(examples, taxonomy)
    model = fit_naive_bayes(rows)
    return dataclasses.replace(model, temperature=fit_temperature(rows))


def rules_digest() -> str:
    """The model learns from which rules match, so it is tied to the rules it was trained with;
    a test compares this digest with the shipped rules."""
    return hashlib.sha256(subsystems_path().read_bytes()).hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--exclude", nargs="*", default=[], metavar="RELEASE",
                        help="releases to leave out, e.g. 2.8 or xla-2.0")
    args = parser.parse_args(argv)
    examples = [e for e in load_examples(args.data) if e.release not in set(args.exclude)]
    model = train(examples)
    meta = {"rules_sha256": rules_digest(),
            "trained_on": dict(sorted(Counter(f"{e.source} {e.release}"
                                              for e in examples).items()))}
    args.out.write_text(json.dumps(model.to_json(**meta), separators=(",", ":"),
                                   ensure_ascii=False) + "\n", encoding="utf-8")
    size = args.out.stat().st_size / 1e6
    print(f"{len(examples)} examples, {len(model.weights)} features, {len(model.classes)} "
          f"classes, temperature {model.temperature:g} → {args.out} ({size:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
