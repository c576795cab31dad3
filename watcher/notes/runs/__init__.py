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
(``expand``).

Before a unit is copied, its reading is checked: its blocks lie within it (headings,
paragraphs, rules, quotes, code, lists of bullets without nested blocks), or its lines are
bullets of a list that goes on past it, rows of a pipe table with the header's number of cells,
or lines of a code block, paragraph, quote or HTML block that began before it and goes on past
it. A run read any other way is given to markdown-it whole, so the blocks are always exactly
markdown-it's (``tests/test_runs.py`` compares the two over every real note and thousands of
generated bodies).

``shapes`` says what shape a line is and finds the runs, ``read`` hands markdown-it the
collapsed text and ``expand`` puts the blocks back at their source lines. The three depend on
each other one way: shapes, then expand, then read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.notes.runs.read import read_blocks as read_blocks
    from watcher.notes.runs.read import read_spanned as read_spanned
    from watcher.notes.runs.shapes import MIN_UNITS as MIN_UNITS
    from watcher.notes.runs.shapes import Run as Run
    from watcher.notes.runs.shapes import find_runs as find_runs
    from watcher.notes.runs.shapes import shape as shape

_EXPORTS = {
    "find_runs": "shapes",
    "MIN_UNITS": "shapes",
    "read_blocks": "read",
    "read_spanned": "read",
    "Run": "shapes",
    "shape": "shapes",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
