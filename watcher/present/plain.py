"""Events and digests as plain text, every item whole: what the console prints, what
``--dry-run`` previews for any notifier, and what services with a title and a body show.

Most important first: the headline, the link, the counts, BC-breaking changes, deprecations,
security fixes, regressions and highlights, then every other item per subsystem and kind. An
item shows as the notes wrote it (continuation lines, nested bullets, code), indented under its
bullet; control characters from the notes are dropped, so nothing printed can drive the
terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher.delivery import Digest
from watcher.models import KIND_TITLES, Event, EventItem
from watcher.present.words import (
    AFFECTS_TITLE,
    CALLED_OUT,
    CHANGE_SIGNS,
    KIND_NAMES,
    KIND_ORDER,
    UNSURE_BELOW,
    USES_SHOWN,
    breaking,
    by_change,
    by_name_note,
    by_top_subsystem,
    changes_in_words,
    count_line,
    headline,
    plural,
    subsystem_tag,
    use_place,
    uses_summary,
)
from watcher.untrusted import clean_line, clean_text

if TYPE_CHECKING:
    from watcher.delivery.digest import RepoDigest

SUBSYSTEMS_LISTED = 6  # a digest's subsystems per repository with their counts, then "N more"


def format_item(item: EventItem, indent: str, *, threshold: float = UNSURE_BELOW,
                sign: str = "-") -> list[str]:
    """``- [FSDP] first line`` and the rest of the item indented under it; an item that
    touches the configured code is marked ``(affects your code)``."""
    tag = subsystem_tag(item, threshold)
    first, *rest = clean_text(item.text).split("\n")
    mark = " (affects your code)" if item.touches_code else ""
    lines = [f"{indent}{sign} " + (f"[{tag}] " if tag else "") + first + mark]
    lines += [f"{indent}    {line}".rstrip() for line in rest]
    if item.old_text is not None:
        was_first, *was_rest = clean_text(item.old_text).split("\n")
        lines.append(f"{indent}    was: {was_first}")
        lines += [f"{indent}         {line}".rstrip() for line in was_rest]
    return lines


def _items(items: list[EventItem], indent: str, threshold: float, *,
           signs: bool = False) -> list[str]:
    """Items whole; a run of items under one group headed by its name, as in the notes."""
    lines: list[str] = []
    group = ""
    for item in items:
        if item.group and item.group != group:
            lines.append(f"{indent}{clean_line(item.group)}:")
        group = item.group
        lines += format_item(item, indent + ("  " if item.group else ""), threshold=threshold,
                             sign=CHANGE_SIGNS[item.change] if signs else "-")
    return lines


def _edit_lines(event: Event, threshold: float) -> list[str]:
    if not event.items:
        return ["  title or prose edited; no item added, removed or changed"]
    lines = [f"  {changes_in_words(event.items)}"]
    for change, picked in by_change(event.items):
        lines.append(f"  {change.capitalize()} ({len(picked)}):")
        lines += _items(picked, "    ", threshold, signs=True)
    return lines


def _by_subsystem(items: list[EventItem], threshold: float) -> list[str]:
    lines: list[str] = []
    for name, group in by_top_subsystem(items):
        lines.append(f"  {name} ({plural(len(group), 'change')}):")
        for kind in KIND_ORDER:
            picked = [item for item in group if item.kind == kind]
            if picked:
                lines.append(f"    {KIND_TITLES[kind]} ({len(picked)}):")
                lines += _items(picked, "      ", threshold)
    return lines


def affects_lines(items: list[EventItem], indent: str, *, uses_shown: int | None = None
                  ) -> list[str]:
    """"Affects your code (N): …" and under each BC-breaking or deprecation item that touches
    the configured code, its uses as ``path:line  code`` (all of them, or ``uses_shown``)."""
    picked = breaking(items)
    if not picked:
        return []
    lines = [f"{indent}{AFFECTS_TITLE} ({len(picked)}, {uses_summary(picked)}):"]
    for item in picked:
        title = clean_line(item.text.split("\n", 1)[0])
        lines.append(f"{indent}  - {KIND_NAMES[item.kind]}: {title}")
        uses = item.affects or []
        for use in uses[:uses_shown]:
            lines.append(f"{indent}      {clean_line(use_place(use))}  {clean_line(use.code)}"
                         f"{by_name_note(use)}")
        if uses_shown is not None and len(uses) > uses_shown:
            lines.append(f"{indent}      +{len(uses) - uses_shown} more")
    return lines


def format_event(event: Event, threshold: float = UNSURE_BELOW) -> str:
    """The headline, the link, what affects the configured code, the counts, the called-out
    kinds, then every other item."""
    lines = [clean_line(headline(event)), f"  {clean_line(event.url)}"]
    lines += affects_lines(event.items, "  ")
    if event.event == "edited":
        return "\n".join(lines + _edit_lines(event, threshold))
    if not event.items:
        return "\n".join(lines)
    lines.append(f"  {count_line(event.items, threshold)}")
    rest = [item for item in event.items if item.kind not in CALLED_OUT]
    for kind in CALLED_OUT:
        picked = [item for item in event.items if item.kind == kind]
        if picked:
            lines.append(f"  {KIND_TITLES[kind]} ({len(picked)}):")
            lines += _items(picked, "    ", threshold)
    return "\n".join(lines + _by_subsystem(rest, threshold))


def format_digest(digest: Digest, threshold: float = UNSURE_BELOW) -> str:
    """Per repository: what affects the configured code, its first releases (then where the
    rest are), its changes per subsystem, and under them the most important items whole, at
    most the digest's item cap in all; what is left is counted, with where to read it."""
    period = f"{digest.period_start:%Y-%m-%d} to {digest.period_end:%Y-%m-%d}"
    lines = [f"Digest for {clean_line(digest.notifier)}: {period}"]
    if digest.empty:
        return "\n".join([*lines, "  nothing new in this period"])
    lines.append(f"  {plural(digest.event_count, 'release event')}, "
                 f"{plural(digest.changes, 'change')}"
                 + (f"; the {digest.shown} most important shown whole" if digest.more_items
                    else ""))
    for repo in digest.repos:
        lines.append(f"  {clean_line(repo.repo)}")
        lines += _digest_affects(repo, "    ")
        for release in repo.releases:
            lines.append(f"    {clean_line(release.title)} {release.what}  "
                         f"{clean_line(release.url)}")
        if repo.more_releases:
            page = f": {clean_line(repo.releases_page)}" if repo.releases_page else ""
            lines.append(f"    …and {plural(repo.more_releases, 'more release event')}{page}")
        lines += _digest_subsystems(repo, threshold)
        if repo.more_items:
            lines.append(f"    …{plural(repo.more_items, 'more change')}: see the release "
                         f"notes: {', '.join(_release_urls(repo))}")
    return "\n".join(lines)


def _digest_affects(repo: RepoDigest, indent: str) -> list[str]:
    """"Affects your code", counted over the whole queue; the items as ``affects_lines``."""
    tally = repo.affects
    if not tally.count:
        return []
    lines = affects_lines(tally.items, indent, uses_shown=USES_SHOWN)
    lines[0] = f"{indent}{AFFECTS_TITLE} ({tally.summary}):"
    if tally.count > len(tally.items):
        lines.append(f"{indent}  …and {tally.count - len(tally.items)} more")
    return lines


def _digest_subsystems(repo: RepoDigest, threshold: float) -> list[str]:
    """The subsystems with shown items, and the largest others, each with its counts."""
    shown = {group.subsystem: items for group, items in repo.shown_by_subsystem()}
    groups = repo.by_subsystem()
    listed = [group for rank, group in enumerate(groups)
              if rank < SUBSYSTEMS_LISTED or group.subsystem in shown]
    lines: list[str] = []
    for group in listed:
        kinds = ", ".join(f"{count} {KIND_TITLES.get(kind, kind).lower()}"
                          for kind, count in group.by_kind.most_common())
        lines.append(f"    {group.name}: {plural(group.count, 'change')} ({kinds})")
        lines += _items(shown.get(group.subsystem, []), "      ", threshold)
    named = {group.subsystem for group in listed}
    others = [group for group in groups if group.subsystem not in named]
    if others:
        lines.append(f"    …and {plural(len(others), 'more subsystem')} "
                     f"({plural(sum(g.count for g in others), 'change')})")
    return lines


def _release_urls(repo: RepoDigest) -> list[str]:
    urls = [clean_line(release.url) for release in repo.releases]
    if repo.more_releases and repo.releases_page:
        urls.append(clean_line(repo.releases_page))
    return urls
