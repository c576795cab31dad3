"""Plans a digest's Slack messages: ONE parent message however long the queue (the period,
totals, what affects the configured code, the most important titles, a line per repository),
and per repository its releases, subsystems and most important items whole in the thread.

Items are laid out by ``handlers.slack.items``, as an event's are; this module only decides
what a period's summary shows and in what order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from handlers.slack.items import (
    CALLOUT_ITEMS,
    KIND_RANK,
    Style,
    add_items,
    affects_lines,
    by_kind,
    item_title,
)
from handlers.slack.layout import (
    MAX_BLOCKS,
    SECTION_CHARS,
    Packer,
    SlackMessage,
    block_chars,
    header,
    section,
)
from handlers.slack.text import escape, link
from watcher.models import KIND_TITLES
from watcher.present import AFFECTS_TITLE, CALLED_OUT, UNSURE_BELOW, kinds_in_words, plural

if TYPE_CHECKING:
    from watcher.delivery import Digest
    from watcher.delivery.digest import RepoDigest

__all__ = ["plan_digest"]

DIGEST_SUBSYSTEMS = 6  # a repository's subsystems with their counts in a digest, then "N more"
_DIGEST_TAIL = 400  # room kept in the digest's one parent message for its closing line


def _period(digest: Digest) -> str:
    return f"{digest.period_start:%Y-%m-%d} to {digest.period_end:%Y-%m-%d}"


def plan_digest(
    digest: Digest,
    *,
    threads: bool,
    max_chars: int,
    threshold: float = UNSURE_BELOW,
    code_link: str | None = None,
) -> list[SlackMessage]:
    """ONE parent message, however long the queue: the period and totals, what affects the
    configured code, the titles of the most important items, and a line per repository (as
    many as fit; the others are in the thread). Thread (a webhook: the same message, until
    full): per repository its first releases and its changes per subsystem, then its shown
    items whole, most important first (at most the digest's item cap in all), then how many
    were left out, with links to the release notes that hold them."""
    period = _period(digest)
    fallback = escape(
        f"release-watch digest {period}: {plural(digest.event_count, 'release event')}"
    )
    parent = Packer(max_chars, in_thread=False, fallback=fallback)
    parent.add(header(f"Release digest {period}"))
    if digest.empty:
        parent.add(section("Nothing new in this period."))
        return parent.messages
    _digest_parent(
        digest,
        _OneMessage(parent.messages[0], max_chars),
        threshold,
        code_link,
        where="in the thread" if threads else "below",
    )
    detail = Packer(max_chars, in_thread=threads, fallback=fallback)
    for repo in digest.repos:
        _digest_repo(detail, repo, Style(threshold, repo.repo, code_link))
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
        heading, self._open = f"*{title}*", ""
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


def _digest_parent(
    digest: Digest, room: _OneMessage, threshold: float, code_link: str | None, *, where: str
) -> None:
    repos = digest.repos
    totals = (
        f"*{plural(digest.event_count, 'release event')} in "
        f"{plural(len(repos), 'repository', 'repositories')}, "
        f"{plural(digest.changes, 'change')}*"
    )
    if digest.more_items:
        totals += f" · the {digest.shown} most important are {where}"
    room.block(section(totals))
    styles = {repo.repo: Style(threshold, repo.repo, code_link) for repo in repos}
    affected = [repo for repo in repos if repo.affects.count]
    if affected:
        count = sum(repo.affects.count for repo in affected)
        uses = sum(repo.affects.uses for repo in affected)
        files = len({place for repo in affected for place in repo.affects.files})
        title = f"{AFFECTS_TITLE} ({count}, {plural(uses, 'use')} in {plural(files, 'file')})"
        room.lines(
            escape(title),
            [
                line
                for repo in affected
                for line in affects_lines(repo.affects.items, styles[repo.repo])
            ],
        )
    called = sorted(
        (shown for repo in repos for shown in repo.items if shown.item.kind in CALLED_OUT),
        key=lambda shown: (not shown.item.breaks_code, KIND_RANK[shown.item.kind]),
    )
    if called:
        kinds = digest.kinds()
        title = "Most important: " + kinds_in_words((kind, kinds[kind]) for kind in CALLED_OUT)
        room.lines(
            escape(title),
            [
                f"{item_title(shown.item, styles[shown.release.repo], show_kind=True)} "
                f"({escape(shown.release.title)})"
                for shown in called[:CALLOUT_ITEMS]
            ],
        )
    listed = room.lines("By repository", [_repo_line(repo) for repo in repos])
    if listed < len(repos):
        left = len(repos) - listed
        room.close(f"_…and {plural(left, 'more repository', 'more repositories')} {where}_")


def _repo_line(repo: RepoDigest) -> str:
    """``• *pytorch/pytorch*: 2 release events, 610 changes (11 BC-breaking changes,
    1 deprecation)``"""
    called = kinds_in_words((kind, repo.kinds[kind]) for kind in CALLED_OUT)
    return (
        f"• *{escape(repo.repo)}*: {plural(repo.events, 'release event')}, "
        f"{plural(repo.changes, 'change')}" + (f" ({called})" if called else "")
    )


def _digest_repo(packer: Packer, repo: RepoDigest, style: Style) -> None:
    """A repository's releases and subsystems, then its shown items whole, per subsystem and
    kind; then how many were left out, linked to the release notes."""
    page = link(repo.releases_page, "all releases") if repo.releases_page else ""
    lines = [
        f"• {link(release.url, release.title)} {escape(release.what)}" for release in repo.releases
    ]
    if repo.more_releases:
        lines.append(
            f"• …and {plural(repo.more_releases, 'more release event')}"
            + (f": {page}" if page else "")
        )
    shown = repo.shown_by_subsystem()
    with_items = {group.subsystem for group, _ in shown}
    groups = repo.by_subsystem()
    listed = [
        group
        for rank, group in enumerate(groups)
        if rank < DIGEST_SUBSYSTEMS or group.subsystem in with_items
    ]
    lines += [
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
    packer.add_lines(escape(repo.repo), lines)
    for group, items in shown:
        for kind, members in by_kind(items).items():
            add_items(
                packer,
                f"{escape(repo.repo)} · {escape(group.name)} · {KIND_TITLES.get(kind, kind)}",
                members,
                style,
                show_top=False,
            )
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
