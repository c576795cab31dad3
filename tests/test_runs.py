"""Runs of same-shaped lines are read once (``watcher.notes.runs``); the blocks must be exactly
markdown-it's reading of the whole text, over every real note and over generated bodies built
to break the copy (lines that end HTML blocks, lazy continuations, tables with other cells)."""

from __future__ import annotations

import pytest
from conftest import RELEASES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from watcher.notes import runs
from watcher.notes.blocks import tokenize
from watcher.notes.runs import find_runs, read_blocks, read_spanned, shape
from watcher.notes.runs import read as runs_read

FIXTURES = sorted(RELEASES.glob("*/*")) + sorted((RELEASES.parent / "seeds").glob("*"))

SHAPED = ["- x", "- fix #12", "- (#3) y", "* y", "+ z", "1. a", "2. b", "1) c", "10. d", "# h",
          "## Distributed", "### t ###", "#", "#\tx", "text", "more text (#3)", "a | b", "=",
          "==  ", "| a | b |", "| c | d | e |", "| f |", "|---|---|", "| x \\| y | z |", "",
          "  ", "\x00 nul", "- \x00", "h", "Fix `code`", "**bold**", "x -->", "a > b",
          "- [ref]: /url", "- [MPS] Fix (#1)", "- [a]:", "1. [a]: b"]
OTHER = ["```", "~~~", "  - nested", "    code", "> quote", "> - q", "<!-- c", "-->", "<div>",
         "</div>", "<pre>", "</pre>", "---", "***", "[ref]: /url", "[ref]:", "'title'",
         "  continuation", "\tx", "- ", "-", ":--|--", "-- x", "<table><tr><td>", "  /u"]
LINES = st.sampled_from(SHAPED + OTHER)
UNITS = st.tuples(st.lists(LINES, min_size=1, max_size=3), st.integers(min_value=1, max_value=30))
BODIES = st.lists(UNITS, min_size=1, max_size=12).map(
    lambda units: [line for unit, times in units for _ in range(times) for line in unit])


def same_as_markdown_it(lines: list[str], min_units: int = 5) -> None:
    assert read_spanned(lines, min_units=min_units, min_lines=0) == tokenize(lines)


@pytest.mark.slow
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
@pytest.mark.parametrize("min_units", [5, runs.MIN_UNITS])
def test_real_notes_read_exactly_as_markdown_it_reads_them(path, min_units):
    lines = path.read_text(encoding="utf-8").replace("\r\n", "\n").split("\n")
    same_as_markdown_it(lines, min_units)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(BODIES)
def test_generated_bodies_read_exactly_as_markdown_it_reads_them(lines):
    same_as_markdown_it(lines)


CASES = {  # each reads the run in a way a copy must get right, or must refuse to copy
    "bullets": ["- x"] * 40,
    "loose bullets": ["- x", ""] * 40,
    "loose bullets, two blank lines": ["- x", "", ""] * 40,
    "blank lines": [""] * 100 + ["- x"] + [""] * 100,
    "bullets far apart": (["- x"] + [""] * 30) * 10 + ["  y"],
    "a bullet taking the next line in": ["- x", "y"] * 20,
    "ordered from 1": ["1. a"] + ["2. b"] * 30,
    "headings": ["# h"] * 40,
    "heading and bullet": ["## Distributed", "- x (#1)"] * 20,
    "setext": ["h", "="] * 20,
    "table": ["| a | b |", "|---|---|"] + ["| c | d |"] * 40,
    "table with fewer cells": ["| a | b |", "|---|---|"] + ["| c |"] * 40,
    "table with escaped pipes": ["| a | b |", "|---|---|"] + ["| c \\| e | d |"] * 40,
    "fenced": ["```"] + ["- x"] * 40 + ["```", "- y"],
    "fences each holding a blank line": ["<div>"] + ["```", ""] * 20,
    "delimiter rows of other widths": ["|", "|"] + ["|---|---|"] * 20,
    "HTML comments in a unit": ["<!--", "x", "y -->"] * 10 + ["<!--", "x -->", "y -->"] * 10,
    "numbers of other widths": ["1. a", "   - b"] * 5 + ["10. a", "   - b"] * 20,
    "a reference definition in a bullet": ["text", "- x", "- [a]:", "  /u"] * 10,
    "pipes above a delimiter row": ["a | b", "|---|---|"] * 10 + ["a", "|---|---|"] * 10,
    "a table in a bullet": ["- a | b", "  |---|---|", "text"] * 10,
    "a table interrupting the run's paragraph": ["- [a]:"] + ["||"] * 20 + ["|-|"],
    "HTML comment ended inside the run": ["<!--"] + ["x"] * 20 + ["x -->"] + ["x"] * 20,
    "HTML block up to a blank line": ["<div>"] + ["- x"] * 40 + ["", "- y"],
    "quote with lazy lines": ["> a"] + ["b"] * 40,
    "one paragraph": ["text"] * 40,
    "underlines alone": ["="] * 40,
    "reference title": ["[a]: /u 'x"] + ["y"] * 30 + ["z'", "- after"],
    "NUL headings": ["# \x00 h"] * 40,
    "rules": ["---"] * 40,
    "rules under a paragraph": ["text"] + ["---"] * 40,
    "fences opening and closing": ["```"] * 41,
    "quote": ["> x"] * 40,
    "nested bullets": ["- a"] + ["  - x"] * 40,
    "indented code": ["", "    code"] * 40,
    "HTML lines": ["<br>"] * 40,
    "headings with closing marks": ["## t ##"] * 20 + ["## u #"] * 20,
}


@pytest.mark.parametrize("lines", CASES.values(), ids=CASES.keys())
def test_runs_that_copy_and_runs_that_must_not(lines):
    same_as_markdown_it(lines)


HOSTILE = {
    "bullets": "- x\n" * 31_250,
    "NUL-byte bullets": "- \x00\n" * 31_250,
    "numbered bullets": "".join(f"- fix #{i}\n" for i in range(1, 10_000)),
    "headings": "# h\n" * 31_250,
    "heading and bullet pairs": "## Distributed\n- x (#1)\n" * 5_000,
    "setext headings": "h\n=\n" * 20_000,
    "table rows": "| change | PR |\n|---|---|\n" + "".join(
        f"| fix {i} | (#{i}) |\n" for i in range(1, 5_000)),
}


@pytest.mark.slow
@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_runs_reach_markdown_it_as_a_few_lines(body, monkeypatch):
    """What makes these bodies cheap: markdown-it reads three units of each run, not 30,000
    blocks; the blocks are still exactly its reading of the whole body."""
    read: list[int] = []

    def counting(lines):
        read.append(len(lines))
        return tokenize(lines)

    monkeypatch.setattr(runs_read, "tokenize", counting)
    lines, blocks = read_blocks(body)
    assert read and max(read) < 20
    assert blocks == [block for block, _ in tokenize(lines)]


def test_shapes_tell_apart_what_block_parsing_tells_apart():
    assert shape("- x") == "-" and shape("* x") == "*" and shape("-x") is None
    assert shape("1. a") == ".11" and shape("2. a") == ".n1" and shape("10) a") == ")n2"
    assert shape("## h") == "#2" and shape("#h") is None and shape("####### h") is None
    assert shape("- - x") is None and shape("- 1. x") is None and shape("- # x") is None
    assert shape("- [MPS] x") is None and shape("[a]: /u") is None
    assert shape("a | b") == "text|2" != shape("a | b | c") and shape("- a | b") == "-|2"
    assert shape("    code") is None and shape("> q") is None and shape("---") is None
    assert shape("|---|:-:|") is None and shape("|") is None and shape("| a |") == "row|1"
    assert shape("") == shape(" \t") == "blank" and shape("\x0b") is None


def test_runs_are_maximal_and_take_the_shortest_period():
    shapes = ["-"] * 20 + ["#2", "-"] * 10 + ["line:> q"] + ["text"] * 3 + ["line:---"] * 5 + [
        "blank"] * 9 + ["blank", "-"] * 6
    found = find_runs(shapes, min_units=5)
    assert [(r.start, r.period, r.units) for r in found] == [
        (0, 1, 20), (20, 2, 10), (44, 1, 5), (59, 2, 5)]  # blank lines alone are no run
