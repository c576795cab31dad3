"""The blocks of a text whose runs markdown-it read once (``watcher.notes.runs.read``), put back at
their source lines, with the blocks of the units it did not read built from their own lines.

Each run is checked first, in markdown-it's reading of the collapsed text: the second unit's
blocks lie within it and are of kinds built here, or a list, a pipe table or a leaf block goes
on past it the way its lines allow (``Expansion``); a run that fails is read whole.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass

from markdown_it.common.utils import mdTrim

from watcher.notes.blocks import (
    HEADING_MARKS,
    Block,
    Bullet,
    Code,
    Heading,
    ListBlock,
    Other,
    Paragraph,
    Span,
    plain_text,
)
from watcher.notes.runs.shapes import Run
from watcher.notes.tables import Table, row_cells
from watcher.notes.text import markdown_it_text, trim_blank


def _atx_content(line: str) -> str:
    """markdown-it's content of an ATX heading (rules_block/heading.py): after the marks,
    without a closing run of ``#`` that follows a space."""
    level = len(line) - len(line.lstrip("#"))
    end = len(line.rstrip(" \t"))
    if end <= level:
        return ""
    closing = len(line[:end].rstrip("#"))
    if level < closing < end and line[closing - 1] in " \t":
        end = closing
    return mdTrim(line[level:end])


def _plain_bullet(bullet: Bullet, lines: list[str]) -> bool:
    """A bullet of nothing but its own lines: no nested list, no code."""
    own = lines[bullet.start:bullet.end]
    return not bullet.children and not any(bullet.code) and bullet.own == own and \
        bullet.whole == own


def _bullet(lines: list[str], start: int, end: int, texts: dict[str, str]) -> Bullet:
    if end - start == 1:
        return Bullet.one_line(lines[start], start, texts)
    own = lines[start:end]
    return Bullet(start, end, own, [False] * len(own), [], own, list(range(start, end)))


def _heading(lines: list[str], level: int, start: int, end: int,
             read: dict[str, tuple[str, str]]) -> Heading:
    """The heading ``_Reader`` makes of these lines; ``read`` keeps the title and source of
    each text seen (a run of headings often repeats one)."""
    text = "\n".join(lines[start:end])
    known = read.get(text)
    if known is None:
        if end - start == 1:
            content = _atx_content(markdown_it_text(lines[start]))
        else:  # setext: the paragraph above the underline (rules_block/lheading.py)
            content = mdTrim(markdown_it_text("\n".join(lines[start:end - 1])))
        known = read[text] = plain_text(content), HEADING_MARKS.sub("", lines[start]).strip()
    return Heading(level, known[0], known[1], start)


@dataclass(frozen=True)
class _Part:
    """One block of a unit, by its lines' offsets from the unit's first line."""

    kind: str  # "heading", "list", or the name of a block read as its lines (``_LEAVES``)
    start: int
    end: int
    span_kind: str
    level: int = 0
    bullets: tuple[tuple[int, int], ...] = ()


def _template(spanned: Iterable[tuple[Block, Span]], lines: list[str], first: int, cut: int
              ) -> list[_Part] | None:
    """The second unit's blocks as parts to build the units left out from, or None when
    they do not lie within it, leave a line of it out, or are not built here."""
    parts: list[_Part] = []
    covered: set[int] = set()
    for block, span in spanned:
        if span.start >= cut:
            break
        if span.end <= first:
            continue
        if span.start < first or span.end > cut:
            return None
        covered.update(range(span.start, span.end))
        offsets = span.start - first, span.end - first
        if isinstance(block, Heading):
            parts.append(_Part("heading", *offsets, span.kind, level=block.level))
        elif isinstance(block, Paragraph | Code | Other) and span.kind != "html_block":
            # (an HTML comment ends at any line holding "-->", which a line of its shape may)
            parts.append(_Part(type(block).__name__, *offsets, span.kind))
        elif isinstance(block, ListBlock) and all(_plain_bullet(b, lines)
                                                  for b in block.bullets):
            parts.append(_Part("list", *offsets, span.kind, bullets=tuple(
                (b.start - first, b.end - first) for b in block.bullets)))
        else:
            return None
    if any(lines[line].strip(" \t") and line not in covered for line in range(first, cut)):
        return None  # a line no block holds (a reference definition's): read it whole
    return parts


_LEAVES: dict[str, type[Paragraph | Code | Other]] = {
    kind.__name__: kind for kind in (Paragraph, Code, Other)}


def _built(parts: list[_Part], lines: list[str], first: int, read: dict[str, tuple[str, str]],
           texts: dict[str, str]) -> Iterable[tuple[Block, Span]]:
    for part in parts:
        start, end = first + part.start, first + part.end
        span = Span(start, end, part.span_kind)
        if part.kind == "heading":
            yield _heading(lines, part.level, start, end, read), span
        elif part.kind in _LEAVES:
            yield _LEAVES[part.kind](start, end, "\n".join(trim_blank(lines[start:end]))), span
        else:
            yield ListBlock(start, end, [_bullet(lines, first + a, first + b, texts)
                                         for a, b in part.bullets]), span


class Expansion:
    """The blocks of the collapsed text put back at their source lines, with the units left
    out built again; ``failed`` are the runs whose reading cannot be copied."""

    def __init__(self, lines: list[str], kept: list[str], runs: list[Run],
                 spanned: list[tuple[Block, Span]]) -> None:
        self.lines = lines
        self.kept = kept
        self.runs = runs
        self.spanned = spanned
        self.starts = [span.start for _, span in spanned]
        self.cuts = [run.cut for run in runs]
        self.shifts = [0]
        for run in runs:
            self.shifts.append(self.shifts[-1] + run.removed)
        self.failed: set[int] = set()
        self.parts: dict[int, list[_Part]] = {}
        self.headings: dict[str, tuple[str, str]] = {}
        self.texts: dict[str, str] = {}  # a bullet line's text, read once per distinct line
        self.rows: dict[int, list[list[str]]] = {}  # a table's rows left out, split in cells
        self.bullets: dict[int, list[tuple[int, int]]] = {}  # a list's bullets in a unit
        self._check()

    def shift(self, line: int) -> int:
        """Source lines left out before ``line`` of the collapsed text."""
        return self.shifts[bisect.bisect_right(self.cuts, line)]

    def _inside(self, span: Span) -> list[int]:
        """The runs whose cut lies strictly inside the span: the block goes on past it."""
        low = bisect.bisect_right(self.cuts, span.start)
        high = bisect.bisect_left(self.cuts, span.end)
        return list(range(low, high))

    def _check(self) -> None:
        across: set[int] = set()
        for block, span in self.spanned:
            inside = self._inside(span)
            if inside and not self._goes_on(block, span, inside):
                self.failed.update(inside)
            across.update(inside)
        for number, run in enumerate(self.runs):
            if number in across:
                continue
            first = run.cut - run.period
            near = max(bisect.bisect_right(self.starts, first) - 1, 0)  # the block before it
            following = (self.spanned[index] for index in range(near, len(self.spanned)))
            parts = _template(following, self.kept, first, run.cut)
            if parts is None:
                self.failed.add(number)
            else:
                self.parts[number] = parts

    def _goes_on(self, block: Block, span: Span, inside: list[int]) -> bool:
        if isinstance(block, ListBlock):
            starts = {bullet.start: bullet for bullet in block.bullets}
            return all(self._list_goes_on(starts, number) for number in inside)
        if isinstance(block, Table):
            return span.kind == "table_open" and all(
                self._table_goes_on(block, span, number) for number in inside)
        return self._leaf_goes_on(block, span, inside)

    def _list_goes_on(self, starts: dict[int, Bullet], number: int) -> bool:
        """The second unit's lines are bullets of the list, of their own lines alone (a loose
        list's take the blank line after them), and the next kept unit's first line starts
        one: so are the lines of every unit left out, the same way."""
        run = self.runs[number]
        first = line = run.cut - run.period
        spans: list[tuple[int, int]] = []
        while line < run.cut:
            bullet = starts.get(line)
            if bullet is None or bullet.end > run.cut or not _plain_bullet(bullet, self.kept):
                return False
            spans.append((bullet.start - first, bullet.end - first))
            line = bullet.end
        self.bullets[number] = spans  # from the start of each unit left out
        return run.cut in starts

    def _table_goes_on(self, table: Table, span: Span, number: int) -> bool:
        """The second unit's lines are body rows, and every row left out has the header's number
        of cells (markdown-it stops a table once it has filled in too many)."""
        run = self.runs[number]
        if run.cut - run.period < span.start + 2:
            return False
        rows = [row_cells(line) for line in self.lines[run.gap:run.gap + run.removed]]
        self.rows[number] = rows
        return all(len(row) == len(table.header) for row in rows)

    def _leaf_goes_on(self, block: Block, span: Span, inside: list[int]) -> bool:
        """A fenced block, paragraph, quote or HTML block that began before the second unit
        and holds the next kept unit's first line holds the units between: the second unit's
        lines went on with it, so theirs do (but an HTML block of kinds 1 to 5 ends at a line
        holding ">", which a line of the same shape may hold). One that began with the second
        unit may be ended by the next ("```" opens a fence, and the same line closes it)."""
        if not isinstance(block, Code | Paragraph | Other):
            return False
        for number in inside:
            run = self.runs[number]
            if span.start >= run.cut - run.period:
                return False
            if span.kind == "html_block" and any(
                    ">" in line for line in self.lines[run.gap:run.gap + run.removed]):
                return False
        return True

    # ---- putting the blocks back -----------------------------------------------------------
    def expand(self) -> list[tuple[Block, Span]]:
        out: list[tuple[Block, Span]] = []
        pending = 0  # the next run no block has reached yet
        for block, span in self.spanned:
            while pending < len(self.runs) and self.cuts[pending] <= span.start:
                out.extend(self._copies(pending))
                pending += 1
            inside = self._inside(span)
            out.append(self._across(block, span, inside) if inside else self._moved(block, span))
            pending += len(inside)
        while pending < len(self.runs):
            out.extend(self._copies(pending))
            pending += 1
        return out

    def _copies(self, number: int) -> list[tuple[Block, Span]]:
        run = self.runs[number]
        parts, gap, read = self.parts[number], run.gap, self.headings
        out: list[tuple[Block, Span]] = []
        for unit in range(run.units - 4):
            out.extend(_built(parts, self.lines, gap + unit * run.period, read, self.texts))
        return out

    def _moved(self, block: Block, span: Span) -> tuple[Block, Span]:
        delta = self.shift(span.start)
        if delta:
            _move(block, delta)
        return block, Span(span.start + delta, span.end + delta, span.kind)

    def _across(self, block: Block, span: Span, inside: list[int]) -> tuple[Block, Span]:
        start = span.start + self.shift(span.start)
        end = span.end + self.shift(span.end - 1)
        moved = Span(start, end, span.kind)
        if isinstance(block, ListBlock):
            return self._longer_list(block, inside, moved), moved
        if isinstance(block, Table):
            return self._longer_table(block, span, inside, moved), moved
        assert isinstance(block, Code | Paragraph | Other)
        return type(block)(start, end, "\n".join(trim_blank(self.lines[start:end]))), moved

    def _longer_list(self, block: ListBlock, inside: list[int], span: Span) -> ListBlock:
        bullets: list[Bullet] = []
        waiting = list(inside)
        for bullet in block.bullets:
            while waiting and bullet.start >= self.cuts[waiting[0]]:
                number = waiting.pop(0)
                run, spans = self.runs[number], self.bullets[number]
                bullets.extend(_bullet(self.lines, first + start, first + end, self.texts)
                               for first in range(run.gap, run.gap + run.removed, run.period)
                               for start, end in spans)
            _move(bullet, self.shift(bullet.start))
            bullets.append(bullet)
        return ListBlock(span.start, span.end, bullets)

    def _longer_table(self, table: Table, span: Span, inside: list[int], moved: Span) -> Table:
        rows: list[list[str]] = []
        body = span.start + 2  # the header and delimiter rows come first
        position = 0
        for number in inside:
            rows.extend(table.rows[position:self.cuts[number] - body])
            position = self.cuts[number] - body
            rows.extend([plain_text(mdTrim(cell) if cell else "") for cell in cells]
                        for cells in self.rows[number])
        rows.extend(table.rows[position:])
        return Table(moved.start, moved.end, table.header, rows, table.outside)


def _move(block: Block | Bullet, delta: int) -> None:
    if isinstance(block, Bullet):
        block.start += delta
        block.end += delta
        block.numbers = [number + delta for number in block.numbers]
        for child in block.children:
            _move(child, delta)
        return
    block.start += delta
    if isinstance(block, ListBlock):
        block.end += delta
        for bullet in block.bullets:
            _move(bullet, delta)
    elif not isinstance(block, Heading):
        block.end += delta
