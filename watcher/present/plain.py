"""Events as plain text, every item whole: what the console prints, what ``--dry-run``
previews for any notifier, and what services with a title and a body show.

The event's plan (``plan``), most important first: the headline, the link, what a rename
changed, the counts, BC-breaking changes, deprecations, security fixes, regressions and
highlights, then every other item per subsystem and kind. The counts add up with the sections
below them: an item listed under BC-breaking is counted there, not under its subsystem, and each
subsystem says how many of its items were listed first. An item shows as the notes wrote it
(continuation lines, nested bullets, code), indented under its bullet, its markdown links as
``#123`` (``links``); control characters from the notes show as visible escapes, so nothing
printed can drive the terminal.

The short form (``poll --short``) is the headline, the counts, the BC-breaking changes and
deprecations by their first lines, and how many more there are with the release's address.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from watcher.models import KIND_TITLES, Affect, Event, EventItem
from watcher.present.affects import AffectsPlan
from watcher.present.counts import plural
from watcher.present.links import show_links
from watcher.present.plan import EventPlan, plan_event, sections_of
from watcher.present.words import (
    CALLED_OUT,
    CHANGE_SIGNS,
    KIND_NAMES,
    UNSURE_BELOW,
    USES_SHOWN,
    by_change,
    by_name_note,
    by_top_subsystem,
    changes_in_words,
    is_unsure,
    subsystem_tag,
    use_place,
)
from watcher.untrusted import clean_line, clean_text

SHORT_KINDS = ("bc_breaking", "deprecation")  # what the short form lists, by first lines
SHORT_SUBSYSTEMS = 5  # subsystems the short form names in its counts; the rest counted together


@dataclass(frozen=True)
class View:
    """How items are shown: how sure a subsystem must be not to be a guess, the repository
    PR references point to, and whether links are terminal hyperlinks (OSC 8)."""

    threshold: float = UNSURE_BELOW
    repo: str = ""
    hyperlinks: bool = False

    def text(self, markdown: str) -> str:
        return show_links(markdown, self.repo, hyperlinks=self.hyperlinks)

    def lines(self, markdown: list[str]) -> list[str]:
        """Lines of an item, links shown as a terminal shows them except in a fenced code
        block, where ``d[k](x)`` is code, not a link."""
        shown, fenced = [], False
        for line in markdown:
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
                shown.append(line)
            else:
                shown.append(line if fenced else self.text(line))
        return shown


def format_item(
    item: EventItem,
    indent: str,
    view: View,
    *,
    sign: str = "-",
    show_kind: bool = False,
    first_line_only: bool = False,
) -> list[str]:
    """``- [FSDP] first line`` and the rest of the item indented under it; ``show_kind``
    names its kind first (``~ BC-breaking: [FSDP] …``), where no heading says it; an item
    that touches the configured code is marked ``(affects your code)``."""
    tag = subsystem_tag(item, view.threshold)
    first, *rest = clean_text(item.text).split("\n")
    kind = f"{KIND_NAMES.get(item.kind, item.kind)}: " if show_kind else ""
    mark = " (affects your code)" if item.touches_code else ""
    lines = [f"{indent}{sign} {kind}" + (f"[{tag}] " if tag else "") + view.text(first) + mark]
    if first_line_only:
        return lines
    lines += [f"{indent}    {line}".rstrip() for line in view.lines(rest)]
    if item.old_text is not None:
        was_first, *was_rest = clean_text(item.old_text).split("\n")
        lines.append(f"{indent}    was: {view.text(was_first)}")
        lines += [f"{indent}         {line}".rstrip() for line in view.lines(was_rest)]
    return lines


def format_items(
    items: Iterable[EventItem],
    indent: str,
    view: View,
    *,
    signs: bool = False,
    show_kind: bool = False,
) -> list[str]:
    """Items whole; a run of items under one group headed by its name, as in the notes."""
    lines: list[str] = []
    group = ""
    for item in items:
        if item.group and item.group != group:
            lines.append(f"{indent}{clean_line(item.group)}:")
        group = item.group
        lines += format_item(
            item,
            indent + ("  " if item.group else ""),
            view,
            sign=CHANGE_SIGNS[item.change] if signs else "-",
            show_kind=show_kind,
        )
    return lines


def _change_lines(items: list[EventItem], view: View, indent: str) -> list[str]:
    """An edit's (or a promotion's) changes: in words, then per change, each naming its kind."""
    lines = [f"{indent}{changes_in_words(items)}"]
    for change, picked in by_change(items):
        lines.append(f"{indent}{change.capitalize()} ({len(picked)}):")
        lines += format_items(picked, indent + "  ", view, signs=True, show_kind=True)
    return lines


def sections_line(
    items: list[EventItem], threshold: float = UNSURE_BELOW, *, subsystems: int | None = None
) -> str:
    """``609 changes: 45 by kind (BC-breaking 11 · …), 564 by subsystem (torch.compile 130 ·
    …); 12 unsure``: the numbers of the sections that follow, which add up to the total.
    ``subsystems``: how many to name before counting the rest together."""
    called = [(kind, sum(1 for item in items if item.kind == kind)) for kind in CALLED_OUT]
    called = [(kind, count) for kind, count in called if count]
    rest = [item for item in items if item.kind not in CALLED_OUT]
    by_kind = " · ".join(f"{KIND_TITLES[kind]} {count}" for kind, count in called)
    groups = by_top_subsystem(rest)
    named = [f"{name} {len(group)}" for name, group in groups[:subsystems]]
    if len(named) < len(groups):
        others = groups[len(named) :]
        named.append(
            f"{plural(len(others), 'more subsystem')} {sum(len(group) for _, group in others)}"
        )
    by_subsystem = " · ".join(named)
    if called and rest:
        parts = (
            f"{sum(count for _, count in called)} by kind ({by_kind}), "
            f"{len(rest)} by subsystem ({by_subsystem})"
        )
    else:
        parts = by_kind or by_subsystem
    unsure = sum(1 for item in items if is_unsure(item, threshold))
    return f"{plural(len(items), 'change')}: {parts}" + (f"; {unsure} unsure" if unsure else "")


def _by_subsystem(items: list[EventItem], view: View) -> list[str]:
    """Every item not listed first, per subsystem and kind; each subsystem says how many of
    its items were listed under a kind above instead."""
    lines: list[str] = []
    elsewhere = {
        name: group
        for name, group in by_top_subsystem(item for item in items if item.kind in CALLED_OUT)
    }
    for part in sections_of([item for item in items if item.kind not in CALLED_OUT],
                            per_change=False):
        moved = elsewhere.get(part.name, [])
        note = ""
        if moved:
            kinds = ", ".join(
                KIND_TITLES[kind] for kind in CALLED_OUT if any(item.kind == kind for item in moved)
            )
            note = f"; {len(moved)} more under {kinds}"
        lines.append(f"  {part.name} ({plural(part.count, 'change')}{note}):")
        for group in part.groups:
            lines.append(f"    {KIND_TITLES.get(group.key, group.key)} ({len(group.items)}):")
            lines += format_items(group.items, "      ", view)
    return lines


def use_text(use: Affect, named: bool) -> str:
    """``train/ckpt.py:6  return torch.load(path)  — relies on the default of weights_only,
    changed``: where, the code, then why; ``named``: the place names its codebase."""
    why = f"  — {clean_line(use.why)}" if use.why else ""
    return (f"{clean_line(use_place(use, named=named))}  {clean_line(use.code)}"
            f"{by_name_note(use)}{why}")


def affects_lines(
    affects: AffectsPlan, indent: str, *, uses_shown: int | None = None, more: int = 0
) -> list[str]:
    """ "Affects your code (…)": the tiers, breaks first, each item under them with its uses
    of that tier (``use_text``; all of them, or ``uses_shown``); ``more``: items not listed
    (a digest's); then the one line counting the mentions."""
    if not affects:
        return []
    lines = [f"{indent}{affects.title}:"]
    for group in affects.tiers:
        lines.append(f"{indent}  {group.title}:")
        for entry in group.entries:
            title = clean_line(entry.item.text.split("\n", 1)[0])
            lines.append(f"{indent}    - {KIND_NAMES[entry.item.kind]}: {title}")
            lines += [f"{indent}        {use_text(use, affects.named)}"
                      for use in entry.uses[:uses_shown]]
            if uses_shown is not None and len(entry.uses) > uses_shown:
                lines.append(f"{indent}        +{len(entry.uses) - uses_shown} more")
    if more:
        lines.append(f"{indent}  …and {more} more")
    if affects.mentions:
        lines.append(f"{indent}  {affects.mentions}")
    return lines


def _opening(plan: EventPlan, view: View, *, short: bool) -> list[str]:
    """The headline, the link (the short form ends with it instead), what a rename changed,
    what affects the configured code, and for an edit or a promotion what its notes changed."""
    event, rename = plan.event, plan.rename
    lines = [clean_line(plan.headline)]
    if not short:
        lines.append(f"  {clean_line(event.url)}")
    if rename is not None:
        lines.append(f"  {rename}")
    lines += affects_lines(plan.affects, "  ", uses_shown=USES_SHOWN if short else None)
    if plan.unmentioned is not None:
        lines.append(f"  {plan.unmentioned}")
    if event.event == "edited" and not event.items and rename is None:
        lines.append("  prose edited; no item added, removed or changed")
    if event.changes and not short:
        lines.append("  the notes changed at promotion:")
        lines += _change_lines(event.changes, view, "    ")
    elif event.changes:
        lines.append(f"  the notes changed at promotion: {changes_in_words(event.changes)}")
    return lines


def format_event(
    event: Event, threshold: float = UNSURE_BELOW, *, short: bool = False, hyperlinks: bool = False
) -> str:
    """The headline, the link, what affects the configured code, the counts, the called-out
    kinds, then every other item. ``short``: the terminal's summary (``poll --short``);
    ``hyperlinks``: links as OSC 8 hyperlinks, for a terminal."""
    view = View(threshold, event.repo, hyperlinks)
    plan = plan_event(event, threshold)
    lines = _opening(plan, view, short=short)
    if short:
        return "\n".join(lines + _short_rest(event, view))
    if plan.edited:
        if plan.changes:
            lines += _change_lines(plan.changes, view, "  ")
        return "\n".join(lines)
    if not plan.items:
        return "\n".join(lines)
    lines.append(f"  {sections_line(plan.items, threshold)}")
    for group in plan.callouts:
        lines.append(f"  {KIND_TITLES[group.key]} ({len(group.items)}):")
        lines += format_items(group.items, "    ", view)
    return "\n".join(lines + _by_subsystem(plan.items, view))


def _short_rest(event: Event, view: View) -> list[str]:
    """The counts (or an edit's changes in words), the BC-breaking changes and deprecations
    by their first lines, then how many more and where to read them."""
    items = event.items
    edited = event.event == "edited"
    lines: list[str] = []
    if items:
        counts = (
            changes_in_words(items)
            if edited
            else sections_line(items, view.threshold, subsystems=SHORT_SUBSYSTEMS)
        )
        lines.append(f"  {counts}")
    shown = 0
    for kind in SHORT_KINDS:
        picked = [item for item in items if item.kind == kind]
        if picked:
            lines.append(f"  {KIND_TITLES[kind]} ({len(picked)}):")
            for item in picked:
                lines += format_item(
                    item,
                    "    ",
                    view,
                    first_line_only=True,
                    sign=CHANGE_SIGNS[item.change] if edited else "-",
                )
            shown += len(picked)
    url = clean_line(event.url)
    more = len(items) - shown
    lines.append(f"  {plural(more, 'more change')}: {url}" if more else f"  {url}")
    return lines
