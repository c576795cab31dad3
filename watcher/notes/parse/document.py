"""``parse_notes``: a release body in, its items out, with the prose outside them, the headings
that named only a topic, and whether the body was cut or items were only counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from watcher.models import Item
from watcher.notes.flat import restructure
from watcher.notes.headings import HeadingLookup
from watcher.notes.parse.drafts import without_retold_cells
from watcher.notes.parse.walk import Walker
from watcher.notes.runs import read_blocks
from watcher.notes.text import References, home_repository, normalise_body


class _KnowsNothing:
    def area_ids(self, heading: str) -> list[str]:
        return []

    def kind_of_heading(self, heading: str) -> str | None:
        return None


@dataclass
class ParsedNotes:
    items: list[Item]
    prose: list[str] = field(default_factory=list)  # text outside any item (intro, outro)
    truncated: bool = False
    unknown_headings: list[str] = field(default_factory=list)  # topics: no section, no area
    omitted: int = 0  # items past ``max_items``, counted but not built


def parse_notes(body: str | None, *, lookup: HeadingLookup | None = None,
                max_chars: int | None = None, repo: str | None = None,
                max_items: int | None = None) -> ParsedNotes:
    """Split a release body into items. Bodies over ``max_chars`` are cut at a line boundary.
    ``repo`` (``owner/name``): whose PR links are this release's; else the one most linked.
    Past ``max_items`` items the rest are only counted (``omitted``): what they would cost to
    build, classify and deliver is what the cap bounds."""
    source = normalise_body(body)
    truncated = max_chars is not None and len(source) > max_chars
    if truncated:
        source = source[: source.rfind("\n", 0, max_chars) + 1 or max_chars]
    lookup = lookup or _KnowsNothing()
    lines, blocks = read_blocks(restructure(source, lookup))
    refs = References(repo.lower() if repo else home_repository(source))
    walker = Walker(lines, blocks, lookup, refs)
    walker.walk()
    drafts = iter(without_retold_cells(walker.drafts))
    items: list[Item] = []
    omitted = 0
    for draft in drafts:
        if not any(draft.chunks):
            continue  # its text is empty: no item
        if max_items is not None and len(items) >= max_items:
            omitted = 1 + sum(1 for rest in drafts if any(rest.chunks))  # counted, not built
            break
        items.append(draft.item(refs, lookup))
    return ParsedNotes(items=items, prose=[p for p in walker.prose if p], truncated=truncated,
                       unknown_headings=list(walker.unknown), omitted=omitted)
