"""The release-notes parser, on every heading style found in the real notes."""

from __future__ import annotations

import pytest
from conftest import release_notes

from watcher.notes.parse import find_prs, parse_notes
from watcher.notes.taxonomy import builtin_taxonomy

KNOWN = builtin_taxonomy().is_known_heading


def parse(text: str):
    return parse_notes(text, is_known_heading=KNOWN).items


@pytest.mark.parametrize(("text", "prs"), [
    ("Fix a thing (#123)", (123,)),
    ("Fix things (#1, #2, #3)", (1, 2, 3)),
    ("Fix [#123](https://github.com/pytorch/pytorch/pull/123)", (123,)),
    ("See https://github.com/pytorch/xla/pull/4181 for details", (4181,)),
    ("Fix cuda/cpu check #88854 and #88970", (88854, 88970)),
    ("Jump to [Highlights](#highlights)", ()),
    ("HTML entity &#123; is not a PR", ()),
    ("Code sample:\n```python\nx = 1  # see #999\n```\nreal ref (#5)", (5,)),
], ids=["paren", "paren-list", "md-link", "url", "bare", "anchor", "entity", "code-block"])
def test_pr_references(text, prs):
    assert find_prs(text) == prs


def test_h1_sections_h2_areas_h4_subareas():
    items = parse("# New Features\n## torch.compile\n#### Dynamo\n- Support X (#1)\n"
                  "#### Inductor\n- Support Y (#2)\n## Distributed\n- Z (#3)\n")
    assert [(i.section, i.prs) for i in items] == [
        (("New Features", "torch.compile", "Dynamo"), (1,)),
        (("New Features", "torch.compile", "Inductor"), (2,)),
        (("New Features", "Distributed"), (3,))]


def test_bold_section_headings_are_plain_text_in_the_path():
    items = parse("## **Bug fixes**\n### **torch.nn**\n- Fix conv (#9)\n")
    assert items[0].section == ("Bug fixes", "torch.nn")


def test_bc_entry_is_one_item_and_code_comments_are_not_headings():
    text = ("# Backwards Incompatible Changes\n\n### Change `f()` default (#7)\n\nProse here.\n\n"
            "```python\n# this is a comment, not a heading\nf()\n```\n\n"
            "### Another entry (#8)\nMore prose.\n# Deprecations\n- Deprecate g (#9)\n")
    items = parse(text)
    assert [i.section for i in items] == [("Backwards Incompatible Changes",)] * 2 + [
        ("Deprecations",)]
    assert items[0].text.startswith("Change `f()` default (#7)\n\nProse here.")
    assert "# this is a comment, not a heading" in items[0].text
    assert items[0].prs == (7,) and items[1].prs == (8,)


def test_nested_bullets_stay_with_their_parent():
    items = parse("## Improvements & Additions\n- Op Lowering\n  - _linalg_svd (#4537)\n"
                  "  - Upsample (#4464)\n- Other (#1)\n")
    assert len(items) == 2
    assert items[0].text == "Op Lowering\n- _linalg_svd (#4537)\n- Upsample (#4464)"
    assert items[0].prs == (4537, 4464)


def test_table_of_contents_is_not_an_item():
    items = parse("# PyTorch 2.7.0 Release Notes\n- [Highlights](#highlights)\n"
                  "- [Bug fixes](#bug-fixes)\n# Bug fixes\n- Fix (#1)\n")
    assert [i.text for i in items] == ["Fix (#1)"]


def test_html_highlight_table_cells_become_items_under_their_column():
    text = ("# Highlights\n<table>\n<tr><td><strong>Beta</strong></td><td><strong>Prototype"
            "</strong></td></tr>\n<tr><td>Mega Cache</td><td>Context Parallel</td></tr>\n"
            "<tr><td></td><td>Foreach Map</td></tr>\n</table>\n")
    items = parse(text)
    assert [(i.section, i.text) for i in items] == [
        (("Highlights", "Beta"), "Mega Cache"), (("Highlights", "Prototype"), "Context Parallel"),
        (("Highlights", "Prototype"), "Foreach Map")]


def test_crlf_flat_patch_release_list():
    notes = parse_notes(release_notes("pytorch/v1.13.1.md"), is_known_heading=KNOWN)
    assert len(notes.items) == 12
    assert all("\r" not in item.text for item in notes.items)
    assert notes.items[0].lead.startswith("This release is meant to fix the following issues")
    assert notes.items[8].prs == (88854, 88970)


@pytest.mark.parametrize(("name", "count"), [
    ("pytorch/v1.13.1.md", 12), ("pytorch/v2.7.0.md", 600), ("pytorch/v2.8.0.md", 385),
    ("xla/v2.0.0.md", 41)])
def test_real_notes_item_counts(name, count):
    # v2.7.0, counted with grep: 567 "- " and 23 "* " bullets, less 9 table-of-contents links
    # and 2 bullets inside the verify_onnx_program entry (579), plus 10 highlight cells and
    # 11 heading entries with prose (8 BC-breaking, 2 deprecations, 1 ONNX `####`; the Triton
    # `###` groups bullets instead).
    assert len(parse(release_notes(name))) == count


def test_unindented_line_after_a_bullet_introduces_the_next_bullets():
    items = parse("## Inductor\n* `addmv` (#143792)\nNew meta tensor implementations:\n"
                  "* `nonzero` (#144727)\n")
    assert [i.text for i in items] == ["`addmv` (#143792)", "`nonzero` (#144727)"]
    assert items[1].lead == "New meta tensor implementations:"


def test_xla_style_sections_and_areas():
    items = parse(release_notes("xla/v2.0.0.md"))
    sections = {i.section for i in items}
    assert ("Beta Features", "PJRT runtime") in sections
    assert ("Experimental Features", "PyTorch/XLA GSPMD on single host") in sections
    assert ("Bug fixes & improvements",) in sections


def test_every_v27_bullet_is_an_item_exactly_once():
    body = release_notes("pytorch/v2.7.0.md")
    items = parse(body)
    texts = [i.text for i in items]
    bullets = [line[2:].strip() for line in body.split("\n")
               if line.startswith("- ") and not line.startswith("- [")]
    in_items = [b for b in bullets if any(t == b or t.startswith(b) or b in t for t in texts)]
    assert len(in_items) == len(bullets)


def test_truncation_at_a_line_boundary():
    body = "".join(f"- item {n} (#{n})\n" for n in range(1, 1000))
    notes = parse_notes(body, max_chars=2000)
    assert notes.truncated
    assert all(item.text.startswith("item ") and item.text.endswith(")") for item in notes.items)
    assert 100 < len(notes.items) < 200


@pytest.mark.parametrize("body", [None, "", "   \n\n", "no list, just prose"])
def test_empty_or_itemless_bodies(body):
    assert parse_notes(body).items == []
