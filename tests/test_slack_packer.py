"""Slack's packer (``handlers.slack.layout``) cuts at the limits and nowhere sooner, and loses
nothing: over random item lengths (hypothesis), every section is within its limit, no message
holds more blocks than Slack takes (50: docs.slack.dev/reference/block-kit/blocks) or more
block JSON than it is allowed, a cut comes only where the next item or piece would not have
fitted, a code block cut in two is closed and reopened, and the pieces joined give back every
line, in order."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fakes.slack import MAX_BLOCKS as SLACK_MAX_BLOCKS
from fakes.slack import MAX_SECTION_TEXT
from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.slack.layout import (
    MAX_BLOCKS,
    MESSAGE_CHARS,
    SECTION_CHARS,
    Packer,
    section,
    titled_sections,
)
from handlers.slack.text import Line

FENCE = "```"
CONTINUED = "_(continued)_"


def prose(index: int, length: int, *, one_word: bool = False) -> str:
    """``length`` characters of words (or one unbreakable word), distinct per ``index``."""
    if one_word:
        return (f"W{index}" + "h" * length)[:length]
    words, size = [], 0
    while size < length:
        words.append(f"w{index}" + "abcdefghijk"[: (len(words) * 7) % 11])
        size += len(words[-1]) + 1
    return " ".join(words)[:length].rstrip() or ("" if length == 0 else "x")


@st.composite
def entries(draw: st.DrawFn, most: int = 30) -> list[list[Line]]:
    """Items as rendered lines: a first line, then prose lines and code blocks, of lengths
    from nothing to past a whole section."""
    lengths = st.one_of(st.integers(0, 90), st.integers(0, 90), st.integers(0, 3_200))
    out: list[list[Line]] = []
    for _ in range(draw(st.integers(1, most))):
        index = len(out)
        entry = [Line(prose(index * 100, draw(lengths)) or f"item {index}")]
        for part in range(draw(st.integers(0, 3))):
            number = index * 100 + part + 1
            if draw(st.booleans()):
                code = [Line(prose(number * 10 + k, draw(lengths)), code=True)
                        for k in range(draw(st.integers(0, 5)))]
                entry += [Line(FENCE, code=True), *code, Line(FENCE, code=True)]
            entry.append(Line(prose(number, draw(lengths), one_word=draw(st.booleans()))))
        out.append(entry)
    return out


TITLES = st.sampled_from(["", "Bug fixes (150)", "Distributed", "BC-breaking (3)"])
LIMITS = st.one_of(st.just(SECTION_CHARS), st.integers(200, SECTION_CHARS))


def own_lines(title: str, sections: list[Any]) -> list[list[str]]:
    """Each section's lines without the title or continuation marker it starts with; each
    section's code blocks are whole (a cut inside one closes it and reopens it after)."""
    out = []
    for index, part in enumerate(sections):
        lines = part.text.split("\n")
        if index == 0:
            opener = f"*{title}*" if title else None
        elif sections[index - 1].mid_item:
            opener = CONTINUED
        else:
            opener = f"*{title}* {CONTINUED}" if title else None
        if opener is not None:
            assert lines[0] == opener
            lines = lines[1:]
        assert lines and lines.count(FENCE) % 2 == 0, part.text
        out.append(lines)
    return out


def rejoined(wanted: list[str], pieces: list[list[str]]) -> list[tuple[int, int]]:
    """Joins each section's pieces back into ``wanted``'s lines, in order and whole; returns,
    per section, which wanted line it starts in and at which character."""
    starts, line, offset = [], 0, 0
    for own in pieces:
        starts.append((line, offset))
        for piece in own:
            assert line < len(wanted), f"{piece!r}: more text than was given"
            assert wanted[line].startswith(piece, offset), (wanted[line], offset, piece)
            offset += len(piece)
            if offset == len(wanted[line]):
                line, offset = line + 1, 0
    assert (line, offset) == (len(wanted), 0), "text lost"
    return starts


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(title=TITLES, items=entries(), limit=LIMITS)
def test_sections_are_cut_at_the_limit_and_joined_give_back_every_line(
        title: str, items: list[list[Line]], limit: int) -> None:
    sections = titled_sections(title, items, limit)
    assert all(len(part.text) <= limit <= MAX_SECTION_TEXT for part in sections)
    assert not sections[-1].mid_item
    pieces = [[line for line in own if line != FENCE] for own in own_lines(title, sections)]
    flat = [(number, line.text) for number, entry in enumerate(items) for line in entry
            if line.text != FENCE]
    starts = rejoined([text for _, text in flat], pieces)
    for index in range(1, len(sections)):
        before, (line, offset) = sections[index - 1], starts[index]
        if not before.mid_item:  # cut between items: the next one whole would not fit
            number = flat[line][0]
            assert offset == 0 and flat[line - 1][0] == number - 1
            size = sum(len(item.text) + 1 for item in items[number])
            assert len(before.text) + 1 + size > limit
        elif sections[index].text.split("\n")[1] != FENCE:  # cut outside code, inside an item
            following = pieces[index][0]
            assert len(before.text) + 1 + len(following) > limit - len(FENCE) - 2


# What a message whose last item goes on in the next one ends with.
MARKER = {"type": "context",
          "elements": [{"type": "mrkdwn", "text": "_…continues in the next message_"}]}


def unpacked(messages: list[Any]) -> list[dict[str, Any]]:
    """The sections of every message in order, the "continues in the next message" lines
    checked (the last block of a message whose last section goes on) and left out."""
    out = []
    for number, message in enumerate(messages):
        blocks = message.blocks
        if blocks[-1]["type"] == "context":
            assert number < len(messages) - 1 and blocks[-1] == MARKER
            blocks = blocks[:-1]
        assert all(block["type"] == "section" for block in blocks)
        out += blocks
    return out


def chars(blocks: list[dict[str, Any]]) -> int:
    """Block JSON as Slack's msg_blocks_too_long counts it (and ``tests/fakes/slack.py``)."""
    return len(json.dumps(blocks, separators=(",", ":")))


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(title=TITLES, items=entries(most=80), limit=LIMITS,
       max_chars=st.one_of(st.just(MESSAGE_CHARS), st.integers(3_500, MESSAGE_CHARS)))
def test_messages_hold_at_most_slacks_blocks_and_chars_and_start_only_when_full(
        title: str, items: list[list[Line]], limit: int, max_chars: int) -> None:
    sections = titled_sections(title, items, limit)
    packer = Packer(max_chars, in_thread=True, fallback="PyTorch 9.0 released")
    packer.add_sections(sections)
    messages = packer.messages
    assert unpacked(messages) == [section(part.text) for part in sections]
    for message in messages:
        assert 1 <= len(message.blocks) <= MAX_BLOCKS <= SLACK_MAX_BLOCKS
        assert chars(message.blocks) <= max_chars
        assert message.in_thread and message.text == "PyTorch 9.0 released"
    first = 0  # the index in ``sections`` of a message's first block
    for before in messages[:-1]:
        kept = [block for block in before.blocks if block != MARKER]
        first += len(kept)
        # The next block did not fit: no room for it (and, if its item goes on, for the
        # line saying so after it), by blocks or by characters.
        goes_on = sections[first].mid_item
        after = section(sections[first].text)
        room = chars([MARKER]) + 1 if goes_on else 0
        assert (len(kept) + 1 + goes_on > SLACK_MAX_BLOCKS
                or chars([*kept, after]) + room > max_chars)
        assert (before.blocks[-1] == MARKER) == sections[first - 1].mid_item


def test_a_message_holds_exactly_slacks_50_blocks() -> None:
    packer = Packer(MESSAGE_CHARS, in_thread=False, fallback="f")
    for number in range(120):
        packer.add(section(f"• item {number}"))
    assert [len(message.blocks) for message in packer.messages] == [50, 50, 20]
    texts = [block["text"]["text"] for message in packer.messages for block in message.blocks]
    assert texts == [f"• item {number}" for number in range(120)]


def one_item_in_two_sections() -> list[Any]:
    parts = titled_sections("", [[Line("a" * 150), Line("b" * 150)]], limit=200)
    assert [part.mid_item for part in parts] == [True, False]
    return parts


def test_an_item_that_goes_on_is_not_begun_where_saying_so_would_pass_50_blocks() -> None:
    """Found by the property above: the 50th block began an item that went on, and the line
    saying so became a 51st, which Slack refuses (invalid_blocks)."""
    packer = Packer(MESSAGE_CHARS, in_thread=True, fallback="f")
    packer.add_sections([part for number in range(49)
                         for part in titled_sections("", [[Line(f"• item {number}")]])])
    packer.add_sections(one_item_in_two_sections())
    assert [len(message.blocks) for message in packer.messages] == [49, 2]
    assert unpacked(packer.messages)[-2:] == [section(p.text) for p in one_item_in_two_sections()]


def test_an_item_that_goes_on_is_not_begun_where_saying_so_would_pass_max_chars() -> None:
    """Found by the property above: the line saying the item goes on took the message past
    ``max_chars`` (at the default, Slack's msg_blocks_too_long)."""
    first = section("x" * 2_000)
    begun = section(one_item_in_two_sections()[0].text)
    packer = Packer(chars([first, begun]) + 20, in_thread=True, fallback="f")
    packer.add(first)
    packer.add_sections(one_item_in_two_sections())
    assert all(chars(message.blocks) <= packer.max_chars for message in packer.messages)
    assert [len(message.blocks) for message in packer.messages] == [1, 2]
