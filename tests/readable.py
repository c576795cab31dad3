"""What a reader can read of a message, as words: for checking that every item reaches them
whole, whatever markup it was rendered with (Slack mrkdwn, markdown, plain text)."""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Iterable

_MD_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\s]*(?:\([^)\s]*\))?[^)\s]*\)")
_SLACK_LINK = re.compile(r"<([^|<>]*)\|([^<>]*)>|<([^|<>]*)>")
_MARKERS = re.compile(r"_\(continued\)_|_…continues in the next message_")


def words(text: str) -> str:
    """Lower-case word characters only, one space apart, with spaces at both ends."""
    return " " + " ".join(re.findall(r"[^\W_]+", text.lower())) + " "


_FENCE_INFO = re.compile(r"^\s*(```|~~~)\S*", re.MULTILINE)


def markdown_words(text: str) -> str:
    """An item as the notes wrote it: link labels kept, their addresses dropped, and a code
    fence's language name (Slack's code blocks have none) left out."""
    text = _FENCE_INFO.sub(" ", text.replace("\\_", "_"))
    return words(html.unescape(_MD_LINK.sub(r"\1", text)))


def slack_words(text: str) -> str:
    """Slack mrkdwn as shown: ``<url|label>`` reads as its label, ``<url>`` as the address."""
    shown = _SLACK_LINK.sub(lambda m: m.group(2) if m.group(1) is not None else m.group(3),
                            _MARKERS.sub(" ", text))
    return words(html.unescape(shown).replace("\u200b", ""))


def message_text(messages: Iterable[object]) -> str:
    parts = []
    for message in messages:
        for block in getattr(message, "blocks", None) or []:
            if block.get("type") == "section":
                parts.append(block["text"]["text"])
    return "\n".join(parts)


def missing_items(shown: str, texts: Iterable[str]) -> list[str]:
    """The item texts whose words do not appear, in order and whole, as often as they were
    written, in ``shown`` (already reduced to words)."""
    wanted = Counter(texts)
    return [text for text, times in wanted.items()
            if _occurrences(shown, markdown_words(text)) < times]


def _occurrences(haystack: str, needle: str) -> int:
    """Overlapping count: two identical items in a row share the space between them."""
    count, start = 0, haystack.find(needle)
    while start >= 0:
        count += 1
        start = haystack.find(needle, start + 1)
    return count
