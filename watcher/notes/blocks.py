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
from typing import NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

from watcher.notes.tables import Table, html_table
from watcher.notes.text import dedent, trim_blank

_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
HEADING_MARKS = re.compile(r"^\s{0,3}#{1,6}[ \t]*|[ \t]+#+[ \t]*$")


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


@dataclass(slots=True)
class Bullet:
    """A list item. ``own`` are its lines without its nested bullets; ``code`` flags which of
    those lines are code. Its texts are read on first use and kept (by hand: a
    ``cached_property`` takes a lock on every read, and a body may hold 30,000 bullets)."""

    start: int
    end: int
    own: list[str]
    code: list[bool]
    children: list[Bullet] = field(default_factory=list)
    whole: list[str] = field(default_factory=list)  # all its lines, nested bullets included
    numbers: list[int] = field(default_factory=list)  # the source line of each of ``own``
    _first: str | None = field(default=None, init=False, repr=False, compare=False)
    _own_text: str | None = field(default=None, init=False, repr=False, compare=False)
    _text: str | None = field(default=None, init=False, repr=False, compare=False)
    _prose: str | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def one_line(cls, line: str, number: int, texts: dict[str, str]) -> Bullet:
        """A bullet of one line and nothing nested in it, its texts (all that line's) read;
        ``texts`` keeps each line's, for runs that repeat one."""
        own = [line]
        bullet = cls(number, number + 1, own, [False], [], own, [number])
        text = texts.get(line)
        if text is None:
            text = texts[line] = _item_text(own)
        bullet._first = bullet._own_text = bullet._text = bullet._prose = text
        return bullet

    @property
    def first_line(self) -> str:
        if self._first is None:
            self._first = _MARKER.sub("", self.own[0], count=1).strip() if self.own else ""
        return self._first

    def own_text(self) -> str:
        if self._own_text is None:
            self._own_text = _item_text(self.own)
        return self._own_text

    def text(self) -> str:
        if self._text is None:
            # Most bullets have no nested ones: their whole text is their own (read once).
            self._text = self.own_text() if self.whole == self.own else _item_text(self.whole)
        return self._text

    def prose(self) -> str:
        """Its own text without code lines, where references are looked for."""
        if self._prose is None:
            self._prose = self.own_text() if not any(self.code) else _item_text(
                [line for line, code in zip(self.own, self.code, strict=True) if not code])
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
class Other:
    """HTML that is not a table, block quotes, rules: kept as text, never an item alone."""

    start: int
    end: int
    text: str


Block = Heading | ListBlock | Paragraph | Code | Table | Other


class Span(NamedTuple):
    """The source lines a top-level block spans, and the markdown-it token that opened it."""

    start: int
    end: int
    kind: str


def _item_text(lines: list[str]) -> str:
    """A bullet's markdown without its marker, dedented: what a reader sees of it."""
    if len(lines) == 1:  # most bullets: one line, nothing to trim or dedent
        return _MARKER.sub("", lines[0], count=1).strip()
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
    return plain_text(token.content)


def plain_text(content: str) -> str:
    """``inline_text`` of an inline token's content (``watcher.notes.runs`` has no token)."""
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
        return [block for block, _ in self.spanned()]

    def spanned(self) -> list[tuple[Block, Span]]:
        """Each block with the lines it spans and the token that opened it (a setext heading
        spans its underline too; ``Heading.end`` does not)."""
        out: list[tuple[Block, Span]] = []
        index = 0
        while index < len(self.tokens):
            token = self.tokens[index]
            end = self.close(index)
            start_line, end_line = self.span(token)
            block = self.block(token, index, end)
            if block is not None:
                out.append((block, Span(start_line, end_line, token.type)))
            index = end
        return out

    def block(self, token: Token, index: int, end: int) -> Block | None:
        start_line, end_line = self.span(token)
        if token.type == "heading_open":
            source = HEADING_MARKS.sub("", self.lines[start_line]).strip()
            return Heading(int(token.tag[1]), inline_text(self.tokens[index + 1]), source,
                           start_line)
        if token.type in {"bullet_list_open", "ordered_list_open"}:
            return ListBlock(start_line, end_line, self.bullets(index, end))
        if token.type == "paragraph_open":
            return Paragraph(start_line, end_line, self.text(start_line, end_line))
        if token.type in {"fence", "code_block"}:
            return Code(start_line, end_line, self.text(start_line, end_line))
        if token.type == "table_open":
            return self.pipe_table(index, end, start_line, end_line)
        if token.type == "html_block" and (
                table := html_table(token.content, start_line, end_line)):
            return table
        if token.map:
            return Other(start_line, end_line, self.text(start_line, end_line))
        return None

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


def tokenize(lines: list[str]) -> list[tuple[Block, Span]]:
    """markdown-it's reading of these lines: each top-level block with its span
    (``watcher.notes.runs.read_blocks`` reads a body, runs of one shape once)."""
    return _Reader(lines, _MARKDOWN.parse("\n".join(lines))).spanned()
