"""Entries titled by a bold line, and catch-all headings ("Miscellaneous") inside a section.

PyTorch 2.6's highlights tell one feature under ``#### **[Beta] …**`` and the next ones under
bold paragraphs (``**[Beta] …**`` + prose): each is an entry of its own, as a heading's would
be. A "Miscellaneous" heading names no kind and no area: its items keep the kind of the section
above it, and an area named below it (``- c10d``) still decides their subsystem.
"""

from __future__ import annotations

import re

import pytest
from conftest import release_notes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from watcher.models import Item, top_level
from watcher.notes.blocks import tokenize
from watcher.notes.classify import Classifier
from watcher.notes.invariants import check_items
from watcher.notes.parse import parse_notes
from watcher.notes.runs import read_spanned
from watcher.notes.taxonomy import builtin_taxonomy

TAXONOMY = builtin_taxonomy()
CLASSIFIER = Classifier(TAXONOMY)
SHAPE = "pytorch/v2.6.0-highlights-shape.md"
BETA = [
    "[Beta] torch.compiler.set_stance",
    "[Beta] torch.library.triton_op",
    "[Beta] torch.compile support for Python 3.13",
    "[Beta] New packaging APIs for AOTInductor",
    "[Beta] AOTInductor: minifier",
    "[Beta] AOTInductor: ABI-compatible mode code generation",
    "[Beta] FP16 support for X86 CPUs (both eager and Inductor modes)",
]
PROTOTYPE = [
    "[Prototype] Improved PyTorch user experience on Intel GPUs",
    "[Prototype] FlexAttention support on X86 CPU for LLMs",
    "[Prototype] Dim.AUTO",
    "[Prototype] CUTLASS and CK GEMM/CONV Backends for AOTInductor",
]


def parse(text: str) -> list[Item]:
    return parse_notes(text, lookup=TAXONOMY).items


def highlights() -> list[Item]:
    return [i for i in parse(release_notes(SHAPE)) if i.section[0] == "Highlights"]


def by_title(items: list[Item]) -> dict[str, Item]:
    """Each item by the bold title its text starts with."""
    found = {}
    for item in items:
        match = re.match(r"\*\*(.+?)\*\*\n", item.text)
        assert match, f"item does not start with a bold title: {item.text[:60]!r}"
        found[match.group(1)] = item
    return found


def highlight_paragraphs() -> list[str]:
    """The blocks of text between "### BETA FEATURES" and the next "## " section, titles and
    headings left out: each must reach exactly one item."""
    body = release_notes(SHAPE)
    part = body.split("### BETA FEATURES", 1)[1].split("\n## ", 1)[0]
    blocks = [b.strip() for b in part.split("\n\n") if b.strip()]
    return [b for b in blocks if not b.startswith(("#", "**"))]


def test_each_bold_titled_entry_is_an_item_of_its_own():
    items = highlights()
    assert [i.section for i in items] == [("Highlights", "BETA FEATURES")] * 7 + [
        ("Highlights", "PROTOTYPE FEATURES")
    ] * 4
    assert list(by_title(items)) == BETA + PROTOTYPE


def test_an_entry_holds_its_title_and_its_prose_and_nothing_of_the_next():
    entries = by_title(highlights())
    set_stance = entries["[Beta] torch.compiler.set_stance"].text
    assert "eager_on_recompile" in set_stance and "recipe on controlling" in set_stance
    assert "triton" not in set_stance and len(set_stance) < 500
    abi = entries["[Beta] AOTInductor: ABI-compatible mode code generation"].text
    assert "used to call into the C++ libraries" in abi and "keep running on later" in abi
    intel = entries["[Prototype] Improved PyTorch user experience on Intel GPUs"].text
    # Its prose, its list of points (no PRs of their own) and the paragraph after them.
    assert "fewer steps" in intel and "SYCL kernels" in intel and "getting-started" in intel
    assert "FlexAttention" not in intel


def test_every_prose_paragraph_lands_in_exactly_one_item():
    notes = parse_notes(release_notes(SHAPE), lookup=TAXONOMY)
    paragraphs = highlight_paragraphs()
    assert len(paragraphs) == 19
    for paragraph in paragraphs:
        holders = [i for i in notes.items if paragraph in i.text]
        assert len(holders) == 1, (paragraph[:60], len(holders))
        assert not any(paragraph in prose for prose in notes.prose)


def test_the_highlight_table_cells_are_told_by_the_entries():
    """Every cell of the table names an entry told below it, so no cell is an item twice."""
    assert not [i for i in highlights() if not i.text.startswith("**")]


def test_each_entry_is_classified_on_its_own():
    entries = {title: CLASSIFIER.classify(item) for title, item in by_title(highlights()).items()}
    assert {e.kind for e in entries.values()} == {"highlight"}
    assert top_level(entries["[Beta] torch.compiler.set_stance"].subsystem) == "compile"
    assert top_level(entries["[Beta] torch.compile support for Python 3.13"].subsystem) == (
        "compile"
    )
    assert top_level(entries["[Beta] AOTInductor: minifier"].subsystem) == "export"  # contract
    intel = entries["[Prototype] Improved PyTorch user experience on Intel GPUs"]
    assert intel.subsystem == "xpu"


def test_the_shape_fixture_holds_the_invariants():
    body = release_notes(SHAPE)
    notes = parse_notes(body, lookup=TAXONOMY)
    assert check_items(body, notes.items, TAXONOMY).ok
    assert notes.unknown_headings == []  # a bold title is not a heading


@pytest.mark.parametrize(
    ("body", "texts"),
    [
        (
            "## Improvements\n\n**Dynamo**\n\n- Support X (#1)\n- Support Y (#2)\n",
            ["Support X (#1)", "Support Y (#2)"],
        ),
        (
            "## Improvements\n\n**AOTDispatcher**\n\nIt normalises graphs. Some changes:\n"
            "* Fix a compile time edge case (#1)\n* Handle mutations on tangents (#2)\n",
            ["Fix a compile time edge case (#1)", "Handle mutations on tangents (#2)"],
        ),
        (
            "## New Features\n\n**Note: Python 3.8 is no longer supported.**\n\n"
            "Please upgrade.\n\n- Add X (#1)\n",
            ["Add X (#1)"],
        ),
        (
            "# Backwards Incompatible Changes\n\n### Remove `f` (#7)\n\nUse `g`.\n\n"
            "**Example:**\n\n```python\ng()\n```\n",
            ["Remove `f` (#7)\n\nUse `g`.\n\n**Example:**\n\n```python\ng()\n```"],
        ),
        (
            "# Backwards Incompatible Changes\n\n### Flip a default (#7)\n\nWhy.\n\n"
            "**Migration guide**\n\nPass `x=False`.\n",
            ["Flip a default (#7)\n\nWhy.\n\n**Migration guide**\n\nPass `x=False`."],
        ),
        (
            "# Backwards Incompatible Changes\n\n- Remove `f` (#7)\n\n**Migration**\n\n"
            "Call `g` instead.\n",
            ["Remove `f` (#7)\n\n**Migration**\n\nCall `g` instead."],
        ),
        (
            "## Highlights\n\n### Compiler work\n\n**[Beta] A**\n\nA does a.\n\n"
            "**[Beta] B (#5)**\n\nB does b.\n",
            ["**[Beta] A**\n\nA does a.", "**[Beta] B (#5)**\n\nB does b."],
        ),
    ],
    ids=[
        "bold-over-bullets-is-a-group",
        "bold-over-prose-and-citing-bullets-is-a-group",
        "an-emphasised-sentence-is-prose",
        "a-lead-in-stays-in-its-entry",
        "a-sub-title-of-an-entry-citing-prs-stays-in-it",
        "a-bc-bullets-migration-notes-stay-with-it",
        "entries-under-a-topic-heading",
    ],
)
def test_bold_paragraphs_that_title_no_entry_keep_their_reading(body, texts):
    items = parse(body)
    assert [i.text for i in items] == texts
    assert check_items(body, items, TAXONOMY).ok


def test_a_bold_title_citing_prs_is_an_entry_with_them():
    items = parse("## New Features\n\n**Add X (#3, #4)**\n\nX does this.\n\n- Add Y (#5)\n")
    assert [(i.text, i.prs) for i in items] == [
        ("**Add X (#3, #4)**\n\nX does this.", (3, 4)),
        ("Add Y (#5)", (5,)),
    ]


@pytest.mark.slow
def test_thousands_of_bold_titled_entries_each_stay_whole():
    """A body of 5,000 titled entries (bench-sized: 125,000 characters of them cost what as
    many bullets do) reads as 5,000 items, each its title and its prose."""
    body = "".join(f"**[Beta] Feature {n}**\n\nFeature {n} does a thing.\n\n" for n in range(5000))
    items = parse_notes(body, lookup=TAXONOMY).items
    assert [i.text for i in items] == [
        f"**[Beta] Feature {n}**\n\nFeature {n} does a thing." for n in range(5000)
    ]


BOLD_LINES = [
    "**T**",
    "**T** x",
    "**[Beta] a.b**",
    "__t__",
    "**",
    "***",
    "** x",
    "**x | y**",
    "x",
    "- x",
    "- **x**",
    "",
    "---",
    "===",
    "> **q**",
    "  **i**",
    "|---|---|",
    "```",
]


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(BOLD_LINES), min_size=1, max_size=4),
            st.integers(min_value=1, max_value=25),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_runs_of_bold_lines_read_as_markdown_it_reads_them(units):
    """A line opening with ``**`` is read as text when runs of lines are read once."""
    lines = [line for unit, times in units for _ in range(times) for line in unit]
    assert read_spanned(lines, min_units=5, min_lines=0) == tokenize(lines)


# ---- "Miscellaneous" inside a section -------------------------------------------------------


def test_miscellaneous_items_of_2_7_keep_their_sections_kind():
    items = CLASSIFIER.classify_all(parse(release_notes("pytorch/v2.7.0.md")))
    misc = [i for i in items if i.section[-1].lower() == "miscellaneous"]
    kinds = {(i.section[0], i.kind) for i in misc}
    assert kinds == {("Improvements", "improvement"), ("Bug fixes", "bug_fix")}
    assert sum(i.section[0] == "Improvements" for i in misc) == 10
    assert sum(i.section[0] == "Bug fixes" for i in misc) == 9
    assert {top_level(i.subsystem) for i in misc} == {"export"}  # "torch.export" above it
    assert not [i for i in items if i.kind == "other"]


def test_a_group_below_miscellaneous_decides_the_subsystem():
    items = CLASSIFIER.classify_all(parse(release_notes(SHAPE)))
    grouped, plain = [i for i in items if i.section[0] == "Performance"][::-1]
    assert grouped.section == ("Performance", "Miscellaneous", "c10d")
    assert (grouped.subsystem, grouped.kind, grouped.decided_by) == (
        "distributed/c10d",
        "performance",
        "heading",
    )
    assert (plain.subsystem, plain.kind) == ("other", "performance")


@pytest.mark.parametrize(
    ("section", "group_depth", "subsystem", "kind"),
    [
        (("Performance", "Miscellaneous", "c10d"), 1, "distributed/c10d", "performance"),
        (("Bug fixes", "Miscellaneous"), 0, "other", "bug_fix"),
        (("Miscellaneous",), 0, "other", "other"),
        (("Miscellaneous", "Bug fixes"), 0, "other", "bug_fix"),
        (("Miscellaneous", "Distributed"), 0, "distributed", "other"),
        (("Improvements", "torch.export", "Miscellaneous"), 0, "export", "improvement"),
    ],
    ids=["perf-misc-c10d", "fixes-misc", "misc-alone", "misc-fixes", "misc-area", "misc-last"],
)
def test_a_catch_all_heading_names_no_kind_and_no_area(section, group_depth, subsystem, kind):
    item = Item(text="Tidy the thing up (#1)", section=section, prs=(1,), group_depth=group_depth)
    decision = CLASSIFIER.explain(item)
    assert (decision.item.subsystem, decision.item.kind) == (subsystem, kind)
    assert decision.item.decided_by == "heading"


def test_miscellaneous_under_bc_breaking_still_runs_on():
    """The migration notes after a BC-breaking bullet under "Miscellaneous" are its own."""
    body = (
        "# Backwards Incompatible Changes\n\n## Miscellaneous\n\n- Remove `f` (#7)\n\n"
        "Call `g` instead:\n\n```python\ng()\n```\n"
    )
    items = CLASSIFIER.classify_all(parse(body))
    assert [(i.text, i.kind) for i in items] == [
        ("Remove `f` (#7)\n\nCall `g` instead:\n\n```python\ng()\n```", "bc_breaking")
    ]
