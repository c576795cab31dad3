"""The parser's invariants over every real release-notes file: what must hold for any release,
whatever style its notes are written in (``watcher.notes.invariants``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES, RELEASES

from watcher.notes.classify import Classifier
from watcher.notes.invariants import check_items, placement
from watcher.notes.parse import parse_notes
from watcher.notes.taxonomy import builtin_taxonomy

TAXONOMY = builtin_taxonomy()
CLASSIFIER = Classifier(TAXONOMY)
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "releases"
CORPUS = sorted([*RELEASES.glob("*/*"), *(FIXTURES / "seeds").glob("*.txt")])


def corpus_id(path: Path) -> str:
    return str(path.relative_to(FIXTURES))


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS, ids=corpus_id)
def test_the_invariants_hold(path):
    body = path.read_text(encoding="utf-8")
    notes = parse_notes(body, lookup=TAXONOMY)
    report = check_items(body, notes.items, TAXONOMY)
    assert report.ok, report.problems[:10]


@pytest.mark.parametrize("path", CORPUS, ids=corpus_id)
def test_items_take_what_their_headings_say(path):
    notes = parse_notes(path.read_text(encoding="utf-8"), lookup=TAXONOMY)
    placed = placement(CLASSIFIER.classify_all(notes.items), TAXONOMY)
    assert placed.area_share >= 0.99 and placed.section_share >= 0.99, placed


@pytest.mark.skipif(not SHARED.is_dir(), reason="no ../shared beside this checkout")
def test_every_shared_release_file_is_in_the_fixtures():
    """A notes file added to the project's shared data is checked here too, once copied."""
    for source in SHARED.glob("*/*"):
        copy = RELEASES / source.relative_to(SHARED)
        assert copy.is_file() and copy.read_bytes() == source.read_bytes(), copy


def test_the_checks_catch_a_parser_that_drops_or_merges():
    """The invariants are not vacuous: a lost bullet, a merged pair and a bare heading fail."""
    body = "# Bug fixes\n## Distributed\n- c10d\n  - Fix a (#1)\n  - Fix b (#2)\n- Fix c (#3)\n"
    items = parse_notes(body, lookup=TAXONOMY).items
    assert check_items(body, items, TAXONOMY).ok
    merged = [items[0].model_copy(update={"text": "c10d\n- Fix a (#1)\n- Fix b (#2)",
                                          "prs": (1, 2)}), items[2]]
    problems = " ".join(check_items(body, merged, TAXONOMY).problems)
    assert "holds 2 sibling bullets" in problems
    bare = [*items, items[0].model_copy(update={"text": "Distributed", "prs": ()})]
    assert "only a heading's name" in " ".join(check_items(body, bare, TAXONOMY).problems)
    dropped = items[:2]
    assert "#3 is in no item" in check_items(body, dropped, TAXONOMY).problems


def test_the_checks_catch_bold_titled_entries_glued_or_lost():
    """Issue 20's regression, in the shape of 2.6.0's highlights: the old parser glued the Beta
    write-ups into one item and left the Prototype ones' prose in none; both fail the checks."""
    body = (RELEASES / "pytorch/v2.6.0-highlights-shape.md").read_text(encoding="utf-8")
    items = parse_notes(body, lookup=TAXONOMY).items
    assert check_items(body, items, TAXONOMY).ok
    # Titled by a bold paragraph, not a heading (the first entry is a #### heading).
    titled = [i for i, item in enumerate(items) if item.text.startswith("**[")][1:]
    assert len(titled) >= 4
    first, second = items[titled[0]], items[titled[1]]
    glued = [item for i, item in enumerate(items) if i not in titled[:2]] + [first.model_copy(
        update={"text": f"{first.text}\n\n{second.text}", "prs": first.prs + second.prs})]
    assert any("one item holds 2 titled entries" in problem
               for problem in check_items(body, glued, TAXONOMY).problems)
    lost = [item for i, item in enumerate(items) if i != titled[-1]]
    assert any(problem.startswith("the prose of entry") and "in no item" in problem
               for problem in check_items(body, lost, TAXONOMY).problems)
