"""The pieces a Slack message is made of: Block Kit blocks, built and validated with
slack_sdk's own models, and titled lists of entries (``Titled``) that the packing
(``layout``) cuts into sections. What ``render`` draws and ``layout`` packs.

Slack's limits on a block (https://api.slack.com/reference/block-kit/blocks): 3,000 characters
in a section's text (``layout`` fills them to less), 150 in a header (cut here, with an
ellipsis). A header is ``plain_text``: its text is made safe by ``text.plain``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import (
    Block,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from handlers.slack.text import Line, plain

HEADER_CHARS = 150


def _checked(block: Block) -> dict[str, Any]:
    block.validate_json()  # raises SlackObjectFormationError on a limit we got wrong
    return block.to_dict()


def header(text: str) -> dict[str, Any]:
    text = plain(text)
    if len(text) > HEADER_CHARS:
        text = text[: HEADER_CHARS - 1] + "…"
    return _checked(HeaderBlock(text=PlainTextObject(text=text, emoji=False)))


def section(mrkdwn: str) -> dict[str, Any]:
    return _checked(SectionBlock(text=MarkdownTextObject(text=mrkdwn)))


def context(mrkdwn: str) -> dict[str, Any]:
    return _checked(ContextBlock(elements=[MarkdownTextObject(text=mrkdwn)]))


@dataclass(frozen=True)
class Titled:
    """A titled list of entries (an item's lines, or one line), cut into sections by the
    packing; ``marks_cuts``: an entry cut between two messages says it goes on."""

    title: str
    entries: list[list[Line]]
    marks_cuts: bool = True


Piece = dict[str, Any] | Titled  # a Block Kit block, or a titled list of entries
