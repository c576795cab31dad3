"""Small text helpers shared by the notes pipeline, each linear in the length of its input.

Release bodies are untrusted: a run of 100,000 backticks must not stall a poll. So code blocks
are found line by line (a fence opens and closes on its own line, CommonMark §4.5), never with
a regex that spans lines and backtracks, and every other pattern here is anchored on a literal.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

_PR_URL = re.compile(r"https?://github\.com/([\w.-]{1,100}/[\w.-]{1,100})/pull/(\d{1,7})")
# Not an HTML character reference, written (``&#34``) or escaped (``&amp;#34``, which a table
# cell's text shows as ``&#34``): the body and the items read the same citations.
_PR_REF = re.compile(r"(?<![\w&/])(?<!&amp;)#(\d{1,7})\b")
_SPACED_REF = re.compile(r"\(\s?#\s(\d{3,7})\s?\)")  # "(# 4390 )": a rendered page's link text
_FENCE_OPEN = re.compile(r"`{3,}|~{3,}")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # CommonMark backslash escapes: TORCH\_LAZY


def normalise_body(body: str | None) -> str:
    """CRLF and lone CR to LF: GitHub returns PyTorch bodies with CRLF line endings."""
    return (body or "").replace("\r\n", "\n").replace("\r", "\n")


def markdown_it_text(text: str) -> str:
    """The text as markdown-it's tokens hold it: its ``normalize`` makes NUL U+FFFD."""
    return text.replace("\0", "\ufffd")


def unescape_markdown(text: str) -> str:
    """``TORCH\\_LAZY`` → ``TORCH_LAZY``: the characters CommonMark's backslashes escape."""
    return _ESCAPED.sub(r"\1", text) if "\\" in text else text


def folded(text: str) -> str:
    """Whitespace runs as one space: what a reader sees is the same text."""
    return " ".join(text.split())


def _fence_marker(line: str) -> str | None:
    """The fence a line opens, at any indentation: items nest fences under their bullets."""
    stripped = line.lstrip()
    match = _FENCE_OPEN.match(stripped)
    if match is None:
        return None
    marker = match.group(0)
    if marker[0] == "`" and "`" in stripped[match.end():]:
        return None  # "```foo```" is an inline code span, not a fence (CommonMark §4.5)
    return marker


def code_lines(lines: list[str]) -> Iterator[bool]:
    """For each line, whether it belongs to a fenced code block (the fences included)."""
    closing: str | None = None
    for line in lines:
        if closing is not None:
            stripped = line.strip()
            if stripped.startswith(closing[0]) and set(stripped) <= {closing[0]} and len(
                    stripped) >= len(closing):
                closing = None
            yield True
            continue
        marker = _fence_marker(line)
        if marker is not None:
            closing = marker
            yield True
        else:
            yield False


def strip_code(text: str, replacement: str = "") -> str:
    """The text without its fenced code blocks (each replaced by ``replacement``)."""
    if "```" not in text and "~~~" not in text:
        return text  # no fence anywhere (most items): nothing to split
    lines = text.split("\n")
    if not any("```" in line or "~~~" in line for line in lines):
        return text
    out: list[str] = []
    in_code_before = False
    for line, in_code in zip(lines, code_lines(lines), strict=True):
        if not in_code:
            out.append(line)
        elif not in_code_before and replacement:
            out.append(replacement)
        in_code_before = in_code
    return "\n".join(out)


_REF_NOISE = re.compile(
    r"\[[^\]\n]{0,40}\]\(https?://[^)\s]{1,300}\)"   # [#123](…/pull/123)
    r"|https?://\S{1,300}"
    r"|#\d{1,7}\b"
    r"|\b(?:PRs?|pull requests?|see|e\.g\.|and|via)\b",
    re.IGNORECASE)


def home_repository(text: str) -> str | None:
    """The repository most PR links of a release body point into (its own): a link to another
    project's PR ("the xformers fix") is a link, not a change of this release."""
    repos = Counter(m.group(1).lower() for m in _PR_URL.finditer(text))
    return repos.most_common(1)[0][0] if repos else None


@dataclass(frozen=True)
class References:
    """How a release body cites its PRs: ``#123``, ``(#1, #2)``, ``[#123](…/pull/123)`` or
    full PR URLs into ``home`` (any repository when ``home`` is None)."""

    home: str | None = None
    # A parse asks about the same bullet's text several times (is it a group? a label?).
    _found: dict[str, tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)

    def _cited(self, line: str) -> list[int]:
        """The line's citations in order; ``[#1351](…/other/repo/pull/1351)`` is a link into
        another project, so neither its address nor its label cites a PR of ours."""
        if "#" not in line and "/pull/" not in line:
            return []  # every citation has one of the two; most lines of a body have neither
        if "/pull/" not in line and "(" not in line:  # "#123"s alone, found in order
            return [int(number) for number in _PR_REF.findall(line)]
        found: list[tuple[int, int]] = []
        external: set[int] = set()
        if "/pull/" in line:
            for match in _PR_URL.finditer(line):
                if self.home is None or match.group(1).lower() == self.home:
                    found.append((match.start(), int(match.group(2))))
                else:
                    external.add(int(match.group(2)))
        # Each pattern only where its literal is: "#", and "(" for a spaced reference.
        for pattern in (_PR_REF, _SPACED_REF) if "(" in line else (_PR_REF,):
            found += [(m.start(), int(m.group(1))) for m in pattern.finditer(line)
                      if int(m.group(1)) not in external]
        return [number for _, number in sorted(found)]

    def in_line(self, line: str) -> set[int]:
        """The PR numbers one line of prose cites (``[#1](…/pull/1)`` is one citation)."""
        return set(self._cited(line))

    def in_prose_line(self, line: str) -> tuple[int, ...]:
        """PRs a heading or a table cell cites: one line of prose, never the start of a code block
        (``## ```(#12)`` cites #12)."""
        return tuple(dict.fromkeys(self._cited(line)))

    def find(self, text: str) -> tuple[int, ...]:
        """Every PR the text cites, in order of first mention; code blocks left out (``# see
        #999`` in a snippet is not a reference)."""
        found = self._found.get(text)
        if found is None:
            if "\n" in text or "```" in text or "~~~" in text:
                lines = strip_code(text).split("\n")
                found = tuple(dict.fromkeys(n for line in lines for n in self._cited(line)))
            else:  # one line that opens no fence (most bullets): nothing to strip
                found = tuple(dict.fromkeys(self._cited(text)))
            self._found[text] = found
        return found

    def only(self, text: str) -> bool:
        """``PRs: (#1, [#2](…))``: a line that holds references and nothing a reader needs."""
        rest = _REF_NOISE.sub(" ", text)
        return bool(self.find(text)) and not any(char.isalnum() for char in rest)


def find_prs(text: str) -> tuple[int, ...]:
    """PRs cited, whatever repository a PR link points into (see ``References``)."""
    if "#" not in text and "/pull/" not in text:
        return ()  # asked of every line of a body: most cite nothing
    return References().find(text)


TITLE_CHARS = 200  # a bold paragraph longer than this is emphasised prose, not a title


def bold_title(paragraph: str) -> str | None:
    """``**[Beta] torch.library.triton_op**`` → ``[Beta] torch.library.triton_op``: a paragraph
    that is one bold span and reads as a title. A lead-in (``**Example:**``) or an emphasised
    sentence (``**Note: … removed.**``) is not one, nor ``**a** and **b**`` (two spans)."""
    if paragraph[:8].lstrip()[:2] not in {"**", "__"}:
        return None  # most paragraphs: asked of each one, answered from its first characters
    text = paragraph.strip()
    if len(text) > TITLE_CHARS + 4 or len(text) < 5:
        return None
    mark = text[:2]
    inner = text[2:-2].strip() if text.endswith(mark) else ""
    if not inner or mark in inner or inner[-1] in ".:;!?,":
        return None
    return inner


def dedent(lines: list[str]) -> list[str]:
    """Lines without the indentation they share (blank lines ignored for the measure)."""
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    return [line[cut:].rstrip() for line in lines]


def trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]
