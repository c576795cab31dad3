"""The release-notes parser, on every heading style found in the real notes."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, release_notes

from watcher.notes.parse import parse_notes
from watcher.notes.taxonomy import builtin_taxonomy
from watcher.notes.text import find_prs

KNOWN = builtin_taxonomy()


def parse(text: str):
    return parse_notes(text, lookup=KNOWN).items


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


@pytest.mark.parametrize(("text", "expected"), [
    ("## Distributed\n- c10d\n  - Fix a (#1)\n  - Fix b (#2)\n- Other (#3)\n",
     [("Fix a (#1)", ("Distributed", "c10d"), "c10d"),
      ("Fix b (#2)", ("Distributed", "c10d"), "c10d"), ("Other (#3)", ("Distributed",), "")]),
    ("## Improvements & Additions\n- Op Lowering\n  - _linalg_svd (#4537)\n"
     "  - Upsample (#4464)\n",
     [("_linalg_svd (#4537)", ("Improvements & Additions", "Op Lowering"), "Op Lowering"),
      ("Upsample (#4464)", ("Improvements & Additions", "Op Lowering"), "Op Lowering")]),
    ("## Dynamo\n- **Tracing support**:\n  - `list`s (#1)\n  - `set`s (#2)\n",
     [("`list`s (#1)", ("Dynamo", "Tracing support"), "Tracing support"),
      ("`set`s (#2)", ("Dynamo", "Tracing support"), "Tracing support")]),
    ("## X\n- Dynamic shapes\n  - Fixes to decompositions:\n    - rot90 (#1)\n"
     "    - exp (#2)\n  - Faster guards (#3)\n",
     [("rot90 (#1)", ("X", "Dynamic shapes", "Fixes to decompositions"),
       "Fixes to decompositions"),
      ("exp (#2)", ("X", "Dynamic shapes", "Fixes to decompositions"),
       "Fixes to decompositions"),
      ("Faster guards (#3)", ("X", "Dynamic shapes"), "Dynamic shapes")]),
], ids=["c10d", "xla-op-lowering", "bold-label-colon", "nested-groups"])
def test_a_group_bullet_splits_into_its_nested_items(text, expected):
    assert [(i.text, i.section, i.group) for i in parse(text)] == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("## Distributed\n- Remove X (#1)\n  - We released Y in 2.0.\n  - Before:\n"
     "  ```py\n  # a comment, not a heading\n  x = 1\n  ```\n",
     "Remove X (#1)\n- We released Y in 2.0.\n- Before:\n```py\n# a comment, not a heading\n"
     "x = 1\n```"),
    ("## Distributed\n- LocalTensor:\n  - LocalTensor is a debugging tool.\n"
     "  - It simulates ranks.\n  - PRs: ([#1](https://github.com/o/r/pull/1), #2)\n",
     "LocalTensor:\n- LocalTensor is a debugging tool.\n- It simulates ranks.\n"
     "- PRs: ([#1](https://github.com/o/r/pull/1), #2)"),
], ids=["own-reference-keeps-explanation", "prs-only-child"])
def test_a_bullet_with_its_explanation_is_one_item(text, expected):
    assert [i.text for i in parse(text)] == [expected]


def test_a_short_label_governs_the_bullets_right_below_it():
    items = parse("## ROCm\n- Enable X (#1)\n\n- Enhanced Windows support\n- load_inline (#2)\n"
                  "- AOTriton compile (#3)\n\n- Add gfx1150 (#4)\n")
    assert [(i.text, i.group) for i in items] == [
        ("Enable X (#1)", ""), ("load_inline (#2)", "Enhanced Windows support"),
        ("AOTriton compile (#3)", "Enhanced Windows support"), ("Add gfx1150 (#4)", "")]
    assert items[1].section == ("ROCm", "Enhanced Windows support")


def test_a_sentence_without_references_is_an_item_not_a_label():
    items = parse("### PJRT runtime\n- Checkout our newest document; PjRt is the default.\n"
                  "- New PJRT TPU backend (#4077)\n")
    assert [i.text for i in items] == ["Checkout our newest document; PjRt is the default.",
                                       "New PJRT TPU backend (#4077)"]


def test_a_bc_entry_with_prose_code_and_subheadings_is_one_item():
    text = ("# Backwards Incompatible Changes\n\n### Change `f()` default (#7)\n\nProse here.\n\n"
            "Version 2.4\n```python\n# this is a comment, not a heading\nf()\n```\n\n"
            "#### More details\nMore prose.\n"
            "### Another entry\nIts prose.\n# Deprecations\n- Deprecate g (#9)\n")
    items = parse(text)
    assert [i.section for i in items] == [("Backwards Incompatible Changes",)] * 2 + [
        ("Deprecations",)]
    assert items[0].text.startswith("Change `f()` default (#7)\n\nProse here.")
    assert "# this is a comment, not a heading" in items[0].text
    assert items[0].text.endswith("#### More details\nMore prose.")
    assert items[1].text == "Another entry\n\nIts prose."


def test_prose_and_code_after_a_deprecated_bullet_belong_to_it():
    text = ("# Deprecations\n## Distributed\n- DeviceMesh\n  - Added a warning (#164993)\n\n"
            "We decided to deprecate slicing.\n\n### Version <2.9\n```python\nmesh[\"dp\"]\n```\n"
            "\n## ONNX\n- `dynamic_axes` is deprecated (#165769)\n- Users should supply "
            "`dynamic_shapes` instead.\n\n## JIT\n- Deprecated `torch.jit` (#167669).\n"
            "`torch.jit` should be replaced with `torch.compile`.\n")
    items = parse(text)
    assert [i.section for i in items] == [("Deprecations", "Distributed", "DeviceMesh"),
                                          ("Deprecations", "ONNX"), ("Deprecations", "JIT")]
    assert items[0].text == ("Added a warning (#164993)\n\nWe decided to deprecate slicing.\n\n"
                             "### Version <2.9\n```python\nmesh[\"dp\"]\n```")
    assert items[1].text.endswith("Users should supply `dynamic_shapes` instead.")
    assert items[2].text.endswith("`torch.jit` should be replaced with `torch.compile`.")


def test_prose_after_a_list_elsewhere_is_not_glued_to_the_last_item():
    items = parse("- Fix a (#1)\n- Fix b (#2)\n\nThe release tracker has all the PRs.\n")
    assert [i.text for i in items] == ["Fix a (#1)", "Fix b (#2)"]


def test_a_heading_citing_prs_is_an_entry_but_not_the_changes_listed_after_it():
    text = ("## ONNX\n#### `verify_onnx_program` (#148396)\n\nA new verification API.\n\n"
            "- Support custom axis names (#146321)\n- Optimize by default (#146187)\n"
            "#### Caffe2 support has been removed (#129021)\n- Remove Caffe2 handling (#129021)\n"
            "- Remove `is_caffe2_aten_fallback`\n")
    items = parse(text)
    assert [i.text.split("\n")[0] for i in items] == [
        "`verify_onnx_program` (#148396)", "Support custom axis names (#146321)",
        "Optimize by default (#146187)", "Caffe2 support has been removed (#129021)"]
    assert items[3].text.endswith("- Remove `is_caffe2_aten_fallback`")


def test_highlight_entries_are_whole_and_a_known_title_is_their_area():
    text = ("## Highlights\n### PROTOTYPE FEATURES\n#### [Prototype] FlexAttention\n"
            "A flexible attention API.\n\nSee the blog.\n#### [Prototype] Flight Recorder\n"
            "Debugs stuck jobs.\n")
    items = parse(text)
    assert [i.text for i in items] == [
        "[Prototype] FlexAttention\n\nA flexible attention API.\n\nSee the blog.",
        "[Prototype] Flight Recorder\n\nDebugs stuck jobs."]
    assert items[0].section == ("Highlights", "PROTOTYPE FEATURES", "[Prototype] FlexAttention")


def test_a_highlight_table_retelling_the_entries_is_not_repeated():
    text = ("## Highlights\n\n| Beta | Prototype |\n|---|---|\n| CuDNN backend for SDPA | "
            "FlexAttention |\n| | TorchInductor on Windows |\n| | Autoload |\n\n"
            "#### [Beta] CuDNN backend for SDPA\nFast.\n#### [Prototype] TorchInductor CPU on "
            "Windows\nWorks.\n")
    items = parse(text)
    assert [(i.text.split("\n")[0], i.section[-1]) for i in items] == [
        ("FlexAttention", "Prototype"), ("Autoload", "Prototype"),
        ("[Beta] CuDNN backend for SDPA", "Highlights"),
        ("[Prototype] TorchInductor CPU on Windows", "Highlights")]


@pytest.mark.parametrize("toc", [
    "- [Highlights](#highlights)\n- [Bug fixes](#bug-fixes)\n",
    "- Highlights  \n- Backwards Incompatible Change  \n- Bug fixes\n",
    "* Highlights\n* Bug Fixes\n",
], ids=["anchors", "plain-names", "star-bullets"])
def test_tables_of_contents_in_every_form_are_skipped(toc):
    items = parse(f"# PyTorch 9.9 Release Notes\n{toc}\n# Highlights\nProse.\n"
                  "# Backwards Incompatible changes\n- Drop X (#2)\n# Bug fixes\n- Fix (#1)\n")
    assert [i.text for i in items] == ["Drop X (#2)", "Fix (#1)"]


def test_each_xla_op_lowering_is_an_item():
    ops = [i for i in parse(release_notes("xla/v2.0.0.md")) if i.group == "Op Lowering"]
    assert [(i.text, i.section[-1]) for i in ops] == [
        ("_linalg_svd (#4537)", "Op Lowering"), ("Upsample_bilinear2d with scale (#4464)",
                                                 "Op Lowering")]


def test_a_release_flattened_onto_one_line_gets_its_structure_back():
    notes = parse_notes(next((FIXTURES / "seeds").glob("003_*.txt")).read_text("utf-8"),
                        lookup=KNOWN)
    ops = [i for i in notes.items if i.group == "Op Lowering"]
    assert [i.text.split(" ")[0] for i in ops] == ["`_linalg_svd`", "`Upsample_bilinear2d`"]
    assert ops[0].section[-3:] == ("Stable Features", "Improvements & Additions", "Op Lowering")
    assert len(notes.items) == 42


def test_notes_rendered_as_bare_lines_get_headings_and_items_back():
    notes = parse_notes(release_notes("xla/v1.6-rendered.txt"), lookup=KNOWN)
    ops = [i for i in notes.items if i.group == "New op supported on PyTorch/XLA"]
    assert [i.text.split(" ")[0] for i in ops] == [
        "Hardsigmoid", "true_divide", "max_unpool2d", "max_unpool3d", "Replication_pad1d",
        "Replication_pad2d"]
    assert not any(i.text.startswith("Cloud TPUs now support") for i in notes.items)


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
    notes = parse_notes(release_notes("pytorch/v1.13.1.md"), lookup=KNOWN)
    assert len(notes.items) == 12
    assert all("\r" not in item.text for item in notes.items)
    assert notes.items[0].lead.startswith("This release is meant to fix the following issues")
    assert notes.items[8].prs == (88854, 88970)


@pytest.mark.parametrize(("name", "count"), [
    ("pytorch/v1.13.1.md", 12), ("pytorch/v2.7.0.md", 609), ("pytorch/v2.8.0.md", 398),
    ("xla/v2.0.0.md", 42)])
def test_real_notes_item_counts(name, count):
    # v2.7.0, counted with grep: 567 "- " and 23 "* " bullets, less 9 table-of-contents links
    # and 2 group bullets ("For MPSInductor", "In MPSInductor:") whose nested bullets are the
    # items (579), plus 10 highlight cells, 10 heading entries with prose (8 BC-breaking,
    # 2 deprecations; the Triton `###` groups bullets instead), and the ONNX `####` entry,
    # whose two bullets below are changes of their own.
    assert len(parse(release_notes(name))) == count


def test_unindented_line_after_a_bullet_introduces_the_next_bullets():
    items = parse("## Inductor\n* `addmv` (#143792)\nNew meta tensor implementations:\n"
                  "* `nonzero` (#144727)\n")
    assert [i.text for i in items] == ["`addmv` (#143792)", "`nonzero` (#144727)"]
    assert items[1].lead == "New meta tensor implementations:"
    assert items[1].group == "New meta tensor implementations"


def test_an_unindented_sentence_after_a_bullet_continues_it():
    items = parse("## Deprecations\n- `rocm.n_max` is deprecated (#152341).\nInstead, use "
                  "`rocm.ck_max`.\n- `x` is deprecated (#154331).\n")
    assert [i.text for i in items] == [
        "`rocm.n_max` is deprecated (#152341).\nInstead, use `rocm.ck_max`.",
        "`x` is deprecated (#154331)."]


def test_xla_style_sections_and_areas():
    items = parse(release_notes("xla/v2.0.0.md"))
    sections = {i.section for i in items}
    assert ("Beta Features", "PJRT runtime") in sections
    assert ("Experimental Features", "PyTorch/XLA GSPMD on single host") in sections
    assert ("Bug fixes & improvements",) in sections


def test_every_v27_bullet_citing_a_pr_is_in_exactly_one_item():
    body = release_notes("pytorch/v2.7.0.md")
    texts = [i.text for i in parse(body)]
    bullets = [line.lstrip()[2:].strip() for line in body.split("\n")
               if line.lstrip().startswith(("- ", "* ")) and find_prs(line)]
    assert len(bullets) > 500
    for bullet in bullets:  # (one bullet is written twice, under CUDA and under ROCm)
        assert sum(1 for t in texts if bullet in t) == bullets.count(bullet), bullet


def test_truncation_at_a_line_boundary():
    body = "".join(f"- item {n} (#{n})\n" for n in range(1, 1000))
    notes = parse_notes(body, max_chars=2000)
    assert notes.truncated
    assert all(item.text.startswith("item ") and item.text.endswith(")") for item in notes.items)
    assert 100 < len(notes.items) < 200


@pytest.mark.parametrize("body", [None, "", "   \n\n", "no list, just prose"])
def test_empty_or_itemless_bodies(body):
    assert parse_notes(body).items == []


def test_an_entry_tells_its_story_under_sub_headings_and_lists():
    """A BC entry (2.11's hipify v2) told under ``####`` sub-headings, with lists of points that
    cite nothing of their own and prose citing its PRs, is one item holding all of it."""
    text = ("# Backwards Incompatible Changes\n## ROCm\n### caffe2 support is removed.\n"
            "#### v1 background\nWhen caffe2 was separate:\n- A.h\n- B.h\nThese were used.\n"
            "#### v2 new behavior\nHipify v2 ([#1](https://github.com/pytorch/pytorch/pull/1), "
            "[#2](https://github.com/pytorch/pytorch/pull/2)) makes these changes:\n- Points.\n"
            "Great care was taken.\n## ONNX\n- Drop X (#3)\n")
    items = parse(text)
    assert [(i.section[-1], i.prs) for i in items] == [("ROCm", (1, 2)), ("ONNX", (3,))]
    assert "#### v1 background" in items[0].text and items[0].text.endswith("Great care was taken.")


def test_prose_citing_prs_is_an_item_of_its_own():
    items = parse("## CUDA\nWe upgraded cuDNN (#5).\n\n- Fix a (#1)\n\nThanks to (#7) too.\n")
    assert [(i.text, i.prs) for i in items] == [
        ("We upgraded cuDNN (#5).", (5,)), ("Fix a (#1)", (1,)), ("Thanks to (#7) too.", (7,))]


def test_a_link_to_another_projects_pr_is_not_a_reference():
    body = ("## ROCm\n- Fix A ([#10](https://github.com/pytorch/pytorch/pull/10))\n"
            "- Fix B ([#11](https://github.com/pytorch/pytorch/pull/11)), as "
            "[xformers did](https://github.com/facebookresearch/xformers/pull/1351) "
            "([#1351](https://github.com/facebookresearch/xformers/pull/1351))\n")
    assert [i.prs for i in parse(body)] == [(10,), (11,)]
    assert [i.prs for i in parse_notes(body, repo="facebookresearch/xformers").items] == [
        (), (1351,)]
