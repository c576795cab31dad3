"""Slack's message layout: pieces (``blocks``) packed into sections and messages within
Slack's limits, cut on line boundaries only.

Slack's limits, and how close we pack to them:
  * 50 blocks a message, at most 3,000 characters in a section's text and 150 in a header
    (https://api.slack.com/reference/block-kit/blocks): messages take ``MAX_BLOCKS`` (50)
    blocks, and sections are filled to ``SECTION_CHARS``.
  * A message's ``text`` is cut after 40,000 characters
    (https://api.slack.com/methods/chat.postMessage, ``msg_too_long``). With blocks that text
    is only the notification, which Slack does not show; ours is a one-line summary.
  * All the blocks of one message together: past about 12,000 characters of text Slack answers
    ``msg_blocks_too_long``, a ceiling it does not document (seen at 13,297 characters of
    markdown blocks and at 11,341 of rich text: github.com/slackapi/bolt-js issues 2509 and
    2867). So a message is kept under ``max_chars`` of block JSON (non-ASCII escaped, which
    errs on the safe side, as ``tests/fakes/slack.py`` counts it); the default,
    ``MESSAGE_CHARS``, is that ceiling.

Long content is split between entries where it can be, else between lines; a code block is
closed before a cut and reopened after it, and an entry that goes on in the next message says
so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from handlers.slack.blocks import Piece, Titled, context, section
from handlers.slack.text import FENCE, Line

SECTION_CHARS = 2950       # Slack's 3,000, less room for characters it may count twice
MAX_BLOCKS = 50            # Slack's own limit; a "continues" marker is reserved when one is due
MESSAGE_CHARS = 12_000     # block JSON per message: Slack's undocumented msg_blocks_too_long
CONTINUES = "_…continues in the next message_"
_ATOMS = re.compile(r"<[^<>]*>|&[a-z#0-9]{1,10};|\s+|[^\s<&]+|[<&]")


@dataclass
class SlackMessage:
    text: str                                   # the notification / fallback text
    blocks: list[dict[str, Any]]
    in_thread: bool = False

    def payload_chars(self) -> int:
        return len(json.dumps(self.blocks, separators=(",", ":")))


def block_chars(block: dict[str, Any]) -> int:
    """What a block adds to its message's block JSON (Slack's size limit counts that)."""
    return len(json.dumps(block, separators=(",", ":"))) + 1


def _wrap(text: str, limit: int) -> Iterator[str]:
    """A line longer than a section, cut between words and never inside a link or entity."""
    piece = ""
    for atom in _ATOMS.findall(text):
        while len(atom) > limit:  # one enormous word: cut it where it must be cut
            yield piece + atom[: limit - len(piece)]
            atom, piece = atom[limit - len(piece):], ""
        if len(piece) + len(atom) > limit:
            yield piece
            piece = ""
        piece += atom
    if piece or not text:
        yield piece


@dataclass
class Section:
    text: str
    mid_item: bool = False  # the next section goes on with the same item


def titled_sections(title: str, entries: list[list[Line]],
                    limit: int = SECTION_CHARS) -> list[Section]:
    """A titled list of items as sections of at most ``limit`` characters, split between items
    where possible, else between lines (code blocks closed and reopened around the cut)."""
    out: list[Section] = []
    current: list[str] = [f"*{title}*"] if title else []

    def size() -> int:
        return sum(len(line) + 1 for line in current)

    def flush(mid_item: bool, opening: str) -> None:
        nonlocal current
        if current:
            out.append(Section("\n".join(current), mid_item))
        current = [opening] if opening else []

    for entry in entries:
        if len(current) > 1 and size() + sum(len(line.text) + 1 for line in entry) > limit:
            flush(False, f"*{title}* _(continued)_" if title else "")
        in_code = False
        for line in entry:
            for piece in _wrap(line.text, limit - 60):
                if size() + len(piece) + 1 > limit - len(FENCE) - 1:
                    if in_code:
                        current.append(FENCE)
                    flush(True, "_(continued)_")
                    if in_code:
                        current.append(FENCE)
                current.append(piece)
            if line.code and line.text == FENCE:
                in_code = not in_code
    flush(False, "")
    return out


@dataclass
class Packer:
    """Fills messages with blocks, starting a new message at the block or size limit."""

    max_chars: int
    in_thread: bool
    fallback: str
    messages: list[SlackMessage] = field(default_factory=list)

    def _current(self) -> SlackMessage:
        if not self.messages:
            self.messages.append(SlackMessage(self.fallback, [], self.in_thread))
        return self.messages[-1]

    def fits(self, block: dict[str, Any], reserve: int = 0) -> bool:
        message = self._current()
        size = block_chars(block)
        return (len(message.blocks) < MAX_BLOCKS - (1 if reserve else 0)
                and message.payload_chars() + size + reserve <= self.max_chars)

    def add(self, block: dict[str, Any], *, after_cut: bool = False,
            goes_on: bool = False) -> None:
        """``after_cut``: the block goes on with an item the previous block began; if a new
        message must start, the old one says the item continues. ``goes_on``: the next block
        goes on with this one's item, so room for that line is kept after it (a full message
        given the line anyway would be refused: a 51st block, or blocks past ``max_chars``)."""
        reserve = block_chars(context(CONTINUES)) if goes_on else 0
        if self._current().blocks and not self.fits(block, reserve):
            if after_cut:
                self._current().blocks.append(context(CONTINUES))
            self.messages.append(SlackMessage(self.fallback, [], self.in_thread))
        self._current().blocks.append(block)

    def add_sections(self, sections: Iterable[Section]) -> None:
        previous_mid = False
        for part in sections:
            self.add(section(part.text), after_cut=previous_mid, goes_on=part.mid_item)
            previous_mid = part.mid_item

    def add_lines(self, title: str, lines: Iterable[str]) -> None:
        """A titled list of one-line entries."""
        self.add_sections(titled_sections(title, [[Line(line)] for line in lines]))

    def add_piece(self, piece: Piece) -> None:
        if not isinstance(piece, Titled):
            self.add(piece)
        elif piece.marks_cuts:
            self.add_sections(titled_sections(piece.title, piece.entries))
        else:
            for part in titled_sections(piece.title, piece.entries):
                self.add(section(part.text))


def pack(pieces: Iterable[Piece], max_chars: int, *, in_thread: bool, fallback: str
         ) -> list[SlackMessage]:
    """The pieces in as few messages as Slack's limits allow, in order."""
    packer = Packer(max_chars, in_thread=in_thread, fallback=fallback)
    for piece in pieces:
        packer.add_piece(piece)
    return packer.messages


def piece_blocks(piece: Piece) -> list[dict[str, Any]]:
    """A piece as the blocks it becomes in a message with room for all of it."""
    if not isinstance(piece, Titled):
        return [piece]
    return [section(part.text) for part in titled_sections(piece.title, piece.entries)]


def plan_texts(messages: list[SlackMessage]) -> str:
    """The exact payloads as JSON, for ``--dry-run``."""
    return json.dumps([{"thread_reply": m.in_thread, "text": m.text, "blocks": m.blocks}
                       for m in messages], indent=2, ensure_ascii=False)
