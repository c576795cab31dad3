"""Release-notes markdown → items, with the section path each item stands under.

Built on markdown-it-py's token stream (CommonMark), so fenced code whose lines start with ``#``
is code, not a heading, and nested bullets stay inside their parent item. Items are:

* top-level list items (their nested lists and continuation lines included),
* ``### title`` entries followed by prose or code, as BC-breaking notes are written,
* cells of an HTML table under a heading (the Highlights tables of PyTorch 2.x).

Item text is the item's own markdown source, dedented, so links and code spans survive for
notifiers that render them. Which headings are sections or areas is the classifier's business;
the parser only asks ``is_known_heading`` so a known area heading is never taken for an entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser

from markdown_it import MarkdownIt
from markdown_it.token import Token

from watcher.models import Item

_MARKER = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])[ \t]+")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1[`~]*[ \t]*$", re.MULTILINE | re.DOTALL)
_PR_URL = re.compile(r"https?://github\.com/[\w.-]+/[\w.-]+/pull/(\d+)")
_PR_REF = re.compile(r"(?<![\w&/])#(\d{1,7})\b")
_ANCHOR_ONLY = re.compile(r"^\[[^\]]*\]\(#[^)\s]*\)\s*$")


@dataclass
class ParsedNotes:
    items: list[Item]
    prose: list[str] = field(default_factory=list)  # text outside any item (intro, outro)
    truncated: bool = False


def normalise_body(body: str | None) -> str:
    """CRLF and lone CR to LF: GitHub returns PyTorch bodies with CRLF line endings."""
    return (body or "").replace("\r\n", "\n").replace("\r", "\n")


def find_prs(text: str) -> tuple[int, ...]:
    """PR numbers referenced as ``#123``, ``(#1, #2)``, ``[#123](…/pull/123)`` or full PR URLs.

    Code blocks are left out: a ``#123`` inside a snippet is not a reference.
    """
    prose = _FENCE.sub("", text)
    found: dict[int, None] = {}
    for match in _PR_URL.finditer(prose):
        found.setdefault(int(match.group(1)))
    for match in _PR_REF.finditer(prose):
        found.setdefault(int(match.group(1)))
    return tuple(found)


def _inline_text(token: Token) -> str:
    """Plain text of an inline token: ``**Bug fixes**`` → ``Bug fixes``; code spans keep content."""
    parts = []
    for child in token.children or ():
        if child.type in {"text", "code_inline"}:
            parts.append(child.content)
        elif child.type in {"softbreak", "hardbreak"}:
            parts.append(" ")
    return re.sub(r"\s+", " ", "".join(parts)).strip()


def _dedent_item(lines: Sequence[str]) -> str:
    if not lines:
        return ""
    first = _MARKER.sub("", lines[0], count=1)
    rest = [line for line in lines[1:]]
    indents = [len(line) - len(line.lstrip()) for line in rest if line.strip()]
    cut = min(indents) if indents else 0
    body = [first.strip()] + [line[cut:].rstrip() for line in rest]
    return "\n".join(body).strip()


def _split_lazy(lines: list[str]) -> tuple[list[str], str]:
    """Splits off unindented lines that CommonMark folds into an item as "lazy continuation".

    In the real notes such a line introduces the next bullets ("New meta tensor
    implementations for a few pytorch operators:"); a reader sees it as a lead-in, not as part
    of the bullet above it.
    """
    for position in range(1, len(lines)):
        line = lines[position]
        if line.strip() and not line[0].isspace() and not _MARKER.match(line):
            return lines[:position], "\n".join(lines[position:]).strip()
    return lines, ""


class _TableCells(HTMLParser):
    """Collects the text of each ``<td>``/``<th>`` cell, row by row."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in {"td", "th"}:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in {"td", "th"} and self._cell is not None:
            if not self.rows:
                self.rows.append([])
            self.rows[-1].append(re.sub(r"\s+", " ", "".join(self._cell)).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _table_items(html: str, section: tuple[str, ...]) -> list[Item] | None:
    if "<table" not in html.lower():
        return None
    parser = _TableCells()
    parser.feed(html)
    rows = [row for row in parser.rows if any(row)]
    if not rows:
        return []
    header, body = (rows[0], rows[1:]) if len(rows) > 1 else ([], rows)
    items: list[Item] = []
    for row in body:
        for column, cell in enumerate(row):
            if not cell:
                continue
            title = header[column] if column < len(header) and header[column] else ""
            path = (*section, title) if title else section
            items.append(Item(text=cell, section=path, prs=find_prs(cell)))
    return items


class _Walker:
    """One pass over the block tokens of a document, keeping the heading stack."""

    def __init__(self, source: str, tokens: list[Token],
                 is_known_heading: Callable[[str], bool]) -> None:
        self.lines = source.split("\n")
        self.tokens = tokens
        self.is_known_heading = is_known_heading
        self.stack: list[tuple[int, str]] = []
        self.items: list[Item] = []
        self.prose: list[str] = []
        self.lead = ""

    @property
    def section(self) -> tuple[str, ...]:
        return tuple(text for _, text in self.stack)

    def source(self, token: Token) -> list[str]:
        start, end = token.map or (0, 0)
        return self.lines[start:end]

    def walk(self) -> None:
        index = 0
        while index < len(self.tokens):
            token = self.tokens[index]
            if token.type == "heading_open":
                index = self.heading(index)
            elif token.type in {"bullet_list_open", "ordered_list_open"}:
                index = self.list_items(index)
            elif token.type == "paragraph_open":
                text = "\n".join(self.source(token)).strip()
                self.prose.append(text)
                self.lead = text
                index = self.skip_block(index)
            elif token.type == "html_block":
                self.html(token)
                index += 1
            elif token.level == 0 and token.map:
                self.prose.append("\n".join(self.source(token)).strip())
                index = self.skip_block(index)
            else:
                index += 1

    def skip_block(self, index: int) -> int:
        """Index after the block that opens at ``index`` (closing tokens share its level)."""
        token = self.tokens[index]
        if token.nesting != 1:
            return index + 1
        depth = 0
        for position in range(index, len(self.tokens)):
            depth += self.tokens[position].nesting
            if depth == 0:
                return position + 1
        return len(self.tokens)

    def next_block(self, index: int) -> Token | None:
        return self.tokens[index] if index < len(self.tokens) else None

    def heading(self, index: int) -> int:
        level = int(self.tokens[index].tag[1])
        title = _inline_text(self.tokens[index + 1])
        after = index + 3  # heading_open, inline, heading_close
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.lead = ""
        following = self.next_block(after)
        is_entry = (
            title
            and not self.is_known_heading(title)
            and (following is None or self._starts_entry(following, level))
        )
        if not is_entry:
            self.stack.append((level, title))
            return after
        return self.entry(index, level, after)

    def _starts_entry(self, token: Token, level: int) -> bool:
        if token.type == "heading_open":
            return int(token.tag[1]) <= level
        return token.type not in {"bullet_list_open", "ordered_list_open"}

    def entry(self, index: int, level: int, after: int) -> int:
        end = after
        while end < len(self.tokens):
            token = self.tokens[end]
            if token.type == "heading_open" and (
                int(token.tag[1]) <= level
                or self.is_known_heading(_inline_text(self.tokens[end + 1]))
            ):
                break
            end = self.skip_block(end)
        head_start = (self.tokens[index].map or (0, 0))[0]
        last = max((t.map[1] for t in self.tokens[after:end] if t.map), default=head_start + 1)
        title_line = re.sub(r"^\s*#{1,6}\s*", "", self.lines[head_start]).rstrip("# \t")
        body = "\n".join(self.lines[head_start + 1:last]).strip()
        text = f"{title_line}\n\n{body}" if body else title_line
        self.items.append(Item(text=text, section=self.section, prs=find_prs(text)))
        return end

    def list_items(self, index: int) -> int:
        end = self.skip_block(index)
        item_level = self.tokens[index].level + 1
        for token in self.tokens[index + 1:end]:
            if token.type != "list_item_open" or token.level != item_level:
                continue
            lines, lazy = _split_lazy(self.source(token))
            text = _dedent_item(lines)
            if text and not _ANCHOR_ONLY.match(text):  # not a TOC entry like [Bug fixes](#…)
                self.items.append(Item(text=text, section=self.section, prs=find_prs(text),
                                       lead=self.lead))
            if lazy:
                self.prose.append(lazy)
                self.lead = lazy
        return end

    def html(self, token: Token) -> None:
        table = _table_items(token.content, self.section)
        if table is None:
            self.prose.append(token.content.strip())
        else:
            self.items.extend(table)


_MARKDOWN = MarkdownIt("commonmark", {"html": True})


def parse_notes(body: str | None, *, is_known_heading: Callable[[str], bool] = lambda _: False,
                max_chars: int | None = None) -> ParsedNotes:
    """Split a release body into items. Bodies over ``max_chars`` are cut at a line boundary."""
    source = normalise_body(body)
    truncated = max_chars is not None and len(source) > max_chars
    if truncated:
        source = source[: source.rfind("\n", 0, max_chars) + 1 or max_chars]
    walker = _Walker(source, _MARKDOWN.parse(source), is_known_heading)
    walker.walk()
    return ParsedNotes(items=walker.items, prose=[p for p in walker.prose if p],
                       truncated=truncated)
