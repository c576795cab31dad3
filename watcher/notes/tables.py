"""Tables in release notes: GitHub's pipe tables (read from markdown-it's tokens by
``watcher.notes.blocks``) and HTML ``<table>`` blocks, read here cell by cell; and which cells
of a highlight table the notes' entries tell again (``Retold``)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from html.parser import HTMLParser

from markdown_it.common.utils import mdTrim
from markdown_it.rules_block.table import escapedSplit

from watcher.notes.text import markdown_it_text


@dataclass
class Table:
    """A pipe table or an HTML ``<table>``: the header row (may be empty), then the rows."""

    start: int
    end: int
    header: list[str]
    rows: list[list[str]]
    outside: str = ""  # text of an HTML table that stands in no cell


class _TableCells(HTMLParser):
    """Collects the text of each ``<td>``/``<th>`` cell, row by row."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.outside: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"tr", "td", "th", "table"} and self._cell is not None:
            self.handle_endtag("td")  # a cell left open ends where the next one starts
        if tag == "tr":
            self.rows.append([])
        elif tag in {"td", "th"}:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in {"td", "th"} and self._cell is not None:
            if not self.rows:
                self.rows.append([])
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        (self.outside if self._cell is None else self._cell).append(data)

    def close(self) -> None:
        super().close()
        if self._cell is not None:  # an unclosed last cell still holds its text
            self.handle_endtag("td")


def html_table(html: str, start: int, end: int) -> Table | None:
    if "<table" not in html.lower():
        return None
    parser = _TableCells()
    parser.feed(html)
    parser.close()
    rows = [row for row in parser.rows if any(row)]
    outside = " ".join("".join(parser.outside).split())
    if len(rows) > 1 and ("<th" in html.lower() or _looks_like_header(html, rows[0])):
        return Table(start, end, rows[0], rows[1:], outside)
    return Table(start, end, [], rows, outside)


def _looks_like_header(html: str, first: list[str]) -> bool:
    """PyTorch's highlight tables head their columns with ``<strong>Beta</strong>`` cells;
    a row of one bold phrase in a long sentence is content, not a header."""
    first_row = html.lower().split("</tr>", 1)[0]
    bold = first_row.count("<strong>") + first_row.count("<b>")
    return bold >= len(first) and all(len(cell.split()) <= 3 for cell in first)


def row_cells(line: str) -> list[str]:
    """markdown-it's cells of a pipe-table row (rules_block/table.py), as many as it counts for
    a header; its character loop only matters where a backslash may escape a pipe."""
    text = mdTrim(markdown_it_text(line))
    columns = escapedSplit(text) if "\\" in text else text.split("|")
    if columns and columns[0] == "":
        columns.pop(0)
    if columns and columns[-1] == "":
        columns.pop()
    return columns


RETOLD = 0.6  # a cell whose words are this much an entry title's (Jaccard), or all in it
CHECKS = 50_000  # cell-title comparisons one body may cost; real notes need a few thousand
_WORD = re.compile(r"\w+")


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


class Retold:
    """The entries' titles, indexed by their words: a cell is compared only with the titles
    that hold one of its rarest words. A title sharing 60 % of the words of the two, or all of
    the cell's, holds at least one of any ``|cell| - ceil(0.6 |cell|) + 1`` of the cell's words
    (prefix filtering), so the answer is the same as comparing with every title; without the
    index, 2,000 titles and 3,000 cells took 11 s. Past ``CHECKS`` comparisons the remaining
    cells are kept: an item told twice, never one lost."""

    def __init__(self, titles: list[str]) -> None:
        self.titles = [words for words in dict.fromkeys(map(_words, titles)) if words]
        self.holding: dict[str, list[int]] = {}
        for number, words in enumerate(self.titles):
            for word in words:
                self.holding.setdefault(word, []).append(number)
        self.checks = 0

    def retells(self, cell: str) -> bool:
        words = _words(cell)
        if not words:
            return False
        # One more probe than the bound needs, so that rounding never leaves a title out.
        probes = len(words) - math.ceil(RETOLD * len(words)) + 2
        rarest = sorted(words, key=lambda word: len(self.holding.get(word, ())))[:probes]
        seen: set[int] = set()
        for word in rarest:
            for number in self.holding.get(word, ()):
                if number in seen:
                    continue
                seen.add(number)
                self.checks += 1
                if self.checks > CHECKS:
                    return False
                title = self.titles[number]
                if len(words & title) / len(words | title) >= RETOLD or words <= title:
                    return True
        return False
