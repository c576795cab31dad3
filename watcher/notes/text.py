"""Small text helpers shared by the notes pipeline, each linear in the length of its input.

Release bodies are untrusted: a run of 100,000 backticks must not stall a poll. So code blocks
are found line by line (a fence opens and closes on its own line, CommonMark §4.5), never with
a regex that spans lines and backtracks, and every other pattern here is anchored on a literal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_PR_URL = re.compile(r"https?://github\.com/[\w.-]{1,100}/[\w.-]{1,100}/pull/(\d{1,7})")
_PR_REF = re.compile(r"(?<![\w&/])#(\d{1,7})\b")
_SPACED_REF = re.compile(r"\(\s?#\s(\d{3,7})\s?\)")  # "(# 4390 )": a rendered page's link text
_FENCE_OPEN = re.compile(r"`{3,}|~{3,}")


def normalise_body(body: str | None) -> str:
    """CRLF and lone CR to LF: GitHub returns PyTorch bodies with CRLF line endings."""
    return (body or "").replace("\r\n", "\n").replace("\r", "\n")


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


def line_references(line: str) -> set[int]:
    """The PR numbers one line of prose cites (``[#1](…/pull/1)`` is one citation of 1)."""
    return {int(match.group(1)) for pattern in (_PR_URL, _PR_REF, _SPACED_REF)
            for match in pattern.finditer(line)}


def find_prs(text: str) -> tuple[int, ...]:
    """PR numbers referenced as ``#123``, ``(#1, #2)``, ``[#123](…/pull/123)`` or full PR URLs,
    in order of first mention. Code blocks are left out: ``# see #999`` in a snippet is not a
    reference."""
    prose = strip_code(text)
    found: dict[int, None] = {}
    for match in _PR_URL.finditer(prose):
        found.setdefault(int(match.group(1)))
    for pattern in (_PR_REF, _SPACED_REF):
        for match in pattern.finditer(prose):
            found.setdefault(int(match.group(1)))
    return tuple(found)


_REF_NOISE = re.compile(
    r"\[[^\]\n]{0,40}\]\(https?://[^)\s]{1,300}\)"   # [#123](…/pull/123)
    r"|https?://\S{1,300}"
    r"|#\d{1,7}\b"
    r"|\b(?:PRs?|pull requests?|see|e\.g\.|and|via)\b",
    re.IGNORECASE)


def only_references(text: str) -> bool:
    """``PRs: (#1, [#2](…))``: a line that holds references and nothing a reader needs."""
    rest = _REF_NOISE.sub(" ", text)
    return bool(find_prs(text)) and not any(char.isalnum() for char in rest)


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
