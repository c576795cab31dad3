"""Release-note markdown → Slack mrkdwn that cannot ping anyone or hide where a link goes.

Release notes are untrusted text. Slack's rules (api.slack.com/reference/surfaces/formatting):
``&``, ``<`` and ``>`` are control characters and must be escaped; ``<!channel>``, ``<!here>``,
``<!everyone>``, ``<@U…>`` and ``<!subteam^…>`` notify people; ``<url|label>`` is a link whose
target is hidden behind its label. So every piece of note text is escaped (a literal
``<!channel>`` shows as text), raw ``@channel``-style words get a zero-width space, and the only
links we emit are ones we build: PR references to the release's own repository, and markdown
links whose label cannot pass for another address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

ZWSP = "\u200b"
_TOKEN = re.compile(
    r"(?P<code>`+)(?P<code_body>.+?)(?P=code)"                    # `code` or ``code``
    r"|\[(?P<label>[^\]\n]{1,300})\]\((?P<url>[^)\s]{1,2000})\)"   # [label](url)
    r"|(?P<pr_url>https://github\.com/(?P<pr_repo>[\w.-]+/[\w.-]+)/pull/(?P<pr_num>\d+))"
    r"|(?<![\w&/])#(?P<pr>\d{1,7})\b",                             # #123
    re.DOTALL,
)
_BROADCAST = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_LOOKS_LIKE_ADDRESS = re.compile(r"(?:https?://|www\.|\b[\w-]+\.(?:com|org|io|net|dev|ai|co|me|"
                                 r"ly|gg|app|xyz|info|biz|link|site|page)\b)", re.IGNORECASE)


def escape(text: str) -> str:
    """Slack's three control characters, then broadcast words defused."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)


def plain(text: str) -> str:
    """For ``plain_text`` objects (headers), where ``&lt;`` would show as typed: angle
    brackets become look-alike quotes, so no ``<!here>`` can be formed, and broadcasts are
    defused."""
    text = text.replace("<", "\u2039").replace(">", "\u203a")
    return _BROADCAST.sub(lambda m: f"@{ZWSP}{m.group(1)}", text)


def _safe_url(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        return None
    return quote(url, safe=":/?#[]@!$&'()*+,;=%~-._")  # encodes <, >, | and spaces


def link(url: str | None, label: str) -> str:
    """A link we build ourselves (release pages): the URL made safe, the label escaped. An
    unusable URL leaves just the label."""
    safe = _safe_url(url or "")
    text = escape(label).replace("|", "¦")
    return f"<{safe}|{text}>" if safe else text


@dataclass(frozen=True)
class Piece:
    """One unit of rendered mrkdwn; links and code spans are never cut in two."""

    text: str
    atomic: bool


def pieces(markdown: str, repo: str) -> list[Piece]:
    """Split markdown into escaped text runs and atomic code spans and links."""
    out: list[Piece] = []
    position = 0
    for match in _TOKEN.finditer(markdown):
        if match.start() > position:
            out.append(Piece(_inline(markdown[position:match.start()]), False))
        out.append(_render_token(match, repo))
        position = match.end()
    if position < len(markdown):
        out.append(Piece(_inline(markdown[position:]), False))
    return out


def _inline(text: str) -> str:
    return _BOLD.sub(r"*\1*", escape(text))


def _render_token(match: re.Match[str], repo: str) -> Piece:
    if match.group("code"):
        body = match.group("code_body").replace("`", "'")
        return Piece(f"`{escape(body)}`", True)
    if match.group("label") is not None:
        label, url = match.group("label"), _safe_url(match.group("url"))
        if url is None:
            return Piece(escape(label), False)
        if _LOOKS_LIKE_ADDRESS.search(label):
            # A label that reads like an address must be the address it goes to.
            return Piece(f"<{url}>", True)
        return Piece(f"<{url}|{escape(label).replace('|', '¦')}>", True)
    if match.group("pr_url"):
        number, target = match.group("pr_num"), match.group("pr_repo")
        return Piece(f"<{match.group('pr_url')}|{escape(target)}#{number}>", True)
    number = match.group("pr")
    return Piece(f"<https://github.com/{repo}/pull/{number}|#{number}>", True)


def to_mrkdwn(markdown: str, repo: str, *, limit: int | None = None) -> str:
    """The whole text as mrkdwn; with ``limit``, cut at a piece or word boundary and end with
    an ellipsis, never inside a link or code span."""
    rendered = pieces(markdown, repo)
    if limit is None:
        return "".join(p.text for p in rendered)
    out, used = [], 0
    for piece in rendered:
        if used + len(piece.text) <= limit:
            out.append(piece.text)
            used += len(piece.text)
            continue
        room = limit - used - 1
        if not piece.atomic and room > 10:
            cut = piece.text[:room]
            cut = cut[: cut.rfind(" ")] if " " in cut else cut
            out.append(re.sub(r"&[a-z]*$", "", cut))  # never leave half an &amp;
        out.append("…")
        break
    return "".join(out)
