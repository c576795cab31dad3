"""Runs of lines of one shape, read by markdown-it once instead of thousands of times.

markdown-it spends tens of microseconds on every block it reads, so a 125,000-character body
of one-line bullets, headings or table rows (31,250 blocks) costs it 15 to 50 times what a real
note of that size does (about 1,100 blocks). Such bodies repeat one *unit*: one to
``MAX_PERIOD`` lines whose shapes (``shape``) come round again. A run of at least ``MIN_UNITS``
units goes to markdown-it as its first two and last two units only. The second unit then
stands where every unit left out stands: after a unit of its shape, before two (markdown-it
looks at most one line past the line it decides on: a table's delimiter row). So what
markdown-it makes of it is what it makes of each of them: their blocks are built from their
own lines the same way, and every line number after them is moved back to its place
(``watcher.notes.expand``).

A line's shape says everything about it that block parsing looks at (what it starts, whether it
can interrupt a paragraph, how many cells it has for a table's header); any other line is only
ever the shape of an equal line. Before a unit is copied, its reading is checked: its blocks lie
within it (headings, paragraphs, rules, quotes, code, lists of bullets without nested blocks),
or its lines are bullets of a list that goes on past it, rows of a pipe table with the header's
number of cells, or lines of a code block, paragraph, quote or HTML block that began before it
and goes on past it. A run read any other way is given to markdown-it whole, so the blocks are
always exactly markdown-it's (``tests/test_runs.py`` compares the two over every real note and
thousands of generated bodies).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from watcher.notes.blocks import Block, Span, tokenize
from watcher.notes.expand import Expansion
from watcher.notes.tables import row_cells

MIN_UNITS = 16    # shorter runs cost markdown-it too little to be worth the bookkeeping
MAX_PERIOD = 4    # "## Distributed", "- x (#1)" is a unit of two lines
MIN_LINES = 64    # a shorter text (an item, a small note) is read whole

# What can start a line of plain text: nothing that opens a block (heading, quote, list, rule,
# setext underline, fence, HTML, table delimiter, link reference definition) or a blank. A
# bullet's text must start the same way, so that it is a paragraph (which the next line may
# go on lazily), never a reference definition (which it may not).
_SAFE = r"[^\s#>\-*+=_~`<|\[:0-9]"
_SHAPE = re.compile(
    r"(?P<blank>[ \t]*$)"
    r"|(?P<atx>#{1,6})(?:[ \t]|$)"
    rf"|(?P<bullet>[-*+]) (?={_SAFE})"
    rf"|(?P<number>[0-9]{{1,9}})(?P<delimiter>[.)]) (?={_SAFE})"
    r"|(?P<underline>=+[ \t]*$)"
    r"|(?P<delimiter_row>\|[-:| \t]*$)"
    r"|(?P<row>\|)"
    r"|(?P<strong>\*\*[^\s*]|__[^\s_])"  # "**Title**": never a rule or a bullet, so text
    rf"|(?P<text>{_SAFE})")


def shape(line: str) -> str | None:
    """What block parsing sees of a line at column 0, or None for a line whose reading may
    hang on more than its first characters (indented, quoted, a fence, HTML, a rule, a
    reference definition): such a line is only ever the same shape as itself (``_kind``)."""
    match = _SHAPE.match(line)
    if match is None or match.lastgroup == "delimiter_row":
        return None  # a delimiter row's cells must be as many as the header's: equal ones only
    kind = found = match.lastgroup or ""
    if found == "strong":
        kind = "text"
    elif found == "atx":
        return f"#{len(match.group('atx'))}"
    if found == "bullet":
        kind = match.group("bullet")
    elif found == "delimiter":  # a list starting at 1 may interrupt a paragraph; the marker's
        number = match.group("number")  # width is how deep the item's own lines are indented
        kind = f"{match.group('delimiter')}{'1' if int(number) == 1 else 'n'}{len(number)}"
    if "|" in line:  # above a delimiter row, a line of as many cells is a table's header
        text = line[match.end():] if found in {"bullet", "delimiter"} else line
        return f"{kind}|{len(row_cells(text))}"
    return kind


def _kind(line: str) -> str:
    """A line's shape, or the line itself: two equal lines are read alike wherever they stand."""
    return shape(line) or "line:" + line


@dataclass
class Run:
    start: int   # the first unit's first line, in the source
    period: int  # lines in a unit
    units: int
    cut: int = 0  # where the units left out were, in the text markdown-it read

    @property
    def removed(self) -> int:
        """Source lines left out: every unit but the first two and the last two."""
        return (self.units - 4) * self.period

    @property
    def gap(self) -> int:
        """The first source line left out (the third unit's)."""
        return self.start + 2 * self.period


def find_runs(shapes: list[str], min_units: int = MIN_UNITS) -> list[Run]:
    """Maximal runs of at least ``min_units`` units (5 at least: four are kept), shortest
    period first, left to right."""
    min_units = max(min_units, 5)
    runs: list[Run] = []
    index, count = 0, len(shapes)
    while index < count:
        if shapes[index] == "blank":
            # Blank lines alone are no run (between a loose list's bullets they belong to one,
            # and copying them is no cheaper than reading them): a run may start after them.
            while index < count and shapes[index] == "blank":
                index += 1
            continue
        for period in range(1, MAX_PERIOD + 1):
            stop = index + period
            while stop < count and shapes[stop] == shapes[stop - period]:
                stop += 1
            units = (stop - index) // period
            if units >= min_units:
                runs.append(Run(index, period, units))
                index += units * period
                break
        else:
            index += 1
    return runs


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
    runs = find_runs([kinds.get(line) or kinds.setdefault(line, _kind(line)) for line in lines],
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
