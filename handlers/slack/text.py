"""Release-note markdown → Slack mrkdwn that cannot ping anyone or hide where a link goes.

Release notes are untrusted text. Slack's rules (api.slack.com/reference/surfaces/formatting):
``&``, ``<`` and ``>`` are control characters and must be escaped; ``<!channel>``, ``<!here>``,
``<!everyone>``, ``<@U…>`` and ``<!subteam^…>`` notify people; ``<url|label>`` is a link whose
target is hidden behind its label. So every piece of note text is escaped (a literal
``<!channel>`` shows as text), raw ``@channel``-style words get a zero-width space, control and
bidi characters show as visible escapes (``\\x1b``, ``\\u202e``), and the only links we emit
are ones we build: PR references to the release's own repository, and http(s) markdown links
whose label cannot pass for another address (``_reads_as_another_address``). HTML entities in
the notes (``&lt;``) show as the character they stand for, once.

Everything here is linear in its input: code spans are paired by a scan over backtick runs, and
every other pattern is bounded, so no release body can stall a delivery.
"""

from __future__ import annotations

import html
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from urllib.parse import urlsplit

from watcher.notes import code_lines, unescape_markdown
from watcher.untrusted import clean_line, clean_text, safe_url

ZWSP = "\u200b"
INDENT = "\u2003"  # an em space: Slack keeps it where it trims ordinary leading spaces
_BROADCAST = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)
_LINK = re.compile(
    r"\[(?P<label>[^\[\]\n]{1,300})\]\((?P<url>(?:[^()\s]|\([^()\s]{0,200}\)){1,2000})\)")
_TOKEN = re.compile(
    r"(?P<pr_url>https://github\.com/(?P<pr_repo>[\w.-]{1,100}/[\w.-]{1,100})/pull/"
    r"(?P<pr_num>\d{1,7}))(?![\w/])"
    r"|(?<![\w&/])#(?P<pr>\d{1,7})\b"
    r"|\*\*(?P<bold>[^*\n]{1,500})\*\*")
_PR_LABEL = re.compile(r"#?(\d{1,7})")
# Characters read as "." in a host name: the ideographic stops IDNA maps to "." (UTS #46 §4,
# U+3002; U+FF61 and U+FE12 fold to it under NFKC), U+002E's and U+00B7's confusables in
# Unicode TR39's confusables.txt that NFKC leaves alone, and U+2E33 RAISED DOT. NFKC has already
# folded U+2024 ONE DOT LEADER, U+FF0E FULLWIDTH FULL STOP and U+FE52 SMALL FULL STOP to ".".
_DOT_LOOKALIKES = str.maketrans(dict.fromkeys(map(ord, (
    "\u3002\u2e33\u0701\u0702\u06d4\u0660\u06f0\ua4f8\ua60e\U00010a50\U0001d16d\u2e3c"
    "\u00b7\u2027\u30fb\u16eb\u2e31\U00010101\u2219\u22c5")), "."))
# Invisible in a label: format characters (zero-width space, soft hyphen) and combining marks
# that NFKC could not compose (Unicode general categories Cf, Mn, Me).
_INVISIBLE = {"Cf", "Mn", "Me"}
# A URL with any scheme, and a host name under any top-level domain (letters only, or IDNA's
# xn--; RFC 1123 §2.1, ICANN's rules for TLDs), www.anything, or an IPv4 address.
_URL_IN_LABEL = re.compile(r"[a-z][a-z0-9+.-]{0,30}://[^\s<>]*", re.IGNORECASE)
_HOST_IN_LABEL = re.compile(
    r"(?<![\w.-])(?:www\.[\w-]{1,63}|(?:[\w-]{1,63}\.){1,10}(?:[^\W\d_]{2,63}|xn--[a-z0-9-]{1,59})"
    r"|[0-9]{1,3}(?:\.[0-9]{1,3}){3})\.?(?![\w-]|\.[\w-])", re.IGNORECASE)
_BULLET = re.compile(r"^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")


def escape(text: str) -> str:
    """Slack's three control characters, broadcast words defused, other controls shown as
    visible escapes (``clean_text``)."""
    text = clean_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)


def note_text(text: str) -> str:
    """Prose from the notes: markdown escapes and HTML entities resolved once, then escaped."""
    return escape(html.unescape(unescape_markdown(text)))


def plain(text: str) -> str:
    """For ``plain_text`` objects (headers), where ``&lt;`` would show as typed: angle
    brackets become look-alike quotes, so no ``<!here>`` can be formed, and broadcasts are
    defused."""
    text = clean_line(text).replace("<", "\u2039").replace(">", "\u203a")
    return _BROADCAST.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)


def link(url: str | None, label: str) -> str:
    """A link we build ourselves (release pages): the URL made safe, the label escaped. An
    unusable URL leaves just the label."""
    safe = safe_url(url or "")
    text = escape(clean_line(label)).replace("|", "¦")
    return f"<{safe}|{text}>" if safe else text


# One unit of rendered mrkdwn, (text, atomic): links and code spans are atomic, never cut in
# two. A plain tuple: a line of tens of thousands of code spans makes as many pieces, and a
# named tuple or a frozen dataclass costs ten times a tuple to build.
Piece = tuple[str, bool]

# Backtick runs, whole, as split points: a run starts at neither another backtick (so a match
# is never the tail of a longer run) nor a backslash (an escaped run is text).
_BACKTICKS = re.compile(r"((?<![\\`])`+)")


def _code_spans(line: str) -> list[tuple[int, int, int]]:
    """(start, end, run length) of each code span, CommonMark-style: a run of n backticks
    closes at the next run of exactly n, and the runs inside a span are code. One pass from
    the end finds each run's next run of its length, one from the start pairs them, so this is
    linear in the line however many backticks it holds."""
    parts = _BACKTICKS.split(line)  # text, run, text, run, ..., text
    if len(parts) < 5:
        return []  # fewer than two runs
    offsets = list(accumulate(map(len, parts), initial=0))
    starts, ends, lengths = offsets[1::2], offsets[2::2], list(map(len, parts[1::2]))
    count = len(lengths)
    if lengths.count(lengths[0]) == count:  # all alike (the usual): they pair in order
        pairs = count // 2
        return list(zip(starts[0:2 * pairs:2], ends[1:2 * pairs:2], lengths[:pairs],
                        strict=True))
    following = [-1] * count  # the index of the next run of the same length, or -1
    latest: dict[int, int] = {}
    for index in range(count - 1, -1, -1):
        length = lengths[index]
        following[index] = latest.get(length, -1)
        latest[length] = index
    spans = []
    index = 0
    while index < count:
        closing = following[index]
        if closing < 0:
            index += 1  # no closing run: the backticks are literal
            continue
        spans.append((starts[index], ends[closing], lengths[index]))
        index = closing + 1
    return spans


def _render_token(match: re.Match[str], repo: str) -> Piece:
    if match.group("bold") is not None:
        return (f"*{note_text(match.group('bold'))}*", False)
    if match.group("pr_url"):
        number, target = match.group("pr_num"), match.group("pr_repo")
        return (f"<{match.group('pr_url')}|{escape(target)}#{number}>", True)
    number = match.group("pr")
    return (f"<https://github.com/{repo}/pull/{number}|#{number}>", True)


def _reads_as_another_address(label: str, target_host: str) -> bool:
    """Whether ``label`` reads as a URL or a host name (``pytorch.org``, ``docs.pytorch.dev``,
    ``evil.zip``, ``https://x``) other than ``target_host``. It is read as a person sees it:
    NFKC-normalised (fullwidth letters fold to ASCII; Unicode UAX #15), invisible characters
    left out, dot look-alikes taken for dots. Only an ASCII host name may match: a label in
    another script that equals a homograph target would read as the name it imitates."""
    text = "".join(char for char in unicodedata.normalize("NFKC", label)
                   if unicodedata.category(char) not in _INVISIBLE).translate(_DOT_LOOKALIKES)
    hosts = [match.group(0) for match in _HOST_IN_LABEL.finditer(text)]
    for address in _URL_IN_LABEL.findall(text):
        try:
            hosts.append(urlsplit(address).hostname or "")
        except ValueError:
            hosts.append("")
    return any(not host.isascii() or host.rstrip(".").lower() != target_host
               for host in hosts)


def _markdown_link(label: str, url: str) -> Piece:
    safe = safe_url(url)
    if safe is None:
        return (note_text(label), False)  # javascript:, data:, relative: the label only
    pr_label = _PR_LABEL.fullmatch(label.strip())
    pr_target = re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/pull/(\d+)/?", url)
    target_host = (urlsplit(url).hostname or "").rstrip(".")
    if _reads_as_another_address(label, target_host) or (
            pr_label and (pr_target is None or pr_target.group(1) != pr_label.group(1))):
        # A label that reads like another address, or like a PR it does not lead to, must
        # show the address it goes to.
        return (f"<{safe}>", True)
    return (f"<{safe}|{note_text(label).replace('|', '¦')}>", True)


_PLAIN = re.compile(r"[&<>@\\#*`\[]|https?:")  # what needs more than passing through


def _prose_pieces(text: str, repo: str) -> Iterator[Piece]:
    if not _PLAIN.search(text):
        yield (text, False)  # already clean (pieces cleaned the line), nothing to escape
        return
    position = 0
    for match in _TOKEN.finditer(text):
        if match.start() > position:
            yield (note_text(text[position:match.start()]), False)
        yield _render_token(match, repo)
        position = match.end()
    if position < len(text):
        yield (note_text(text[position:]), False)


def pieces(markdown: str, repo: str) -> list[Piece]:
    """One line of markdown as escaped text runs and atomic code spans and links. A link's
    label may hold code spans (``[`fn`](url)``); a link inside a code span is code. (Empty
    text runs are left out: they render as nothing.)"""
    line = clean_line(markdown)
    spans = _code_spans(line)
    marks: list[tuple[int, int, re.Match[str] | int]] = list(spans)  # in order already
    if "](" in line:  # else no markdown link can be there
        starts = [start for start, _, _ in spans]

        def in_code(position: int) -> bool:
            index = bisect_right(starts, position) - 1
            return index >= 0 and spans[index][0] < position < spans[index][1]

        links = [(m.start(), m.end(), m) for m in _LINK.finditer(line)
                 if not in_code(m.start()) and not in_code(m.end() - 1)]
        link_starts = [start for start, _, _ in links]

        def in_link(position: int) -> bool:
            index = bisect_right(link_starts, position) - 1
            return index >= 0 and links[index][0] < position < links[index][1]

        if links:
            marks = sorted([*links, *((s, e, n) for s, e, n in spans if not in_link(s))],
                           key=lambda t: t[0])
    out: list[Piece] = []
    append, search = out.append, _PLAIN.search
    position = 0
    for start, end, what in marks:
        if start > position:
            prose = line[position:start]
            if search(prose):
                out.extend(_prose_pieces(prose, repo))
            else:  # the common case, inline: already clean, nothing to escape
                append((prose, False))
        if isinstance(what, int):
            body = line[start + what:end - what].strip() or " "
            shown = body if not search(body) else escape(body).replace("`", "\u2018")
            append((f"`{shown}`", True))
        else:
            append(_markdown_link(what.group("label").replace("`", ""), what.group("url")))
        position = end
    if position < len(line):
        out.extend(_prose_pieces(line[position:], repo))
    return out


def to_mrkdwn(markdown: str, repo: str, *, limit: int | None = None) -> str:
    """One line as mrkdwn; with ``limit``, cut at a piece or word boundary and end with an
    ellipsis, never inside a link or code span."""
    rendered = pieces(markdown, repo)
    if limit is None:
        return "".join([text for text, _ in rendered])
    out, used = [], 0
    for text, atomic in rendered:
        if used + len(text) <= limit:
            out.append(text)
            used += len(text)
            continue
        room = limit - used - 1
        if not atomic and room > 10:
            cut = text[:room]
            cut = cut[: cut.rfind(" ")] if " " in cut else cut
            out.append(re.sub(r"&[a-z]*$", "", cut))  # never leave half an &amp;
        out.append("…")
        break
    return "".join(out)


@dataclass(frozen=True)
class Line:
    """A rendered line of an item; ``code`` lines sit inside a code block."""

    text: str
    code: bool = False


FENCE = "```"


def item_lines(markdown: str, repo: str, *, depth: int = 1) -> list[Line]:
    """An item's whole text as mrkdwn lines: its first line as is, continuation lines and
    nested bullets indented under it (``depth`` em spaces a level), headings bold, fenced code
    as Slack code blocks (fences on lines of their own)."""
    source = clean_text(markdown).split("\n")
    out: list[Line] = []
    in_code = False
    for number, (line, code) in enumerate(zip(source, code_lines(source), strict=True)):
        if code:
            fence = line.strip().startswith(("```", "~~~"))
            if fence:
                in_code = not in_code
                out.append(Line(FENCE, code=True))
            else:
                out.append(Line(escape(line.rstrip()) or " ", code=True))
            continue
        out.append(_prose_line(line, repo, first=number == 0, depth=depth))
    if in_code:
        out.append(Line(FENCE, code=True))  # an unclosed fence still ends with the item
    return _squeeze_blank(out)


def _prose_line(line: str, repo: str, *, first: bool, depth: int) -> Line:
    if first:
        return Line(to_mrkdwn(line.strip(), repo))
    if not line.strip():
        return Line("")
    heading = _HEADING.match(line)
    if heading:
        return Line(INDENT * depth + f"*{to_mrkdwn(heading.group(1), repo)}*")
    bullet = _BULLET.match(line)
    if bullet:
        indent, marker, rest = bullet.groups()
        level = depth + len(indent.expandtabs(4)) // 2
        mark = "◦" if marker in "-*+" else escape(marker)
        return Line(INDENT * level + f"{mark} {to_mrkdwn(rest, repo)}")
    if line.lstrip().startswith(">"):
        return Line(INDENT * depth + "&gt; " + to_mrkdwn(line.lstrip()[1:].strip(), repo))
    return Line(INDENT * depth + to_mrkdwn(line.strip(), repo))


def _squeeze_blank(lines: list[Line]) -> list[Line]:
    """No leading, trailing or doubled blank lines."""
    out: list[Line] = []
    for line in lines:
        if not line.text and not line.code and (not out or not out[-1].text):
            continue
        out.append(line)
    while out and not out[-1].text:
        out.pop()
    return out
