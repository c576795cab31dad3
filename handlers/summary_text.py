"""The console notifier's summaries, reshaped for services that show a title and a body: the
first line becomes the title; the rest stays plain text or becomes markdown.

Only the shape changes (indentation → nested lists, each line its own line); what the summary
says is ``handlers.console``'s, so every destination reads the same words.
"""

from __future__ import annotations

import re
import textwrap

_BULLET = re.compile(r"^([-+~…]) (.*)$")
# Left as they are: code spans (escapes would show inside them) and links (escapes break them).
_VERBATIM = re.compile(r"(`[^`\n]+`|https?://\S+)")
_SPECIAL = re.compile(r"([\\*_\[\]<>])")


def escape_markdown(text: str) -> str:
    """Release-note text shown as written: ``*``, ``_``, ``[``, ``<`` and a leading ``#`` are
    escaped so they emphasise, link or head nothing; code spans and URLs are kept."""
    parts = _VERBATIM.split(text)
    escaped = "".join(part if index % 2 else _SPECIAL.sub(r"\\\1", part)
                      for index, part in enumerate(parts))
    return "\\" + escaped if escaped.startswith("#") else escaped


def _markdown_line(line: str, in_list: bool) -> tuple[str, bool]:
    """One summary line → (markdown line, whether it is a list item)."""
    depth = (len(line) - len(line.lstrip(" "))) // 2
    text = line.strip()
    match = _BULLET.match(text)
    if match is None and not (in_list and depth > 1):
        return escape_markdown(text) + "  ", False  # two spaces: a line break, not a reflow
    if match is not None:
        sign, rest = match.groups()
        text = rest if sign == "-" else f"{sign} {rest}"
    return "  " * max(0, depth - 1) + "- " + escape_markdown(text), True


def to_markdown(body: str) -> str:
    """An indented plain-text summary body as markdown: lines stay lines, bullets become
    (nested) list items, and a blank line separates a list from the text around it."""
    lines: list[str] = []
    in_list = False
    for line in body.splitlines():
        if not line.strip():
            lines.append("")
            in_list = False
            continue
        converted, is_item = _markdown_line(line, in_list)
        if lines and lines[-1] and is_item != in_list:
            lines.append("")
        lines.append(converted)
        in_list = is_item
    return "\n".join(lines).strip()


def title_and_body(summary: str, *, markdown: bool) -> tuple[str, str]:
    """``format_event``/``format_digest`` output → (title, body)."""
    title, _, rest = summary.partition("\n")
    body = textwrap.dedent(rest).strip("\n")
    return title.strip(), to_markdown(body) if markdown else body
