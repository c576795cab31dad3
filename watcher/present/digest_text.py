"""Digests as plain text: what the console prints for a digest notifier, what ``digest
--dry-run`` previews, and what services with a title and a body show.

Per repository, in the digest's order (the watch list's, then by name), as Slack gives each
its own message: its totals and counts, what affects the configured code, its first releases
(then where the rest are), its changes per subsystem with their counts per kind, and under
them the most important items whole, each saying its kind; at most the digest's item cap in
all, the rest counted, with where to read them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher.present.counts import plural
from watcher.present.plain import View, affects_lines, format_items
from watcher.present.words import (
    UNSURE_BELOW,
    USES_SHOWN,
    kinds_in_words,
    period_counts,
)
from watcher.untrusted import clean_line

if TYPE_CHECKING:
    from watcher.present.digest import Digest, RepoDigest

SUBSYSTEMS_LISTED = 6  # a digest's subsystems per repository with their counts, then "N more"


def format_digest(
    digest: Digest, threshold: float = UNSURE_BELOW, *, hyperlinks: bool = False
) -> str:
    """Per repository: its counts, what affects the configured code, its first releases
    (then where the rest are), its changes per subsystem, and under them the most important
    items whole, at most the digest's item cap in all; what is left is counted, with where
    to read it."""
    period = f"{digest.period_start:%Y-%m-%d} to {digest.period_end:%Y-%m-%d}"
    lines = [f"Digest for {clean_line(digest.notifier)}: {period}"]
    if digest.empty:
        return "\n".join([*lines, "  nothing new in this period"])
    lines.append(
        f"  {plural(digest.event_count, 'release event')}, "
        f"{plural(digest.changes, 'change')}"
        + (f"; the {digest.shown} most important shown whole" if digest.more_items else "")
    )
    for repo in digest.repos:
        view = View(threshold, repo.repo, hyperlinks)
        lines.append(f"  {clean_line(repo.repo)}: "
                     f"{period_counts(repo.events, repo.changes, repo.kinds)}")
        lines += _digest_affects(repo, "    ")
        for release in repo.releases:
            lines.append(
                f"    {clean_line(release.title)} {release.what}  {clean_line(release.url)}"
            )
        if repo.more_releases:
            page = f": {clean_line(repo.releases_page)}" if repo.releases_page else ""
            lines.append(f"    …and {plural(repo.more_releases, 'more release event')}{page}")
        lines += _digest_subsystems(repo, view)
        if repo.more_items:
            lines.append(
                f"    …{plural(repo.more_items, 'more change')}: see the release "
                f"notes: {', '.join(_release_urls(repo))}"
            )
    return "\n".join(lines)


def _digest_affects(repo: RepoDigest, indent: str) -> list[str]:
    """ "Affects your code", counted over the whole queue; the items it kept as
    ``affects_lines`` draws an event's, the others counted."""
    tally = repo.affects
    return affects_lines(tally.plan(), indent, uses_shown=USES_SHOWN,
                         more=tally.count - len(tally.items))


def _digest_subsystems(repo: RepoDigest, view: View) -> list[str]:
    """The subsystems with shown items, and the largest others, each with its counts."""
    shown = {group.subsystem: items for group, items in repo.shown_by_subsystem()}
    groups = repo.by_subsystem()
    listed = [
        group
        for rank, group in enumerate(groups)
        if rank < SUBSYSTEMS_LISTED or group.subsystem in shown
    ]
    lines: list[str] = []
    for group in listed:
        kinds = kinds_in_words(group.by_kind.most_common())
        lines.append(f"    {group.name}: {plural(group.count, 'change')} ({kinds})")
        lines += format_items(shown.get(group.subsystem, []), "      ", view, show_kind=True)
    named = {group.subsystem for group in listed}
    others = [group for group in groups if group.subsystem not in named]
    if others:
        lines.append(
            f"    …and {plural(len(others), 'more subsystem')} "
            f"({plural(sum(g.count for g in others), 'change')})"
        )
    return lines


def _release_urls(repo: RepoDigest) -> list[str]:
    urls = [clean_line(release.url) for release in repo.releases]
    if repo.more_releases and repo.releases_page:
        urls.append(clean_line(repo.releases_page))
    return urls
