"""Item-level diff: what a reader of an edited release note would call a change."""

from __future__ import annotations

import pytest
from conftest import release_notes

from watcher.notes.analyze import Analyzer, body_hash
from watcher.notes.diff import diff_items
from watcher.notes.taxonomy import builtin_taxonomy

ANALYZER = Analyzer(builtin_taxonomy())


def changes(old: str, new: str) -> list[tuple[str, str, str | None]]:
    return [(c.change, c.item.text, c.old_text)
            for c in diff_items(ANALYZER.items(old), ANALYZER.items(new))]


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("- A (#1)\n- B (#2)\n", "- A (#1)\n- B (#2)\n- C (#3)\n", [("added", "C (#3)", None)]),
    ("- A (#1)\n- B (#2)\n", "- A (#1)\n", [("removed", "B (#2)", None)]),
    ("- Fix A (#1)\n", "- Fix A properly (#1)\n",
     [("changed", "Fix A properly (#1)", "Fix A (#1)")]),
    ("- Fix A (#1)\n", "- Fix A (#1, #7)\n", [("changed", "Fix A (#1, #7)", "Fix A (#1)")]),
    ("- Checkout our newest documnet\n", "- Checkout our newest document\n",
     [("changed", "Checkout our newest document", "Checkout our newest documnet")]),
    ("- Alpha feature\n", "- Completely different words\n",
     [("added", "Completely different words", None), ("removed", "Alpha feature", None)]),
    ("## Bug fixes\n- A (#1)\n## Improvements\n- B (#2)\n",
     "## Improvements\n- B (#2)\n## Bug fixes\n- A (#1)\n", []),
    ("- A (#1)\n- A (#1)\n", "- A (#1)\n", [("removed", "A (#1)", None)]),
    ("- A  (#1)\n", "-   A (#1)   \n", []),
], ids=["added", "removed", "text-edit", "pr-added", "typo-no-pr", "replaced", "moved",
        "duplicate-dropped", "whitespace"])
def test_item_changes(old, new, expected):
    assert changes(old, new) == expected


def test_one_bullet_edited_in_a_real_note():
    old = release_notes("pytorch/v2.8.0.md")
    line = next(line for line in old.split("\n") if line.startswith("- ") and "(#1" in line)
    new = old.replace(line, line.replace("(#1", "for good (#1", 1), 1)
    result = changes(old, new)
    assert len(result) == 1 and result[0][0] == "changed" and "for good" in result[0][1]


def test_crlf_and_trailing_space_do_not_change_the_body_hash():
    body = release_notes("pytorch/v2.7.0.md")
    churned = "\r\n".join(line + " " for line in body.split("\n"))
    assert body_hash(body) == body_hash(churned)
    assert body_hash(body) != body_hash(body.replace("Mega Cache", "Mega  Cache!"))
    assert changes(body, churned) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pytorch/v2.10.0.md", "pytorch/v2.5.0.md"])
def test_editing_one_bullet_under_a_group_is_one_change_of_that_bullet(name):
    """The notes group items under label bullets (``- c10d``); an edit of one of them is that
    item changed, not the whole group."""
    old = release_notes(name).replace("\r\n", "\n")
    grouped = [i for i in ANALYZER.items(old) if i.group and i.prs and "\n" not in i.text]
    target = grouped[len(grouped) // 2]
    edited_text = target.text.replace(" (", " and more (", 1)
    assert old.count(target.text) == 1 and edited_text != target.text
    assert changes(old, old.replace(target.text, edited_text)) == [
        ("changed", edited_text, target.text)]
