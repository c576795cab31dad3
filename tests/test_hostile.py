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

from handlers.slack.blocks import plan_event
from watcher.delivery.events import added, make_event
from watcher.models import Release
from watcher.notes.analyze import Analyzer
from watcher.notes.invariants import check_items
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
]


@pytest.mark.parametrize("body", FOUND)
def test_bodies_found_by_the_fuzzer_stay_fixed(body):
    assert_safe(body)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(BODIES)
def test_any_body_parses_classifies_and_renders_safely(body):
    assert_safe(body)


def assert_safe(body: str) -> None:
    items, event = event_of(body)
    report = check_items(body, items, TAXONOMY, repo="pytorch/pytorch")
    assert not [p for p in report.problems if "in no item" in p and p.startswith("#")], (
        report.problems)
    messages = plan_event(event, threads=True, max_chars=10_000)
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
