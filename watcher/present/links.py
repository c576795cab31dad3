"""Links in release-note text, as a terminal shows them.

A markdown link to a pull request, ``[#123](https://github.com/pytorch/pytorch/pull/123)``,
reads ``#123``. On a terminal (standard output a TTY) the text is an OSC 8 hyperlink
(https://gist.github.com/egmontkob/eb114294efbcd5adb1944c9f3cb5feda), so ``#123`` opens the
PR; elsewhere (a pipe, a cron mail, a file) it stays plain. A link whose label is not the PR it
leads to shows its address after the label, so a label can never pass for another target;
links that are not http(s) (``javascript:``) show their label only. Code spans are left as
written. Every pattern is bounded, so a hostile body costs linear time.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from watcher.untrusted import safe_url

_LINK = re.compile(
    r"\[(?P<label>[^\[\]\n]{1,300})\]\((?P<url>(?:[^()\s]|\([^()\s]{0,200}\)){1,2000})\)"
)
_CODE = re.compile(r"`[^`\n]*`")
_PR_REF = re.compile(r"(?<![\w&/#])#(\d{1,7})\b")
_PR_LABEL = re.compile(r"#?(\d{1,7})")
_PR_URL = re.compile(r"https://github\.com/([\w.-]{1,100}/[\w.-]{1,100})/pull/(\d{1,7})/?")
_ADDRESS_LIKE = re.compile(r"[.:/\\]")  # a label holding one of these could pose as an address
_OSC = "\x1b]8;;"
_ST = "\x1b\\"


def hyperlinks_for(stream: object) -> bool:
    """Whether links printed to ``stream`` should be OSC 8 hyperlinks: only on a terminal (a
    pipe, a file or a cron mail would show the escape sequences as text)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed stream
        return False


def hyperlink(url: str, text: str) -> str:
    """``text`` as an OSC 8 hyperlink to ``url`` (an http(s) URL, else ``text`` alone)."""
    safe = safe_url(url)
    return f"{_OSC}{safe}{_ST}{text}{_OSC}{_ST}" if safe else text


def _render(label: str, url: str, repo: str, hyperlinks: bool) -> str:
    safe = safe_url(url)
    if safe is None:
        return label  # javascript:, data:, a relative link: nothing to follow
    pr_label = _PR_LABEL.fullmatch(label.strip())
    pr_url = _PR_URL.fullmatch(url)
    if pr_label and pr_url and pr_label.group(1) == pr_url.group(2):
        target = pr_url.group(1)
        text = (
            f"#{pr_url.group(2)}"
            if target.lower() == repo.lower()
            else f"{target}#{pr_url.group(2)}"
        )
        return hyperlink(safe, text) if hyperlinks else text
    if label.strip() == url:
        return hyperlink(safe, url) if hyperlinks else url
    if hyperlinks and not _ADDRESS_LIKE.search(label) and not pr_label:
        return hyperlink(safe, label)
    # A label that could read as another address or another PR shows where it leads.
    return f"{label} ({hyperlink(safe, url) if hyperlinks else url})"


def show_links(line: str, repo: str, *, hyperlinks: bool) -> str:
    """One line of release-note text with its markdown links as a terminal shows them; with
    ``hyperlinks``, bare ``#123`` references of ``repo`` link to their PR too. A link inside a
    code span is code, left as written."""
    if "[" not in line and not (hyperlinks and "#" in line):
        return line
    spans = [(m.start(), m.end()) for m in _CODE.finditer(line)]
    starts = [start for start, _ in spans]

    def in_code(position: int) -> bool:
        index = bisect_right(starts, position) - 1
        return index >= 0 and position < spans[index][1]

    def outside(start: int, end: int) -> str:
        text = line[start:end]
        if not hyperlinks:
            return text
        return _PR_REF.sub(
            lambda m: (
                m.group(0)
                if in_code(start + m.start())
                else hyperlink(f"https://github.com/{repo}/pull/{m.group(1)}", m.group(0))
            ),
            text,
        )

    out: list[str] = []
    position = 0
    for match in _LINK.finditer(line):
        if in_code(match.start()):
            continue
        out.append(outside(position, match.start()))
        out.append(_render(match.group("label"), match.group("url"), repo, hyperlinks))
        position = match.end()
    out.append(outside(position, len(line)))
    return "".join(out)
