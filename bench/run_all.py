"""Runs every benchmark and prints one aligned table (``--markdown``: a GitHub table).

Also the small harness the ``bench_*.py`` scripts share: the ``Row`` they return, timing and
formatting helpers, and the loopback fake GitHub from ``tests/fakes``. A benchmark joins the
table by being listed in ``BENCHMARKS`` and exposing ``run()`` that returns rows of four
strings: benchmark, figure, baseline (measured in the same run), ratio or note.

    python bench/run_all.py [--markdown] [--only bench_poll ...]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
RELEASES = TESTS / "fixtures" / "releases"
TOKEN = "ghp_bench_token_0123456789"

BENCHMARKS = ("bench_poll", "bench_scale", "bench_store", "bench_first_poll", "bench_startup",
              "bench_daemon_memory", "bench_pipeline", "bench_classify", "bench_hostile",
              "bench_impact", "bench_digest", "bench_slack_posts", "bench_pacing",
              "bench_outbox", "bench_metrics", "bench_attacks", "bench_atlas",
              "bench_failover", "bench_poll_postgres", "bench_wheels")
HEADERS = ("benchmark", "figure", "baseline (same run)", "ratio / note")

if TYPE_CHECKING:
    from fakes.github import FakeGitHub


class Row(NamedTuple):
    benchmark: str
    figure: str
    baseline: str
    note: str


def fake_github(**options: float) -> FakeGitHub:
    """A started loopback fake GitHub (tests/fakes/github.py); the caller stops it."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from fakes.github import FakeGitHub
    from fakes.loopback import LoopbackServer

    # GitHub does not drop connects; the standard library's listen backlog of 5 does, and a
    # burst of 20 (``github.concurrency``, the bare client's pool) then waits out a 1 s SYN
    # retry that would be timed as the client's own.
    LoopbackServer.request_queue_size = 128
    return FakeGitHub(**options).start()


def release_notes(name: str) -> str:
    """A real release body from tests/fixtures/releases, e.g. ``pytorch/v2.7.0.md``."""
    return (RELEASES / name).read_bytes().decode("utf-8")


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def median_time(action: Callable[[], object], *, repeat: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        action()
    return statistics.median(timed(action) for _ in range(repeat))


def seconds(value: float) -> str:
    if value < 1e-3:
        return f"{value * 1e6:.0f} us"
    if value < 1.0:
        return f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s"


def times(ratio: float) -> str:
    digits = 2 if ratio < 10 else 1 if ratio < 100 else 0
    return f"{ratio:.{digits}f}x"


def verdict(ok: bool, target: str) -> str:
    return f"target {target}: {'met' if ok else 'MISSED'}"


def table(rows: Iterable[Sequence[str]], *, markdown: bool = False) -> str:
    cells = [HEADERS, *[tuple(str(cell) for cell in row) for row in rows]]
    if markdown:
        escape = [[cell.replace("|", "\\|") for cell in row] for row in cells]
        lines = ["| " + " | ".join(row) + " |" for row in escape]
        lines.insert(1, "|" + "|".join("---" for _ in HEADERS) + "|")
        return "\n".join(lines)
    widths = [max(len(row[column]) for row in cells) for column in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
             .rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def print_table(rows: Iterable[Sequence[str]]) -> None:
    """What a ``bench_*.py`` script prints when run on its own (``--markdown`` honoured)."""
    print(table(rows, markdown="--markdown" in sys.argv[1:]))


def _load(name: str) -> ModuleType | None:
    here = Path(__file__).resolve().parent
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    if importlib.util.find_spec(name) is None:
        return None
    return importlib.import_module(name)


def _as_rows(name: str, produced: object) -> list[Row]:
    rows = []
    for row in produced if isinstance(produced, list | tuple) else ():
        if isinstance(row, Sequence) and not isinstance(row, str) and len(row) == 4:
            rows.append(Row(*(str(cell) for cell in row)))
        else:
            print(f"{name}: skipped a row that is not 4 cells: {row!r}", file=sys.stderr)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--markdown", action="store_true", help="print a GitHub table")
    parser.add_argument("--only", nargs="+", choices=BENCHMARKS, metavar="NAME",
                        help=f"run only these ({', '.join(BENCHMARKS)})")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    started = time.perf_counter()
    for name in args.only or BENCHMARKS:
        module = _load(name)
        if module is None or not callable(getattr(module, "run", None)):
            print(f"{name}: not present or has no run(); skipped", file=sys.stderr)
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        rows.extend(_as_rows(name, module.run()))
        print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    print(f"all benchmarks: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    print(table(rows, markdown=args.markdown))
    return 0


if __name__ == "__main__":
    # Run through the importable module, so the scripts' ``from run_all import …`` and this
    # run share one ``Row`` class instead of a second copy under ``__main__``.
    import run_all

    raise SystemExit(run_all.main())
