"""Gives flattened release notes their structure back, as markdown the parser reads like any.

Notes reach people copied through other pages, and two losses are common: every line break
gone (a whole release on one line, ``### **Beta Features** #### PJRT runtime * Checkout …``), or
all markup gone (one line per paragraph, headings as bare lines, as the Cloud TPU release page
renders them). Well-formed markdown passes through unchanged.
"""

from __future__ import annotations

import itertools
import re

from watcher.notes.headings import HeadingLookup
from watcher.notes.text import find_prs

FLAT_LINE_CHARS = 400    # a line this long holding several markers was once many lines
MIN_MARKERS = 3          # inline heading or bullet markers that make a line flattened
PROSE_WORDS = 30         # a bare line this long, citing nothing, is a paragraph
HEADING_WORDS = 8        # a bare line this short may be a heading
# A marker followed by a fence's backticks or tildes is left alone: splitting there would open a
# code block the notes never had. So is a bullet marker followed by another one: "- - - x" is
# nesting written on one line, not bullets that lost their line breaks.
_HEADING_MARK = re.compile(r"\s(#{1,6})\s+(?=\S)(?!```|~~~)")
_BULLET_MARKS = {marker: re.compile(rf"\s\{marker}\s+(?=\S)(?!```|~~~|[-*+](?:\s|$))")
                 for marker in "*-"}
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s|[-*+>|<]|\d{1,9}[.)]\s|```|~~~)")
_BOLD_TITLE = re.compile(r"^(#{1,6})\s+(\*\*[^*]{1,100}\*\*)\s+(.+)$")


def _known(names: HeadingLookup, text: str) -> bool:
    return bool(names.kind_of_heading(text) or names.area_ids(text))


def _split_heading(line: str, names: HeadingLookup) -> list[str]:
    """``# Highlights We are excited …`` → the heading, then its paragraph: where a flattened
    heading ends is where its bold title ends, or after the longest known name it starts with."""
    match = re.match(r"^(#{1,6})\s+(.*)$", line)
    if match is None or len(match.group(2).split()) <= HEADING_WORDS:
        return [line]
    bold = _BOLD_TITLE.match(line)
    if bold:
        return [f"{bold.group(1)} {bold.group(2)}", "", bold.group(3)]
    marks, words = match.group(1), match.group(2).split()
    for count in range(min(HEADING_WORDS, len(words) - 1), 0, -1):
        if _known(names, " ".join(words[:count])):
            return [f"{marks} {' '.join(words[:count])}", "", " ".join(words[count:])]
    return [" ".join(words)]  # no title to tell from its text: a paragraph


def _unflatten(line: str, names: HeadingLookup) -> list[str]:
    text = _HEADING_MARK.sub(lambda m: f"\n\n{m.group(1)} ", line)
    for marker, pattern in _BULLET_MARKS.items():
        if len(pattern.findall(text)) >= MIN_MARKERS:
            text = pattern.sub(f"\n{marker} ", text)
    out: list[str] = []
    for piece in text.split("\n"):
        stripped = piece.strip()
        if stripped.startswith("#"):
            out.extend(["", *_split_heading(stripped, names), ""])
        else:
            out.append(stripped)
    return out


def _is_flattened(line: str) -> bool:
    if len(line) < FLAT_LINE_CHARS:
        return False
    headings = len(_HEADING_MARK.findall(line))
    bullets = max(len(pattern.findall(line)) for pattern in _BULLET_MARKS.values())
    return headings >= MIN_MARKERS or bullets >= MIN_MARKERS


def _is_bare(lines: list[str]) -> bool:
    """One line per paragraph and no markup at all, yet citing PRs: a rendered page's text."""
    content = [line for line in lines if line.strip()]
    citing = (line for line in content if find_prs(line))
    return (len(content) >= 4 and not any(_MARKUP.match(line) for line in content)
            and len(list(itertools.islice(citing, 2))) == 2)


def _cites(source: str) -> bool:
    """Whether any line may cite a PR (``find_prs`` needs a "#" or a "/pull/")."""
    return "#" in source or "/pull/" in source


def _bare_line(lines: list[str], index: int, names: HeadingLookup, seen_heading: bool) -> str:
    line = lines[index].strip()
    words = len(line.split())
    following = lines[index + 1:index + 3]
    if words <= HEADING_WORDS and not find_prs(line):
        if names.kind_of_heading(line):
            return f"## {line}"
        if names.area_ids(line):
            return f"### {line}"
        if len(following) == 2 and all(find_prs(other) for other in following) and not \
                line.endswith("."):
            return f"- {line}:"  # a label over the lines that cite PRs ("Op Lowering")
    if not seen_heading or (words >= PROSE_WORDS and not find_prs(line)):
        return line
    return f"- {line}"


def _from_bare(lines: list[str], names: HeadingLookup) -> list[str]:
    """Each bare line as a heading, a paragraph or a bullet; the lines citing PRs right below a
    label line are nested under it, as the page showed them."""
    content = [line for line in lines if line.strip()]
    out: list[str] = []
    seen_heading = in_group = False
    for index in range(len(content)):
        converted = _bare_line(content, index, names, seen_heading)
        seen_heading = seen_heading or converted.startswith("#")
        if converted.endswith(":") and converted.startswith("- "):
            in_group = True
            out.append(converted)
        elif in_group and converted.startswith("- ") and find_prs(converted):
            out.append(f"  {converted}")
        else:
            in_group = False
            out.extend(["", converted, ""])
    return out


def restructure(source: str, names: HeadingLookup) -> str:
    lines = source.split("\n")
    if _cites(source) and _is_bare(lines):
        return "\n".join(_from_bare(lines, names))
    if not any(_is_flattened(line) for line in lines if len(line) >= FLAT_LINE_CHARS):
        return source
    out: list[str] = []
    for line in lines:
        out.extend(_unflatten(line, names) if _is_flattened(line) else [line])
    return "\n".join(out)
