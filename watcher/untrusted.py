"""Text from GitHub (release names, tags, bodies) is untrusted: neutralised at every exit.

A terminal obeys escape sequences (ESC), rings on BEL and rewrites a line after CR; a log line
split by LF reads as two events; a right-to-left override makes ``txt.exe`` read as ``exe.txt``.
So C0 and C1 control characters, Unicode bidirectional controls and the line and paragraph
separators are shown as visible escapes (``\\x1b``, ``\\u202e``) before text is printed, logged
or posted. They are never just deleted: a tag ``v\\x001`` must not read as ``v1``. Line breaks
and tabs survive only where a field may hold them; in a one-line field a line break shows as
``\\n``.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

# C0 (but tab and line feed), DEL, C1, the bidi controls: ALM, LRM/RLM, embeddings, overrides,
# isolates (Unicode TR9 §2), and LINE/PARAGRAPH SEPARATOR, which editors and str.splitlines
# take for line breaks (Unicode TR13 §5).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
                       "\u202a-\u202e\u2066-\u2069]")
_VISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                      "\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    char = match.group(0)
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100
                                else f"\\u{ord(char):04x}")


def clean_text(text: str | None) -> str:
    """A multi-line field (a release body, an item): ``\\r\\n`` and ``\\r`` become line breaks,
    lines and tabs are kept, every other control shows as an escape."""
    return _CONTROLS.sub(_visible, (text or "").replace("\r\n", "\n").replace("\r", "\n"))


def clean_line(text: str | None) -> str:
    """A one-line field (a release name, a tag, a log message's argument): a tab becomes a
    space, every other control, line breaks included, shows as an escape (``\\n``), so the
    field can never start a line of its own nor hide what it holds."""
    return escape_controls((text or "").replace("\t", " "))


def escape_controls(text: str) -> str:
    """Every control character, line breaks included, as a visible escape (``\\n``,
    ``\\x1b``, ``\\u202e``): for a log line, which must stay one line and show what was there."""
    return _VISIBLE.sub(_visible, text)


def safe_url(url: str) -> str | None:
    """An http(s) URL fit to put in a Slack link or a terminal hyperlink, percent-encoded so
    that no space, control, ``<``, ``>`` or ``|`` remains to end it early; None for any other
    scheme (``javascript:``) or a URL without a host."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        return None
    return quote(clean_line(url), safe=":/?#[]@!$&'()*+,;=%~-._")
