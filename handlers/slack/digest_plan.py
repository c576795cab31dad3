"""Plans a digest's Slack messages: ONE parent message per repository, in the digest's order
(the config's watch list, then by name), each with its own thread, so a reader follows the
repositories they care about. A repository with nothing pending has no message; an empty
digest that is sent anyway (``send_empty_digest``) is one "nothing new" message.

A repository's parent: the period, its totals and counts, what affects the configured code
and the titles of its most important items. Its thread (a webhook: the same message, until
full): its first releases and its changes per subsystem, then its shown items whole, most
important first, then how many were left out, with links to the release notes that hold
them. The item cap (``digest_max_items``) is the digest's, shared by its repositories by
importance (``watcher.delivery.digest``).

At most ``max_repos`` repositories (the notifier's ``digest_max_repos``) get a parent of their
own, the most important of them (what breaks the configured code, then BC-breaking changes,
deprecations, …), still in the digest's order; the others share one last message, a line each
with its counts and a link to its releases, so a digest of a hundred repositories is not a
hundred posts in the channel. The item cap then goes to the repositories with a thread alone
(``Digest.keep_items_of`` reads their events again, only theirs).

Delivery posts these messages in order and saves after each how many went out and the thread
of the last parent (``SlackNotifier._post_all``): a retry resumes after the last message sent,
its replies in the right parent's thread.

Items are drawn by ``handlers.slack.items``, as an event's are; this module only decides
what a period's summary shows and in what order (the period's neutral value is
``watcher.delivery.Digest``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from handlers.slack.blocks import Titled, header, section
from handlers.slack.items import CALLOUT_ITEMS, Style, affects_lines, item_title, with_groups
from handlers.slack.layout import MAX_BLOCKS, SECTION_CHARS, Packer, SlackMessage, block_chars
from handlers.slack.text import escape, link
from watcher.models import KIND_TITLES
from watcher.present import (
    CALLED_OUT,
    KIND_RANK,
    UNSURE_BELOW,
    by_kind,
    kinds_in_words,
    period_counts,
    plural,
)

if TYPE_CHECKING:
    from watcher.delivery import Digest
    from watcher.delivery.digest import RepoDigest

__all__ = ["DIGEST_MAX_REPOS", "plan_digest"]

DIGEST_SUBSYSTEMS = 6  # a repository's subsystems with their counts in a digest, then "N more"
DIGEST_MAX_REPOS = 20  # repositories with a parent message of their own; the rest share one
_DIGEST_TAIL = 400  # room kept in a parent message for its closing line


def _period(digest: Digest) -> str:
    return f"{digest.period_start:%Y-%m-%d} to {digest.period_end:%Y-%m-%d}"


def plan_digest(
    digest: Digest,
    *,
    threads: bool,
    max_chars: int,
    threshold: float = UNSURE_BELOW,
    code_links: Mapping[str, str] | None = None,
    max_repos: int = DIGEST_MAX_REPOS,
) -> list[SlackMessage]:
    """Per repository (at most ``max_repos``, the most important), its parent message then
    its thread; then, if more repositories had releases, one message naming them with their
    counts. An empty digest is one message saying so."""
    period = _period(digest)
    if digest.empty:
        fallback = escape(f"release-watch digest {period}: nothing new")
        empty = Packer(max_chars, in_thread=False, fallback=fallback)
        empty.add(header(f"Release digest {period}"))
        empty.add(section("Nothing new in this period."))
        return empty.messages
    threaded, others = _with_threads(digest.repos, max_repos)
    if others:  # the item cap goes to the repositories with a thread, not to the others
        digest.keep_items_of([repo.repo for repo in threaded])
    messages: list[SlackMessage] = []
    for repo in threaded:
        messages += _repo_messages(
            repo, period, Style(threshold, repo.repo, code_links or {}), threads=threads,
            max_chars=max_chars,
        )
    if others:
        messages += _others_messages(others, period, max_repos, threads=threads,
                                     max_chars=max_chars)
    return messages


def _importance(repo: RepoDigest) -> tuple[int, ...]:
    """Lower first: more that breaks the configured code, then more BC-breaking changes,
    deprecations, … (``CALLED_OUT``), then more changes."""
    return (-repo.affects.count, *(-repo.kinds[kind] for kind in CALLED_OUT), -repo.changes)


def _with_threads(
    repos: list[RepoDigest], max_repos: int
) -> tuple[list[RepoDigest], list[RepoDigest]]:
    """The ``max_repos`` most important repositories and the others, each in digest order
    (a tie keeps the earlier repository)."""
    if len(repos) <= max_repos:
        return repos, []
    ranked = sorted(range(len(repos)), key=lambda n: (_importance(repos[n]), n))
    chosen = set(ranked[:max_repos])
    return (
        [repo for n, repo in enumerate(repos) if n in chosen],
        [repo for n, repo in enumerate(repos) if n not in chosen],
    )


def _repo_messages(
    repo: RepoDigest, period: str, style: Style, *, threads: bool, max_chars: int
) -> list[SlackMessage]:
    fallback = escape(
        f"release-watch digest {period} for {repo.repo}: "
        f"{plural(repo.events, 'release event')}, {plural(repo.changes, 'change')}"
    )
    parent = Packer(max_chars, in_thread=False, fallback=fallback)
    parent.add(header(f"{repo.repo}: release digest {period}"))
    _repo_parent(repo, _OneMessage(parent.messages[0], max_chars), style,
                 where="in the thread" if threads else "below")
    detail = Packer(max_chars, in_thread=threads, fallback=fallback)
    _digest_repo(detail, repo, style)
    if threads:
        return parent.messages + detail.messages
    return _digest_single(parent, detail, max_chars)


class _OneMessage:
    """Fills one message, lines packed into sections, only while they fit: at most 49
    blocks and ``max_chars`` less ``_DIGEST_TAIL``, so one closing line always fits."""

    def __init__(self, message: SlackMessage, max_chars: int) -> None:
        self.message = message
        self.max_chars = max_chars
        self._open = ""  # the text of the last block, when lines may still join it

    def _fits(self, blocks: list[dict[str, Any]]) -> bool:
        return (
            len(blocks) < MAX_BLOCKS
            and SlackMessage("", blocks).payload_chars() + _DIGEST_TAIL <= self.max_chars
        )

    def block(self, block: dict[str, Any]) -> bool:
        if not self._fits([*self.message.blocks, block]):
            return False
        self.message.blocks.append(block)
        self._open = ""
        return True

    def lines(self, title: str, lines: list[str]) -> int:
        """``lines`` under ``*title*``, in a section of their own, as many as fit; how many
        did."""
        heading, self._open = (f"*{title}*" if title else ""), ""
        for added, line in enumerate(lines):
            joined = f"{self._open}\n{line}"
            if self._open and len(joined) <= SECTION_CHARS:
                blocks = [*self.message.blocks[:-1], section(joined)]
            else:
                joined = f"{heading}\n{line}" if heading else line
                blocks = [*self.message.blocks, section(joined)]
            if not self._fits(blocks):
                return added
            self.message.blocks[:] = blocks
            self._open, heading = joined, ""
        return len(lines)

    def close(self, mrkdwn: str) -> None:
        self.message.blocks.append(section(mrkdwn))  # room was kept for it


def _repo_parent(repo: RepoDigest, room: _OneMessage, style: Style, *, where: str) -> None:
    """One repository's totals and counts, what of it affects the configured code, and the
    titles of its most important shown items, each naming its kind."""
    totals = f"*{_counts(repo)}*"
    if repo.more_items and repo.items:
        totals += f" · the {len(repo.items)} most important are {where}"
    elif repo.more_items:
        totals += f" · counted per subsystem {where}, with links to the release notes"
    room.block(section(totals))
    cut = False
    if repo.affects.count:
        affects = repo.affects.plan()
        lines = affects_lines(affects, style, more=repo.affects.count - len(repo.affects.items),
                              where=where)
        cut = room.lines(escape(affects.title), lines) < len(lines)
    called = sorted(
        (shown for shown in repo.items if shown.item.kind in CALLED_OUT),
        key=lambda shown: (not shown.item.breaks_code, KIND_RANK[shown.item.kind]),
    )
    if called and not cut:
        title = "Most important: " + kinds_in_words(
            (kind, repo.kinds[kind]) for kind in CALLED_OUT
        )
        lines = [
            f"{item_title(shown.item, style, show_kind=True)} ({escape(shown.release.title)})"
            for shown in called[:CALLOUT_ITEMS]
        ]
        cut = room.lines(escape(title), lines) < len(lines)
    if cut:
        room.close(f"_…more {where}_")


def _counts(repo: RepoDigest) -> str:
    return period_counts(repo.events, repo.changes, repo.kinds)


def _others_messages(
    others: list[RepoDigest], period: str, max_repos: int, *, threads: bool, max_chars: int
) -> list[SlackMessage]:
    """The repositories past ``max_repos``: one message, a line each with its counts and a
    link to its releases (lines that do not fit go on in its thread; a webhook counts them)."""
    what = plural(len(others), "more repository", "more repositories")
    fallback = escape(f"release-watch digest {period}: {what}")
    parent = Packer(max_chars, in_thread=False, fallback=fallback)
    parent.add(header(f"Release digest {period}: {what}"))
    room = _OneMessage(parent.messages[0], max_chars)
    events = sum(repo.events for repo in others)
    changes = sum(repo.changes for repo in others)
    room.block(section(
        f"*{plural(events, 'release event')}, {plural(changes, 'change')}* in {what}. "
        f"The {max_repos} with the most important changes have a message and thread of their "
        "own above (`digest_max_repos`); these are counted here, each with its releases:"
    ))
    lines = [_other_line(repo) for repo in others]
    listed = room.lines("", lines)
    if listed == len(lines):
        return parent.messages
    if not threads:
        room.close(f"_…and {plural(len(lines) - listed, 'more repository', 'more repositories')}"
                   "_")
        return parent.messages
    room.close("_…more in the thread_")
    rest = Packer(max_chars, in_thread=True, fallback=fallback)
    rest.add_lines("", lines[listed:])
    return parent.messages + rest.messages


def _other_line(repo: RepoDigest) -> str:
    """``• *org/repo*: 3 release events, 90 changes (1 BC-breaking change): all releases``"""
    page = link(repo.releases_page, "all releases") if repo.releases_page else ""
    return f"• *{escape(repo.repo)}*: {escape(_counts(repo))}" + (f": {page}" if page else "")


def _digest_repo(packer: Packer, repo: RepoDigest, style: Style) -> None:
    """A repository's thread: its releases and subsystems, then its shown items whole, per
    subsystem and kind; then how many were left out, linked to the release notes."""
    page = link(repo.releases_page, "all releases") if repo.releases_page else ""
    releases = [
        f"• {link(release.url, release.title)} {escape(release.what)}" for release in repo.releases
    ]
    if repo.more_releases:
        releases.append(
            f"• …and {plural(repo.more_releases, 'more release event')}"
            + (f": {page}" if page else "")
        )
    packer.add_lines("Releases", releases)
    shown = repo.shown_by_subsystem()
    with_items = {group.subsystem for group, _ in shown}
    groups = repo.by_subsystem()
    listed = [
        group
        for rank, group in enumerate(groups)
        if rank < DIGEST_SUBSYSTEMS or group.subsystem in with_items
    ]
    lines = [
        f"• *{escape(group.name)}* {group.count}: "
        + escape(kinds_in_words(group.by_kind.most_common()))
        for group in listed
    ]
    if len(listed) < len(groups):
        others = sum(group.count for group in groups) - sum(group.count for group in listed)
        lines.append(
            f"• …and {plural(len(groups) - len(listed), 'more subsystem')} "
            f"({plural(others, 'change')})"
        )
    if lines:
        packer.add_lines("Changes per subsystem", lines)
    for group, items in shown:
        for kind in by_kind(items):
            title = f"{escape(group.name)} · {KIND_TITLES.get(kind.key, kind.key)}"
            packer.add_piece(Titled(title, with_groups(kind.items, style, show_top=False)))
    if repo.more_items:
        notes = [link(release.url, release.title) for release in repo.releases]
        if repo.more_releases and page:
            notes.append(page)
        packer.add(
            section(
                f"_…{plural(repo.more_items, 'more change')} in "
                f"{escape(repo.repo)}: see the release notes: "
                f"{', '.join(notes)}_"
            )
        )


def _digest_single(parent: Packer, detail: Packer, max_chars: int) -> list[SlackMessage]:
    message = parent.messages[0]
    for block in (b for m in detail.messages for b in m.blocks):
        if len(message.blocks) >= MAX_BLOCKS - 1 or (
            message.payload_chars() + block_chars(block) + 300 > max_chars
        ):
            message.blocks.append(section("_…more in the release notes linked above_"))
            break
        message.blocks.append(block)
    return [message]
