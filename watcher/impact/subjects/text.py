"""An item's markdown split the way its subjects are read: the title sentence, the body's
sentences with their mentions (code spans and bare ``torch.`` names), and its code blocks,
each marked as the "before" or "after" half of a migration example when its label says so.

Everything here is one pass over a bounded prefix of the text: the reader looks at most
``MAX_TEXT`` characters, ``MAX_SENTENCES`` sentences and ``MAX_MENTIONS`` mentions, so a hostile
body costs the same as a long real one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["MARK", "CodeBlock", "Mention", "Parsed", "Role", "Sentence", "parse_item"]

MAX_TEXT = 60_000
MAX_SENTENCES = 400
MAX_MENTIONS = 400
MAX_BLOCKS = 24
MAX_SENTENCE = 4_000  # characters read of one sentence: longer is not prose
MAX_LABEL = 100
MARK = "\x00"  # where a mention stands in a sentence's text

Role = Literal["before", "after", "neutral"]


@dataclass(frozen=True)
class Mention:
    raw: str  # the span's text, or a bare dotted name
    code: bool  # written in backticks


@dataclass
class Sentence:
    """``text``: the sentence with each mention replaced by ``MARK`` (in order)."""

    text: str
    mentions: list[Mention]
    plain: str  # the sentence as written, backticks removed: what environment rules read
    title: bool = False


@dataclass
class CodeBlock:
    code: str
    label: str  # the prose line just above it ("Version 2.6.0", "Before:", "Deprecated:")
    role: Role = "neutral"


@dataclass
class Parsed:
    sentences: list[Sentence] = field(default_factory=list)
    blocks: list[CodeBlock] = field(default_factory=list)


_FENCE = re.compile(r"\s{0,8}(```|~~~)")
_BULLET = re.compile(r"\s{0,12}(?:[-*+]|\d{1,3}[.)])\s+")
_URL = re.compile(r"\]\([^)\s]{0,800}\)|https?://\S{0,800}")
_MENTION = re.compile(r"`([^`\n]{1,200})`"
                      r"|\b((?:torch|nn)\.[A-Za-z_]\w{0,80}(?:\.[A-Za-z_]\w{0,80}){0,12}(?:\(\))?)")
# A sentence ends at . ! ? followed by space and something that starts a sentence; "e.g." and
# friends do not end one.
_END = re.compile(r"(?<![.\s][a-z])(?<!\bvs)(?<!\betc)[.!?](?=\s+[A-Z`\[(\"'*])"
                  r"|\(#?\d{3,}[^()]{0,300}\)(?=\s+[A-Z`])|<br\s?/?>")


def parse_item(text: str) -> Parsed:
    """The item's sentences (the first one marked as its title) and its code blocks."""
    paragraphs, blocks = _split(text[:MAX_TEXT].replace("\r", ""))
    parsed = Parsed(blocks=blocks[:MAX_BLOCKS])
    budget = MAX_MENTIONS
    for number, paragraph in enumerate(paragraphs):
        for index, chunk in enumerate(_sentences(paragraph)):
            sentence = _sentence(chunk, budget)
            budget -= len(sentence.mentions)
            sentence.title = number == 0 and index == 0
            parsed.sentences.append(sentence)
            if len(parsed.sentences) >= MAX_SENTENCES:
                _mark_roles(parsed.blocks)
                return parsed
    _mark_roles(parsed.blocks)
    return parsed


def _split(text: str) -> tuple[list[str], list[CodeBlock]]:
    """Prose paragraphs (a bullet, a blank line or a table row starts one; a heading line is
    one) and code blocks, each with the last prose line above it as its label."""
    paragraphs: list[list[str]] = [[]]
    blocks: list[CodeBlock] = []
    code: list[str] | None = None
    table: list[str] = []
    label = ""
    for line in text.split("\n"):
        if code is None and line.lstrip().startswith("|"):
            table.append(line)
            continue
        if table:
            paragraphs += [[row] for row in _table_rows(table)]
            table = []
        if _FENCE.match(line):
            if code is None:
                code = []
            else:
                blocks += _halves(code, label)
                code, label = None, ""
            paragraphs.append([])
        elif code is not None:
            code.append(line)
        elif not line.strip():
            paragraphs.append([])
        else:
            if _BULLET.match(line) or line.startswith("#"):
                paragraphs.append([])
            paragraphs[-1].append(line.strip().lstrip("#").strip())
            label = line.strip()
    paragraphs += [[row] for row in _table_rows(table)]
    if code:
        blocks += _halves(code, label)
    return [" ".join(lines) for lines in paragraphs if lines], blocks


_SEPARATOR = re.compile(r"\s{0,8}:?-{1,200}:?\s{0,8}")
_NEW_COLUMN = re.compile(r"\b(?:new|after|replacement|instead|use|recommended|alternative|"
                         r"migrat\w*|now|future)\b", re.I)


def _table_rows(lines: list[str]) -> list[str]:
    """A markdown table as sentences, one a row: the cells of its old columns, then "is replaced
    by" and the cells of the columns whose header says new, after, replacement (or names the
    later of two versions), so the clause reader skips those as it skips any replacement."""
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
    rows = [row for row in rows if not all(_SEPARATOR.fullmatch(cell) for cell in row)]
    if len(rows) < 2:
        return [" ; ".join(row) for row in rows]
    header, body = rows[0], rows[1:]
    versions = [_version(cell) for cell in header]
    known = [version for version in versions if version is not None]
    latest = max(known) if len(known) >= 2 else None
    newer = [bool(_NEW_COLUMN.search(cell)) or (latest is not None and version == latest)
             for cell, version in zip(header, versions, strict=True)]
    sentences = []
    for row in body:
        old = [cell for cell, new in zip(row, newer, strict=False) if not new and cell]
        new = [cell for cell, new in zip(row, newer, strict=False) if new and cell]
        sentences.append(" ; ".join(old) + (" is replaced by " + " and ".join(new) if new else ""))
    return sentences


_HALF = re.compile(r"\s{0,8}#\s{0,3}(before|after)\b.{0,40}", re.IGNORECASE)


def _halves(lines: list[str], label: str) -> list[CodeBlock]:
    """One block holding both halves, split at its ``# before`` / ``# after`` comment lines."""
    blocks = [CodeBlock("", label)]
    for line in lines:
        if _HALF.fullmatch(line):
            blocks.append(CodeBlock("", line.strip()))
        else:
            blocks[-1].code += line + "\n"
    return [block for block in blocks if block.code.strip()]


def _sentences(paragraph: str) -> list[str]:
    chunks: list[str] = []
    start = 0
    for end in _END.finditer(paragraph):
        chunks.append(paragraph[start:end.end()])
        start = end.end()
    chunks.append(paragraph[start:])
    return [chunk.strip() for chunk in chunks if chunk.strip()]


def _sentence(chunk: str, budget: int) -> Sentence:
    """One sentence with its mentions (at most ``budget``) taken out; link targets dropped."""
    chunk = _URL.sub(" ", chunk[:MAX_SENTENCE]).replace("[`", "`")
    mentions: list[Mention] = []
    pieces: list[str] = []
    last = 0
    for match in _MENTION.finditer(chunk):
        if len(mentions) >= budget:
            break
        pieces.append(chunk[last:match.start()])
        pieces.append(MARK)
        last = match.end()
        raw = match[1] if match[1] is not None else match[2]
        mentions.append(Mention(raw, code=match[1] is not None))
    pieces.append(chunk[last:])
    return Sentence("".join(pieces), mentions, chunk.replace("`", ""))


_VERSION = re.compile(r"\b(\d+)\.(\d+)(?:\.\d+)?\b")
_BEFORE = re.compile(r"\b(?:before|previously|prior|old|deprecated|legacy|current)\b", re.I)
_AFTER = re.compile(r"\b(?:after|now|new|future|instead|recommended|updated|migrated?)\b", re.I)


def _mark_roles(blocks: list[CodeBlock]) -> None:
    """A migration example's halves: labels naming two versions order them (the older one is
    "before"); otherwise words ("Before", "Deprecated:", "Future:", "Now in ...") decide."""
    versions = {block_index: _version(block.label) for block_index, block in enumerate(blocks)}
    known = {version for version in versions.values() if version is not None}
    for block_index, block in enumerate(blocks):
        version = versions[block_index]
        if len(known) >= 2 and version is not None:
            block.role = "before" if version < max(known) else "after"
        elif len(block.label) > MAX_LABEL:  # a sentence above the block, not a label
            continue
        elif _BEFORE.search(block.label):
            block.role = "before"
        elif _AFTER.search(block.label):
            block.role = "after"


def _version(label: str) -> tuple[int, int] | None:
    if len(label) > MAX_LABEL:
        return None
    match = _VERSION.search(label)
    return (int(match[1]), int(match[2])) if match else None
