"""The shapes of lines, and the runs of same-shaped units a body repeats (``find_runs``).

A line's shape says everything about it that block parsing looks at (what it starts, whether it
can interrupt a paragraph, how many cells it has for a table's header); any other line is only
ever the shape of an equal line. A *unit* is one to ``MAX_PERIOD`` lines whose shapes come
round again; a run is at least ``MIN_UNITS`` of them (the package docstring says why).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from watcher.notes.tables import row_cells

MIN_UNITS = 16    # shorter runs cost markdown-it too little to be worth the bookkeeping
MAX_PERIOD = 4    # "## Distributed", "- x (#1)" is a unit of two lines

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
    reference definition): such a line is only ever the same shape as itself (``kind_of``)."""
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


def kind_of(line: str) -> str:
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
