"""Hostile release bodies against real ones: no body a release author writes may stall a poll.

For each body below (up to GitHub's 125,000-character limit for a release body) this measures
parse + classify, and rendering every item for Slack, next to a real note of the same size (the
real notes joined and cut at a line boundary to that length), measured in the same run. The
bound the tests hold: at most 3x the real note's time. An item-heavy body (tens of thousands of
one-word bullets) is measured too and reported against markdown-it's own tokenize of it, since
its cost is per item, not per character.

    python bench/bench_hostile.py [--markdown]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from run_all import Row, print_table, seconds, timed, times, verdict

from handlers.slack.blocks import plan_event
from watcher.delivery.events import added, make_event
from watcher.models import Release
from watcher.notes.analyze import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy

ROOT = Path(__file__).resolve().parent.parent
RELEASES = ROOT / "tests" / "fixtures" / "releases" / "pytorch"
LIMIT = 125_000  # GitHub's longest release body


def hostile_bodies(size: int = LIMIT) -> dict[str, str]:
    """Pathological runs of every construct whose naive handling backtracks or nests."""
    runs = {
        "20,000 backticks": "- x " + "`" * 20_000,
        "100,000 backticks": "- x " + "`" * 100_000,
        "backtick pairs": "- " + "`a" * (size // 2),
        "opening brackets": "- " + "[" * size,
        "bracket-letter pairs": "- " + "[a" * (size // 2),
        "unclosed links": "- " + "[a](b" * (size // 5),
        "asterisks": "- " + "*" * size,
        "bold openers": "- " + "**a" * (size // 3),
        "underscores": "- " + "_" * size,
        "angle brackets": "- " + "<" * size,
        "HTML table tags": "<table><tr><td>" * (size // 15),
        "deep nesting": "".join("  " * n + "- a (#1)\n" for n in range(250)),
        "hash runs": "#" * size,
        "one long line": "- " + "word (#1) " * (size // 10),
    }
    return {name: body[:size] for name, body in runs.items()}


def real_body(size: int) -> str:
    joined = "\n".join(path.read_text(encoding="utf-8") for path in sorted(RELEASES.glob("*.md")))
    while len(joined) < size:
        joined += "\n" + joined
    return joined[: joined.rfind("\n", 0, size) + 1]


BOUND = 3.0  # times a real note of the same size
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def best_of(action: Callable[[], object], repeat: int = 3) -> float:
    return min(timed(action) for _ in range(repeat))


def measure(analyzer: Analyzer, body: str) -> tuple[float, float]:
    """(parse + classify, Slack rendering of every item) in seconds."""
    items = analyzer.items(body, repo="pytorch/pytorch")
    release = Release(id=1, tag_name="v9", name="PyTorch 9", body=body,
                      html_url="https://github.com/pytorch/pytorch/releases/tag/v9")
    event = make_event("published", "pytorch/pytorch", release, "0" * 64, added(items), _EPOCH)
    classify = best_of(lambda: analyzer.items(body, repo="pytorch/pytorch"))
    render = best_of(lambda: plan_event(event, threads=True, max_chars=10_000))
    return classify, render


def run() -> list[Row]:
    analyzer = Analyzer(builtin_taxonomy(), max_body_chars=LIMIT)
    analyzer.items(real_body(2000))  # load the taxonomy and model outside the timings
    rows = []
    baselines: dict[int, tuple[float, float]] = {}
    for name, body in hostile_bodies().items():
        size = len(body)
        if size not in baselines:
            baselines[size] = measure(analyzer, real_body(size))
        real_classify, real_render = baselines[size]
        classify, render = measure(analyzer, body)
        worst = max(classify / real_classify, render / real_render)
        rows.append(Row(f"hostile body: {name} ({size:,} chars): parse+classify / render",
                        f"{seconds(classify)} / {seconds(render)}",
                        f"real note, same size: {seconds(real_classify)} / "
                        f"{seconds(real_render)}",
                        f"{times(classify / real_classify)} / {times(render / real_render)}; "
                        + verdict(worst <= BOUND, f"<= {BOUND:g}x")))
    rows.append(_item_heavy(analyzer))
    return rows


def _item_heavy(analyzer: Analyzer) -> Row:
    """31,250 one-word bullets: the cost is per item (markdown-it's own included), linear but
    far above a real note's, whose items are ~150 characters each."""
    from markdown_it import MarkdownIt

    body = "- x\n" * (LIMIT // 4)
    items = best_of(lambda: analyzer.items(body), repeat=1)
    real = best_of(lambda: analyzer.items(real_body(len(body))), repeat=1)
    tokenize = best_of(lambda: MarkdownIt("commonmark").parse(body), repeat=1)
    name = f"hostile body: {LIMIT // 4:,} one-word bullets ({len(body):,} chars)"
    return Row(f"{name}: parse+classify",
               seconds(items), f"real note, same size: {seconds(real)}; markdown-it alone on "
               f"the bullets: {seconds(tokenize)}",
               f"{times(items / real)}; " + verdict(items / real <= BOUND, f"<= {BOUND:g}x")
               + " (linear: per item)")


def main() -> int:
    print_table(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
