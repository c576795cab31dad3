"""Events as HTML fragments, every item whole: what a feed entry's content shows.

The event's plan (``plan``) in the same order as the plain text (``plain``): what affects the
configured code, the counts,
the called-out kinds, then every other item per subsystem and kind; an edit lists what it
added, changed and removed. Every piece of text from the notes is escaped (``html.escape``
after ``clean_text``), so a release body can add no markup, link or script to a reader's page.
"""

from __future__ import annotations

from html import escape

from watcher.models import KIND_TITLES, Affect, Event, EventItem
from watcher.present.affects import AffectsPlan
from watcher.present.counts import plural
from watcher.present.plan import EventPlan, plan_event, sections_of
from watcher.present.words import (
    CALLED_OUT,
    KIND_NAMES,
    UNSURE_BELOW,
    by_change,
    by_name_note,
    changes_in_words,
    subsystem_tag,
    tally_line,
    use_place,
)
from watcher.untrusted import clean_line, clean_text


def _text(text: str | None) -> str:
    """Untrusted multi-line text as HTML: escaped, its line breaks kept."""
    return escape(clean_text(text)).replace("\n", "<br>\n")


def _line(text: str | None) -> str:
    return escape(clean_line(text))


def _item(item: EventItem, threshold: float) -> str:
    tag = subsystem_tag(item, threshold)
    parts = [f"<strong>[{escape(tag)}]</strong> " if tag else "", _text(item.text)]
    if item.touches_code:
        parts.append(" <em>(affects your code)</em>")
    if item.old_text is not None:
        parts.append(f"<br>\nwas: {_text(item.old_text)}")
    return f"<li>{''.join(parts)}</li>"


def _items(items: list[EventItem], threshold: float) -> list[str]:
    """A list of items; a run of items under one group nested under its name, as in the
    notes."""
    html = ["<ul>"]
    group = ""
    for item in items:
        if item.group != group:
            if group:
                html.append("</ul></li>")
            if item.group:
                html.append(f"<li>{_line(item.group)}:<ul>")
            group = item.group
        html.append(_item(item, threshold))
    if group:
        html.append("</ul></li>")
    html.append("</ul>")
    return html


def _use(use: Affect, named: bool) -> str:
    """``<code>trainer: ckpt.py:6</code> <code>torch.load(path)</code> <em>why</em>``."""
    why = f" <em>{_line(use.why)}</em>" if use.why else ""
    return (f"<br>\n<code>{_line(use_place(use, named=named))}</code> "
            f"<code>{_line(use.code)}</code>{escape(by_name_note(use))}{why}")


def _affects(affects: AffectsPlan) -> list[str]:
    """The tiers, breaks first, each item under them with its uses of that tier and why;
    the mentions counted in one line."""
    if not affects:
        return []
    html = [f"<h3>{escape(affects.title)}</h3>"]
    for group in affects.tiers:
        html += [f"<h4>{escape(group.title)}</h4>", "<ul>"]
        for entry in group.entries:
            uses = "".join(_use(use, affects.named) for use in entry.uses)
            title = _line(entry.item.text.split("\n", 1)[0])
            html.append(f"<li>{KIND_NAMES[entry.item.kind]}: {title}{uses}</li>")
        html.append("</ul>")
    if affects.mentions:
        html.append(f"<p>{escape(affects.mentions)}</p>")
    return html


def _by_subsystem(items: list[EventItem], threshold: float) -> list[str]:
    html: list[str] = []
    for part in sections_of(items, per_change=False):
        html.append(f"<h3>{escape(part.name)} ({plural(part.count, 'change')})</h3>")
        for group in part.groups:
            html.append(f"<h4>{KIND_TITLES.get(group.key, group.key)} ({len(group.items)})</h4>")
            html += _items(group.items, threshold)
    return html


def event_html(event: Event, threshold: float = UNSURE_BELOW) -> str:
    """The event as an HTML fragment: its headline linked to the release, then its items."""
    return plan_html(plan_event(event, threshold), threshold)


def plan_html(plan: EventPlan, threshold: float) -> str:
    event = plan.event
    html = [
        f'<p><a href="{escape(clean_line(event.url), quote=True)}">'
        f"{escape(plan.headline)}</a></p>"
    ]
    html += _affects(plan.affects)
    if plan.unmentioned is not None:
        html.append(f"<p>{escape(plan.unmentioned)}</p>")
    if plan.edited:
        if not plan.changes:
            return "\n".join(
                [*html, "<p>Title or prose edited; no item added, removed or changed.</p>"]
            )
        html.append(f"<p>{escape(changes_in_words(plan.changes))}</p>")
        for change, picked in by_change(plan.changes):
            html.append(f"<h3>{change.capitalize()} ({len(picked)})</h3>")
            html += _items(picked, threshold)
        return "\n".join(html)
    if plan.counts is None:
        return "\n".join(html)
    html.append(f"<p>{escape(tally_line(plan.counts))}</p>")
    for group in plan.callouts:
        html.append(f"<h3>{KIND_TITLES[group.key]} ({len(group.items)})</h3>")
        html += _items(group.items, threshold)
    rest = [item for item in plan.items if item.kind not in CALLED_OUT]
    return "\n".join(html + _by_subsystem(rest, threshold))
