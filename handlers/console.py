"""The ``console`` notifier: a readable summary per event on standard output."""

from __future__ import annotations

from collections import Counter

from handlers.base import Notifier, Progress
from watcher.digest import Digest, by_repo, by_subsystem
from watcher.models import KIND_TITLES, Event, EventItem
from watcher.notes.taxonomy import top_level

VERBS = {"published": "published", "edited": "release notes edited",
         "released": "released (was a pre-release)", "deleted": "deleted"}
CALLED_OUT = ("bc_breaking", "deprecation", "security", "regression")
MAX_LISTED = 10  # per called-out kind; the rest are counted, the link has them all


def _first_line(item: EventItem, width: int = 110) -> str:
    line = item.text.split("\n", 1)[0].strip()
    return line if len(line) <= width else line[: width - 1] + "…"


def _bullets(items: list[EventItem], limit: int = MAX_LISTED) -> list[str]:
    lines = [f"    - [{item.subsystem}] {_first_line(item)}" for item in items[:limit]]
    if len(items) > limit:
        lines.append(f"    … and {len(items) - limit} more")
    return lines


def _counts(counter: dict[str, int], limit: int = 12) -> str:
    shown = [f"{name} {count}" for name, count in list(counter.items())[:limit]]
    rest = sum(list(counter.values())[limit:])
    return " · ".join(shown + ([f"others {rest}"] if rest else []))


def _edit_lines(event: Event) -> list[str]:
    changes = Counter(item.change for item in event.items)
    if not event.items:
        return ["  title or prose edited; no item added, removed or changed"]
    lines = [f"  {changes['added']} added, {changes['removed']} removed, "
             f"{changes['changed']} changed"]
    for change, sign in (("added", "+"), ("removed", "-"), ("changed", "~")):
        picked = [item for item in event.items if item.change == change]
        for item in picked[:MAX_LISTED]:
            lines.append(f"    {sign} [{item.subsystem}] {_first_line(item)}")
            if item.old_text is not None:
                lines.append(f"      was: {item.old_text.split(chr(10), 1)[0][:100]}")
        if len(picked) > MAX_LISTED:
            lines.append(f"    {sign} … and {len(picked) - MAX_LISTED} more")
    return lines


def format_event(event: Event) -> str:
    """Most important first: what happened, the link, BC-breaking and deprecations, counts."""
    title = event.name or event.tag
    tag = f" ({event.tag})" if event.name and event.tag not in event.name else ""
    pre = " [pre-release]" if event.prerelease else ""
    lines = [f"{event.repo}: {title}{tag} {VERBS[event.event]}{pre}", f"  {event.url}"]
    if event.event == "edited":
        lines += _edit_lines(event)
    elif event.items:
        by_subsystem = Counter(top_level(item.subsystem) for item in event.items)
        lines.append(f"  {len(event.items)} items: {_counts(dict(by_subsystem.most_common()))}")
        for kind in CALLED_OUT:
            picked = [item for item in event.items if item.kind == kind]
            if picked:
                lines.append(f"  {KIND_TITLES[kind]} ({len(picked)}):")
                lines += _bullets(picked)
        lines.append(f"  by kind: {_counts(event.summary.by_kind)}")
    return "\n".join(lines)


class ConsoleNotifier(Notifier):
    def send(self, event: Event, progress: Progress) -> None:
        self.context.stdout.write(format_event(event) + "\n\n")
        self.context.stdout.flush()

    def send_digest(self, digest: Digest, progress: Progress) -> None:
        self.context.stdout.write(format_digest(digest) + "\n\n")
        self.context.stdout.flush()


def format_digest(digest: Digest) -> str:
    """Per repo what happened, then per subsystem the counts and the most important items."""
    period = f"{digest.period_start:%Y-%m-%d %H:%M} → {digest.period_end:%Y-%m-%d %H:%M} UTC"
    lines = [f"Digest for {digest.notifier}: {period}"]
    if digest.empty:
        return "\n".join([*lines, "  nothing new in this period"])
    for repo, events in by_repo(digest).items():
        lines.append(f"  {repo}")
        for event in events:
            title = event.name or event.tag
            lines.append(f"    {title} {VERBS[event.event]}: {event.summary.items} items "
                         f"{event.url}")
    lines.append("  by subsystem:")
    for group in by_subsystem(digest):
        kinds = ", ".join(f"{count} {kind}" for kind, count in group.by_kind.items())
        lines.append(f"    {group.subsystem}: {group.count} items ({kinds})")
        for _, item in group.top:
            lines.append(f"      - [{item.kind}] {_first_line(item, 100)}")
    return "\n".join(lines)
