"""markdown-it's token stream → the document's top-level blocks, with their source lines.

The parser above decides what is an item; this module only says what the markdown *is*:
headings, paragraphs, code, HTML, pipe tables, other blocks (quotes, rules), and lists whose
bullets know their own lines, the lines of their code, and their nested bullets. Working from
CommonMark tokens means a ``#`` comment inside fenced code is code, not a heading, and a nested
bullet is nested however it is indented.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from html.parser import HTMLParser

from markdown_it import MarkdownIt
from markdown_it.token import Token

from watcher.notes.text import dedent, trim_blank

_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_HEADING_MARKS = re.compile(r"^\s{0,3}#{1,6}[ \t]*|[ \t]+#+[ \t]*$")


@dataclass
class Heading:
    level: int
    title: str   # plain text: ``## **Bug fixes**`` → ``Bug fixes``
    source: str  # the heading as written, without its ``#`` marks (keeps code spans)
    start: int

    @property
    def end(self) -> int:
        return self.start + 1

    @property
    def text(self) -> str:
        return self.source


@dataclass
class Bullet:
    """A list item. ``own`` are its lines without its nested bullets; ``code`` flags which of
    those lines are code."""

    start: int
    end: int
    own: list[str]
    code: list[bool]
    children: list[Bullet] = field(default_factory=list)
    whole: list[str] = field(default_factory=list)  # all its lines, nested bullets included
    numbers: list[int] = field(default_factory=list)  # the source line of each of ``own``

    @cached_property
    def first_line(self) -> str:
        return _MARKER.sub("", self.own[0], count=1).strip() if self.own else ""

    @cached_property
    def _own_text(self) -> str:
        return _item_text(self.own)

    @cached_property
    def _text(self) -> str:
        return _item_text(self.whole)

    @cached_property
    def _prose(self) -> str:
        return _item_text([line for line, code in zip(self.own, self.code, strict=True)
                           if not code])

    def own_text(self) -> str:
        return self._own_text

    def text(self) -> str:
        return self._text

    def prose(self) -> str:
        """Its own text without code lines, where references are looked for."""
        return self._prose


@dataclass
class ListBlock:
    start: int
    end: int
    bullets: list[Bullet]

    @property
    def text(self) -> str:
        return "\n".join(bullet.text() for bullet in self.bullets)


@dataclass
class Paragraph:
    start: int
    end: int
    text: str


@dataclass
class Code:
    start: int
    end: int
    text: str


@dataclass
class Table:
    """A pipe table or an HTML ``<table>``: the header row (may be empty), then the rows."""

    start: int
    end: int
    header: list[str]
    rows: list[list[str]]
    outside: str = ""  # text of an HTML table that stands in no cell


@dataclass
class Other:
    """HTML that is not a table, block quotes, rules: kept as text, never an item alone."""

    start: int
    end: int
    text: str


Block = Heading | ListBlock | Paragraph | Code | Table | Other


def _item_text(lines: list[str]) -> str:
    """A bullet's markdown without its marker, dedented: what a reader sees of it."""
    lines = trim_blank(lines)
    if not lines:
        return ""
    first = _MARKER.sub("", lines[0], count=1).strip()
    return "\n".join([first, *dedent(lines[1:])]).strip()


INLINE_CHARS = 2000  # a heading or cell longer than this is not worth inline parsing
_INLINE_MARKUP = re.compile(r"[`*_\[\]<>&\\!]")


def inline_text(token: Token) -> str:
    """Plain text of an inline token: emphasis dropped, code spans keep their content.

    The block parse leaves inline content unparsed (markdown-it's link-label scan is
    quadratic in a run of ``[``, and items are cut from the source, not from inline tokens);
    the few short strings whose plain text we need are parsed here."""
    content = token.content
    if len(content) > INLINE_CHARS:
        return " ".join(content.replace("`", "").split())
    if not _INLINE_MARKUP.search(content):
        return " ".join(content.split())  # most headings: plain words, nothing to parse
    parts = []
    for child in _INLINE.parseInline(content)[0].children or ():
        if child.type in {"text", "code_inline"}:
            parts.append(child.content)
        elif child.type in {"softbreak", "hardbreak"}:
            parts.append(" ")
    return " ".join("".join(parts).split())


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


def _html_table(html: str, start: int, end: int) -> Table | None:
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


class _Reader:
    """One pass over the token stream."""

    def __init__(self, lines: list[str], tokens: list[Token]) -> None:
        self.lines = lines
        self.tokens = tokens

    def span(self, token: Token) -> tuple[int, int]:
        start, end = token.map or (0, 0)
        return start, end

    def text(self, start: int, end: int) -> str:
        """The block's source lines, blank ones around it left out (headings and lists keep
        their lines in their own way, so only the blocks read as text ask for this)."""
        return "\n".join(trim_blank(self.lines[start:end]))

    def close(self, index: int) -> int:
        """Index just after the block opened at ``index``."""
        if self.tokens[index].nesting != 1:
            return index + 1
        depth = 0
        for position in range(index, len(self.tokens)):
            depth += self.tokens[position].nesting
            if depth == 0:
                return position + 1
        return len(self.tokens)

    def blocks(self) -> list[Block]:
        out: list[Block] = []
        index = 0
        while index < len(self.tokens):
            token = self.tokens[index]
            end = self.close(index)
            start_line, end_line = self.span(token)
            if token.type == "heading_open":
                source = _HEADING_MARKS.sub("", self.lines[start_line]).strip()
                out.append(Heading(int(token.tag[1]), inline_text(self.tokens[index + 1]),
                                   source, start_line))
            elif token.type in {"bullet_list_open", "ordered_list_open"}:
                out.append(ListBlock(start_line, end_line, self.bullets(index, end)))
            elif token.type == "paragraph_open":
                out.append(Paragraph(start_line, end_line, self.text(start_line, end_line)))
            elif token.type in {"fence", "code_block"}:
                out.append(Code(start_line, end_line, self.text(start_line, end_line)))
            elif token.type == "table_open":
                out.append(self.pipe_table(index, end, start_line, end_line))
            elif token.type == "html_block" and (
                    table := _html_table(token.content, start_line, end_line)):
                out.append(table)
            elif token.map:
                out.append(Other(start_line, end_line, self.text(start_line, end_line)))
            index = end
        return out

    def bullets(self, index: int, end: int) -> list[Bullet]:
        """The list items of the list opened at ``index``, each with its nested bullets."""
        level = self.tokens[index].level + 1
        found: list[Bullet] = []
        position = index + 1
        while position < end:
            token = self.tokens[position]
            item_end = self.close(position)
            if token.type == "list_item_open" and token.level == level:
                found.append(self.bullet(position, item_end))
            position = item_end
        return found

    def bullet(self, index: int, end: int) -> Bullet:
        start, stop = self.span(self.tokens[index])
        children: list[Bullet] = []
        nested: set[int] = set()
        code: set[int] = set()
        position = index + 1
        while position < end - 1:
            token = self.tokens[position]
            block_end = self.close(position)
            if token.type in {"bullet_list_open", "ordered_list_open"}:
                children.extend(self.bullets(position, block_end))
                nested.update(range(*self.span(token)))
            elif token.type in {"fence", "code_block"}:
                code.update(range(*self.span(token)))
            position = block_end
        own_numbers = [n for n in range(start, stop) if n not in nested]
        return Bullet(start, stop, [self.lines[n] for n in own_numbers],
                      [n in code for n in own_numbers], children,
                      self.lines[start:stop], own_numbers)

    def pipe_table(self, index: int, end: int, start: int, stop: int) -> Table:
        header: list[str] = []
        rows: list[list[str]] = []
        row: list[str] = []
        in_head = False
        for token in self.tokens[index:end]:
            if token.type == "thead_open":
                in_head = True
            elif token.type == "thead_close":
                in_head = False
            elif token.type == "tr_open":
                row = []
            elif token.type == "inline":
                row.append(inline_text(token))
            elif token.type == "tr_close" and in_head:
                header = row
            elif token.type == "tr_close":
                rows.append(row)
        return Table(start, stop, header, rows)


_MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable("table").disable("inline")
_INLINE = MarkdownIt("commonmark", {"html": True})


def read_blocks(source: str) -> tuple[list[str], list[Block]]:
    """The source's lines and its top-level blocks."""
    lines = source.split("\n")
    return lines, _Reader(lines, _MARKDOWN.parse(source)).blocks()
