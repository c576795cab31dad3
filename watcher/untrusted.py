"""Text from GitHub (release names, tags, bodies) is untrusted: neutralised at every exit.

A terminal obeys escape sequences (ESC), rings on BEL and rewrites a line after CR; a log line
split by LF reads as two events; a right-to-left override makes ``txt.exe`` read as ``exe.txt``.
So C0 and C1 control characters and Unicode bidirectional controls are dropped before text is
printed, logged or posted; line breaks and tabs survive only where a field may hold them.
"""

from __future__ import annotations

import re

# C0 (but tab and line feed), DEL, C1, and the bidi controls: ALM, LRM/RLM, embeddings,
# overrides, isolates (Unicode TR9 §2).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                       "\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"[\t\n]+")


def clean_text(text: str | None) -> str:
    """A multi-line field (a release body, an item): controls dropped, ``\\r`` gone, lines and
    tabs kept."""
    return _CONTROLS.sub("", (text or "").replace("\r\n", "\n").replace("\r", "\n"))


def clean_line(text: str | None) -> str:
    """A one-line field (a release name, a tag, a log message's argument): controls dropped and
    line breaks turned into spaces, so it can never start a line of its own."""
    return _LINE_BREAKS.sub(" ", clean_text(text))


_VISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escape_controls(text: str) -> str:
    """Every control character, line breaks included, as a visible escape (``\\n``,
    ``\\x1b``, ``\\u202e``): for a log line, which must stay one line and show what was there."""
    def visible(match: re.Match[str]) -> str:
        char = match.group(0)
        named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
        return named.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100
                                   else f"\\u{ord(char):04x}")
    return _VISIBLE.sub(visible, text)
