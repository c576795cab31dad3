"""Hostile release bodies: generated markdown with pathological runs of backticks, brackets,
emphasis, nesting and HTML goes through parse, classify and rendering without an error, a lost
PR reference, a ping or a raw control character; the worst runs stay within linear time."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from conftest import RELEASES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from handlers.slack.compose import Limits, event_messages
from handlers.slack.items import Style
from watcher.delivery.events import added, make_event
from watcher.models import Release
from watcher.notes.analyze import MAX_ITEMS, Analyzer
from watcher.notes.blocks import Heading
from watcher.notes.invariants import check_items
from watcher.notes.parse import parse_notes
from watcher.notes.runs import read_blocks
from watcher.notes.taxonomy import builtin_taxonomy
from watcher.present.plain import format_event

TAXONOMY = builtin_taxonomy()
ANALYZER = Analyzer(TAXONOMY, max_body_chars=200_000)
PIECES = ["`", "``", "```", "~~~", "[", "]", "(", ")", "](", "*", "**", "_", "__", "<", ">",
          "&lt;", "&amp;", "&#27;", "#", "## ", "### ", "- ", "  - ", "    - ", "* ", "1. ",
          "> ", "\n", "\n\n", "(#12)", "#34", "[#56](https://github.com/pytorch/pytorch/pull/56)",
          "<table><tr><td>", "</td></tr>", "<!here>", "@channel", "<@U123>", "\x1b[31m",
          "\x07", "\u202e", "\r", "word ", "Fix ", "torch.distributed ", "FSDP ", ":", "|",
          "javascript:alert(1)", "https://evil.example/x"]
RUNS = st.tuples(st.sampled_from(PIECES), st.integers(min_value=1, max_value=300))
BODIES = st.lists(RUNS, max_size=40).map(lambda runs: "".join(p * n for p, n in runs))
_PING = re.compile(r"<(?:!channel|!here|!everyone|@[UW]\w+|!subteam)")


def event_of(body: str):
    items = ANALYZER.items(body, repo="pytorch/pytorch")
    release = Release(id=1, tag_name="v9\x1b", name="PyTorch 9 <!here>", body=body,
                      html_url="https://github.com/pytorch/pytorch/releases/tag/v9")
    return items, make_event("published", "pytorch/pytorch", release, "0" * 64, added(items),
                             release.created_at or _NOW)


_NOW = __import__("datetime").datetime(2026, 11, 30, tzinfo=__import__("datetime").UTC)


FOUND = [  # bodies hypothesis found while this was built, each a bug fixed since
    "<table><tr><td>(#12)", "## ```(#12)", "    - (#12)", "<table><tr><td>(#12)<table><tr><td>",
    "</td></tr>(#12)<table><tr><td>", "<table><tr><td>```(#12)",
    "<table><tr><td></td></tr>```(#12)", "1. 1. 1. 1. 1. 1. 1. 1. 1. 1. 1. \n```(#12)",
    "1. " * 33 + "### " * 5 + "``````" + "word " * 8 + "(#12)" * 77,
    "<table><tr><td>&amp;#34", "- `\n(#12):",
]


@pytest.mark.parametrize("body", FOUND)
def test_bodies_found_by_the_fuzzer_stay_fixed(body):
    assert_safe(body)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(BODIES)
def test_any_body_parses_classifies_and_renders_safely(body):
    assert_safe(body)


def assert_safe(body: str) -> None:
    items, event = event_of(body)
    report = check_items(body, items, TAXONOMY, repo="pytorch/pytorch")
    summed_up = bool(items) and "more items not shown" in items[-1].text  # past the item cap
    assert summed_up or not [p for p in report.problems if "in no item" in p and p.startswith(
        "#")], report.problems
    messages = event_messages(event, Limits(True, 10_000), Style(repo=event.repo))
    text = "\n".join(str(m.blocks) + m.text for m in messages)
    assert not _PING.search(text)
    assert not any(char in text for char in "\x1b\x07\u202e\r")
    console = format_event(event)
    assert not any(char in console for char in "\x1b\x07\u202e\r")


def best_of(action: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def real_note(size: int) -> str:
    joined = "\n".join(p.read_text(encoding="utf-8") for p in sorted(RELEASES.glob("*/*.md")))
    while len(joined) < size:
        joined += "\n" + joined
    return joined[: joined.rfind("\n", 0, size) + 1]


def test_long_runs_of_backticks_cost_no_more_than_a_real_note():
    """A release author's 20,000 or 100,000 backticks once took 12.9 s or never finished."""
    ANALYZER.items(real_note(2000))  # the taxonomy and model load outside the timings
    for run in (20_000, 100_000):
        body = "- x " + "`" * run
        hostile = best_of(lambda body=body: ANALYZER.items(body))
        real = best_of(lambda run=run: ANALYZER.items(real_note(run)))
        assert hostile <= 3 * real, (run, hostile, real)


# Item-heavy bodies of GitHub's 125,000-character limit: tens of thousands of tiny blocks or
# items where a real note has about 700 items. Each must read as CommonMark reads it (no item
# lost, none made up) and be cut at the item cap with the rest counted; bench/bench_hostile.py
# measures their cost (within 3x a real note's).
LIMIT = 125_000
UNCAPPED = Analyzer(TAXONOMY, max_body_chars=LIMIT, max_items=1_000_000)
CAPPED = Analyzer(TAXONOMY, max_body_chars=LIMIT)


def numbered(line: str, size: int = LIMIT) -> str:
    out, length, number = [], 0, 0
    while length + len(line.format(number + 1)) <= size:
        number += 1
        out.append(line.format(number))
        length += len(out[-1])
    return "".join(out)


def summed_up(items, count: int) -> None:
    assert len(items) == MAX_ITEMS + 1
    assert items[-1].text == f"{count - MAX_ITEMS:,} more items not shown: see the release notes"


@pytest.mark.slow
def test_table_rows_citing_prs_are_two_cells_each_and_every_pr_lands():
    body = "| change | PR |\n|---|---|\n" + numbered("| fix {0} | (#{0}) |\n", LIMIT - 26)
    rows = body.count("\n") - 2
    items = UNCAPPED.items(body, repo="pytorch/pytorch")
    assert [item.text for item in items[:4]] == ["fix 1", "(#1)", "fix 2", "(#2)"]
    assert {item.section for item in items} == {("change",), ("PR",)}
    assert [pr for item in items for pr in item.prs] == list(range(1, rows + 1))
    summed_up(CAPPED.items(body, repo="pytorch/pytorch"), 2 * rows)


def test_nul_byte_bullets_keep_their_nul_and_count():
    body = "- \x00\n" * (LIMIT // 4)
    items = UNCAPPED.items(body)
    assert len(items) == LIMIT // 4 and {item.text for item in items} == {"\x00"}
    summed_up(CAPPED.items(body), LIMIT // 4)


@pytest.mark.slow
def test_numbered_fix_bullets_each_cite_their_pr():
    body = numbered("- fix #{}\n")
    count = body.count("\n")
    items = UNCAPPED.items(body, repo="pytorch/pytorch")
    assert [item.prs for item in items] == [(n,) for n in range(1, count + 1)]
    assert items[9].text == "fix #10"
    capped = CAPPED.items(body, repo="pytorch/pytorch")
    summed_up(capped, count)
    assert capped[MAX_ITEMS - 1].prs == (MAX_ITEMS,)


@pytest.mark.slow
def test_a_heading_repeated_31250_times_holds_no_item():
    body = "# h\n" * (LIMIT // 4)
    assert UNCAPPED.items(body) == []
    notes = parse_notes(body, lookup=TAXONOMY)
    assert notes.items == [] and notes.unknown_headings == ["h"]


def test_heading_and_bullet_pairs_each_give_the_bullet_under_its_heading():
    body = "## Distributed\n- x (#1)\n" * (LIMIT // 24)
    items = UNCAPPED.items(body, repo="pytorch/pytorch")
    assert len(items) == LIMIT // 24
    assert {(i.text, i.section, i.prs, i.subsystem, i.decided_by) for i in items} == {
        ("x (#1)", ("Distributed",), (1,), "distributed", "heading")}
    summed_up(CAPPED.items(body, repo="pytorch/pytorch"), LIMIT // 24)


def test_setext_headings_are_headings_not_items():
    body = "h\n=\n" * (LIMIT // 4)
    _, blocks = read_blocks(body)
    assert len(blocks) == LIMIT // 4
    assert {(b.level, b.title) for b in blocks if isinstance(b, Heading)} == {(1, "h")}
    assert UNCAPPED.items(body) == []


def test_a_thousand_nested_list_markers_on_one_line_are_one_item():
    """Once split as a flattened list into 500 items whose text was ``-``."""
    items = UNCAPPED.items("- " * 1000 + "x (#12)\n", repo="pytorch/pytorch")
    assert len(items) == 1
    assert items[0].text.endswith("- x (#12)") and items[0].prs == (12,)
    assert len(UNCAPPED.items("- " * 1000 + "x\n")) == 1


def test_one_word_bullets_are_one_item_each():
    body = "- x\n" * (LIMIT // 4)
    items = UNCAPPED.items(body)
    assert len(items) == LIMIT // 4 and {item.text for item in items} == {"x"}
    assert len({item.subsystem for item in items}) == 1  # the same words, the same verdict
    summed_up(CAPPED.items(body), LIMIT // 4)
