"""A list's bullets → drafts: an item per bullet, group bullets split into their children,
labels governing the siblings below them, migration notes joined to the bullet above them;
and whether a list is a table of contents.

``ListReader`` is the walker's helper for lists (``watcher.notes.parse.walk``): it shares the
walker's lines, references and prose, and is told the section and whether entries there run on
in prose.
"""

from __future__ import annotations

import re

from watcher.notes.blocks import Bullet
from watcher.notes.headings import HeadingLookup, heading_keys
from watcher.notes.parse.bullets import carries, group_name, label_like, lead_group, split_lazy
from watcher.notes.parse.drafts import Draft
from watcher.notes.text import References

_ANCHOR = re.compile(r"^\[[^\]]*\]\(#[^)\s]*\)$")


class ListReader:
    def __init__(self, lines: list[str], refs: References, lookup: HeadingLookup,
                 document_keys: set[str], prose: list[str]) -> None:
        self.lines = lines
        self.refs = refs
        self.lookup = lookup
        self.document_keys = document_keys  # every heading's keys: what a contents list names
        self.prose = prose  # the walker's: text outside any item

    def is_contents(self, bullets: list[Bullet]) -> bool:
        """A table of contents: every entry an anchor link or the name of a section."""
        if len(bullets) < 2:
            return False
        for bullet in bullets:
            text = bullet.own_text()
            if self.refs.find(text) or "\n" in text:
                return False
            named = (_ANCHOR.match(text) or self.lookup.kind_of_heading(text)
                     or set(heading_keys(text)) & self.document_keys)
            if not named or (bullet.children and not self.is_contents(bullet.children)):
                return False
        return True

    def adjacent(self, bullet: Bullet) -> bool:
        """Whether no blank line separates the bullet from the one above it."""
        return bullet.start > 0 and bool(self.lines[bullet.start - 1].strip())

    def bullet_items(self, bullets: list[Bullet], section: tuple[str, ...], lead: str,
                     group: str, *, continued: bool) -> list[Draft]:
        """The items of a list's bullets (a body may hold 30,000: each step counts).
        ``continued``: the section's entries run on in prose (BC-breaking, deprecations)."""
        out: list[Draft] = []
        label = ""
        previous: Draft | None = None
        refs = self.refs
        final = len(bullets) - 1
        for position, original in enumerate(bullets):
            last = position == final
            # A bullet of one line has no lazy lines to split off (most of them).
            bullet, lazy = split_lazy(original, last) if len(original.own) > 1 else (original, "")
            if lazy and refs.find(lazy):
                bullet, lazy = original, ""  # a lead-in citing a PR would leave it in no item
            own_refs = refs.find(bullet.prose())
            # Whether a blank line parts it from the bullet above: asked only where it counts.
            adjacent = bool(own_refs or continued) and self.adjacent(bullet)
            if not own_refs or not adjacent:
                label = ""  # a label governs the bullets right below it, up to a blank line
            children = bullet.children
            if (continued and previous is not None and adjacent and not own_refs
                    and previous.item(refs).prs and not label_like(bullet, refs)
                    and not any(carries(child, refs) for child in children)):
                # "- Users should supply `dynamic_shapes` instead." under a deprecation: the
                # migration note of the bullet above, not a change of its own.
                previous.chunks.append(bullet.text())
            elif not own_refs and children and any(carries(child, refs) for child in children):
                name = group_name(bullet.first_line)
                rest = "\n".join(bullet.own_text().split("\n")[1:]).strip()
                if rest:
                    self.prose.append(rest)
                out.extend(self.bullet_items(children, (*section, name), lead, name,
                                             continued=continued))
            elif not own_refs and not last and self.adjacent(bullets[position + 1]) and carries(
                    bullets[position + 1], refs) and label_like(bullet, refs):
                label = group_name(bullet.first_line)
            else:
                previous = Draft([bullet.text()], (*section, label) if label else section,
                                 lead=lead, group=label or group)
                out.append(previous)
            if lazy:
                self.prose.append(lazy)
                lead, group, label = lazy, lead_group(lazy), ""
        return out
