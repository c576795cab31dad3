"""Reads a body's blocks with markdown-it, each run of same-shaped units read once.

A run goes to markdown-it as its first two and last two units (``_collapse``); the blocks of
the units left out are built from their own lines (``watcher.notes.runs.expand``). A run read
otherwise than checked is read whole, so the blocks are always exactly markdown-it's.
"""

from __future__ import annotations

from watcher.notes.blocks import Block, Span, tokenize
from watcher.notes.runs.expand import Expansion
from watcher.notes.runs.shapes import MIN_UNITS, Run, find_runs, kind_of

MIN_LINES = 64    # a shorter text (an item, a small note) is read whole


def read_blocks(source: str) -> tuple[list[str], list[Block]]:
    """The source's lines and its top-level blocks, as markdown-it reads them."""
    lines = source.split("\n")
    return lines, [block for block, _ in read_spanned(lines)]


def read_spanned(lines: list[str], *, min_units: int = MIN_UNITS, min_lines: int = MIN_LINES
                 ) -> list[tuple[Block, Span]]:
    """markdown-it's top-level blocks of ``lines`` with their spans, runs read once each."""
    if len(lines) < min_lines or any("\r" in line for line in lines):
        return tokenize(lines)  # markdown-it takes a CR for a line break; split() does not
    kinds: dict[str, str] = {}  # a body of runs repeats its lines: each read once
    runs = find_runs([kinds.get(line) or kinds.setdefault(line, kind_of(line)) for line in lines],
                     min_units)
    for _ in range(2):  # a run read otherwise than checked is read whole, once
        if not runs:
            return tokenize(lines)
        kept = _collapse(lines, runs)
        expansion = Expansion(lines, kept, runs, tokenize(kept))
        if not expansion.failed:
            return expansion.expand()
        runs = [run for number, run in enumerate(runs) if number not in expansion.failed]
    return tokenize(lines)


def _collapse(lines: list[str], runs: list[Run]) -> list[str]:
    """The lines without each run's middle units; sets each run's ``cut``."""
    kept: list[str] = []
    position = 0
    for run in runs:
        kept.extend(lines[position:run.gap])
        run.cut = len(kept)
        position = run.gap + run.removed
    kept.extend(lines[position:])
    return kept
