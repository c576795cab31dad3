"""The labelled corpus: every item a maintainer has filed under a subsystem, one ``Example`` each.

Sources (``shared/data/README.md``; a fresh clone has the copies in ``tests/fixtures``):

* ``releases/**/v*.md``: the published notes, each item labelled by the first area heading above
  it that owns an area (a topic-only heading such as "Dynamic Shapes" does not);
* ``labels/worksheets/<X.Y.Z>/done/result_<category>.md``: the maintainers' reviewed bullets,
  the category in the file name, the kind in the ``### <topic>`` above each bullet;
* ``labels/commitlist-<X.Y>.csv``: commit titles with their ``release notes: <category>`` label.

Rows marked ``skip`` (no category) name no subsystem and are left out. Rows marked ``not user
facing`` are no release-note items either, but are still filed under their category (the
worksheet's file, the commit's ``release notes:`` label): they are kept as training text with
no kind (``Example.user_facing`` is false), and are never what a held-out release is measured
on (only its notes are). The same
change is often in a release's commit list, its worksheet and its notes: ``dedupe`` keeps one
copy (the notes' first, as published), matched by PR number or by normalised text, and
``training_set`` also drops every copy of a held-out release's items from the other releases.
"""

from __future__ import annotations

import csv
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from watcher.models import SUBSYSTEMS
from watcher.notes.parse import parse_notes
from watcher.notes.taxonomy import Taxonomy, builtin_taxonomy, heading_key
from watcher.notes.text import find_prs, strip_code

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
    "linalg_frontend": "linalg", "sparse_frontend": "sparse", "amd": "rocm",
    "nested tensor_frontend": "nested_tensor", "optimizer_frontend": "optim",
    "lazy": "lazy_tensor", "context parallel": "distributed", "devicemesh": "distributed",
    "skip": None, "uncategorized": None, "performance_as_product": None, "package/deploy": None,
    "devx": None, "visualization": None,
}

# Worksheet `### <topic>` headings → kinds; "untopiced" items still carry a subsystem.
TOPICS: dict[str, str | None] = {
    "bc breaking": "bc_breaking", "deprecation": "deprecation", "deprecations": "deprecation",
    "new features": "new_feature", "improvements": "improvement", "bug fixes": "bug_fix",
    "performance": "performance", "docs": "docs", "documentation": "docs", "devs": "developers",
    "developers": "developers", "developer": "developers", "security": "security",
    "untopiced": None,
}
DROPPED_TOPICS = ("removed because not released yet",)
# Commits a maintainer filed under a category but kept out of the notes ("not user facing",
# 2.7's "not user facing cleanup"): their titles still say which area owns them, and training
# on them too makes the model read commit-title text better.
NOT_USER_FACING = "not user facing"
SOURCES = ("notes", "worksheet", "commitlist")  # dedupe keeps the first source's copy

_PR_LINK = re.compile(r"/pull/(\d+)")
_NOT_WORD = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Example:
    text: str
    subsystem: str  # top-level contract id
    kind: str | None
    release: str  # "2.7", "xla-2.0": whole releases are held out together
    source: str  # one of SOURCES
    prs: tuple[int, ...] = ()
    groups: tuple[str, ...] = ()  # the group bullets it stands under in its list ("c10d")
    user_facing: bool = True  # False: a "not user facing" row, training text only

    @property
    def key(self) -> str:
        """The text as a duplicate of it would read: code, PR refs, case, punctuation gone."""
        return _NOT_WORD.sub(" ", strip_code(self.text, " ").lower()).strip()


def category_subsystem(category: str) -> str | None:
    key = category.strip().lower()
    if key in CATEGORIES:
        return CATEGORIES[key]
    if key.startswith("distributed"):
        return "distributed"
    if key.startswith("cpu"):
        return "cpu"
    return key if key in SUBSYSTEMS else None


def release_of(name: str) -> str:
    """``v2.7.0.md``, ``2.7.0``, ``commitlist-2.7.csv`` → ``2.7``."""
    match = re.search(r"(\d+)\.(\d+)", name)
    if not match:
        raise ValueError(f"no release number in {name!r}")
    return f"{match.group(1)}.{match.group(2)}"


def commitlist_examples(path: Path, *, not_user_facing: bool = True) -> Iterator[Example]:
    csv.field_size_limit(sys.maxsize)  # files_changed holds whole file lists
    release = release_of(path.name)
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            subsystem = category_subsystem(row["category"])
            topic = row["topic"].strip().lower()
            facing = not topic.startswith(NOT_USER_FACING)
            if subsystem is None or topic in DROPPED_TOPICS or not (facing or not_user_facing):
                continue
            prs = tuple(int(n) for n in _PR_LINK.findall(row.get("pr_link") or ""))
            yield Example(row["title"], subsystem, TOPICS.get(topic), release, "commitlist",
                          prs or tuple(find_prs(row["title"])), user_facing=facing)


def _topic(section: Sequence[str]) -> tuple[bool, str | None, bool]:
    """(dropped, kind, user facing) for a worksheet item standing under ``section``."""
    kind = None
    for heading in section:
        key = heading_key(heading)
        if key.startswith(DROPPED_TOPICS):
            return True, None, False
        if key.startswith(NOT_USER_FACING):
            return False, None, False
        if key in TOPICS:
            kind = TOPICS[key]
    return False, kind, True


def worksheet_examples(folder: Path, *, not_user_facing: bool = True) -> Iterator[Example]:
    """Bullets of ``<folder>/done/result_<category>.md``; the category is in the file name."""
    release = release_of(folder.name)
    for path in sorted((folder / "done").glob("result_*.md")):
        subsystem = category_subsystem(path.stem.removeprefix("result_"))
        if subsystem is None:
            continue
        # Every heading of a worksheet is structure, never a BC entry's title.
        for item in parse_notes(path.read_text(encoding="utf-8")).items:
            if len(item.section) < 2:  # the instructions above the category heading
                continue
            dropped, kind, facing = _topic(item.section)
            if not dropped and (facing or not_user_facing):
                yield Example(item.text, subsystem, kind, release, "worksheet", item.prs,
                              user_facing=facing)


def heading_kind(taxonomy: Taxonomy, section: Sequence[str]) -> str | None:
    for heading in reversed(section):
        if kind := taxonomy.kind_of_heading(heading):
            return kind
    return None


def notes_examples(path: Path, taxonomy: Taxonomy) -> Iterator[Example]:
    """Items of real notes that stand under an area heading, labelled by it."""
    release = release_of(path.name)
    if path.parent.name != "pytorch":
        release = f"{path.parent.name}-{release}"
    notes = parse_notes(path.read_bytes().decode("utf-8"), lookup=taxonomy)
    for item in notes.items:
        area = taxonomy.heading_area(item.section)
        if area is not None:
            groups = item.section[len(item.section) - item.group_depth:]
            yield Example(item.text, area, heading_kind(taxonomy, item.section), release,
                          "notes", item.prs, groups)


def load_examples(data: Path, taxonomy: Taxonomy | None = None, *,
                  not_user_facing: bool = True) -> list[Example]:
    """Every labelled item under ``data`` (a ``shared/data`` or ``tests/fixtures`` folder), in
    a fixed order, duplicates included; ``not_user_facing=False`` leaves out the rows
    maintainers kept out of the notes (how the model was trained before they were used)."""
    taxonomy = taxonomy or builtin_taxonomy()
    labels, releases = data / "labels", data / "releases"
    examples: list[Example] = []
    for path in sorted(releases.glob("*/v*.md")):
        examples.extend(notes_examples(path, taxonomy))
    for folder in sorted((labels / "worksheets").glob("*")):
        if (folder / "done").is_dir():
            examples.extend(worksheet_examples(folder, not_user_facing=not_user_facing))
    for path in sorted(labels.glob("commitlist-*.csv")):
        examples.extend(commitlist_examples(path, not_user_facing=not_user_facing))
    return examples


class Seen:
    """PR numbers and normalised texts met so far."""

    def __init__(self, examples: Iterable[Example] = ()) -> None:
        self.prs: set[int] = set()
        self.keys: set[str] = set()
        for example in examples:
            self.add(example)

    def add(self, example: Example) -> None:
        self.prs.update(example.prs)
        self.keys.add(example.key)

    def __contains__(self, example: Example) -> bool:
        return example.key in self.keys or any(pr in self.prs for pr in example.prs)


def dedupe(examples: Iterable[Example], exclude: Seen | None = None) -> list[Example]:
    """One copy of each change (notes before worksheets before commit lists), none in
    ``exclude``."""
    ranked = sorted(examples, key=lambda e: SOURCES.index(e.source))  # stable: file order kept
    seen = Seen()
    kept = []
    for example in ranked:
        if example in seen or (exclude is not None and example in exclude):
            continue
        seen.add(example)
        kept.append(example)
    return kept


def held_out_notes(examples: Sequence[Example], release: str) -> list[Example]:
    """What a user meets of ``release``: its notes' items (headings are stripped later)."""
    return [e for e in examples if e.release == release and e.source == "notes"]


def training_set(examples: Sequence[Example], release: str | None = None) -> list[Example]:
    """Everything but ``release``: none of its notes, worksheets or commit list, and no copy in
    another release of an item of its notes."""
    if release is None:
        return dedupe(examples)
    held = Seen(e for e in examples if e.release == release)
    return dedupe((e for e in examples if e.release != release), exclude=held)
