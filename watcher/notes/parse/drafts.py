"""A draft item: the chunks of text an item is being built from, where it stands, and what
read it (an entry's title, a table cell); ``Draft.item`` makes the ``Item``.
"""

from __future__ import annotations

from dataclasses import dataclass

from watcher.models import Item
from watcher.notes.blocks import plain_text
from watcher.notes.headings import HeadingLookup
from watcher.notes.tables import Retold
from watcher.notes.text import References

CONTINUED_KINDS = frozenset({"bc_breaking", "deprecation"})  # entries run on in prose


@dataclass(slots=True)
class Draft:
    chunks: list[str]
    section: tuple[str, ...]
    lead: str = ""
    group: str = ""
    title: str = ""         # an entry's heading, to match highlight-table cells against
    bold: bool = False      # its title is a bold line's markdown (read as text where needed)
    from_table: bool = False
    group_depth: int = 0    # how many of the section's last names are group bullets

    @property
    def text(self) -> str:
        if len(self.chunks) == 1:  # a bullet or a cell: asked of every item of the body
            return self.chunks[0]
        return "\n\n".join(chunk for chunk in self.chunks if chunk)

    def item(self, refs: References, lookup: HeadingLookup | None = None) -> Item:
        """``lookup``: what names an area, for an entry whose title is one ("[Prototype]
        FlexAttention"); asked only of the items built, not of every entry of a body."""
        text = self.text
        prs = refs.find(text)
        section = self.section
        if self.title:  # an entry's first line is its heading: prose, never a code fence
            rest = "\n\n".join(chunk for chunk in self.chunks[1:] if chunk)
            prs = tuple(dict.fromkeys((*refs.in_prose_line(self.chunks[0]), *refs.find(rest))))
            if lookup is not None and lookup.area_ids(self.title):  # its own area
                section = (*section, plain_text(self.title) if self.bold else self.title)
        elif self.from_table:
            prs = refs.in_prose_line(text)
        return Item(text=text, section=section, prs=prs, lead=self.lead,
                    group=self.group, group_depth=self.group_depth)


def without_retold_cells(drafts: list[Draft]) -> list[Draft]:
    """A highlight table often lists the entries the notes then tell in full: keep those."""
    titles = [d.title for d in drafts if d.title]
    if not titles or not any(d.from_table for d in drafts):
        return drafts
    told = Retold(titles)
    return [d for d in drafts if not d.from_table or not told.retells(" ".join(d.chunks))]
