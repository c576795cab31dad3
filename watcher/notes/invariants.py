"""Checks that hold for the items of any release's notes, whatever style they are written in.

They say nothing about one file's layout, so they keep the parser honest on notes it has never
seen: every PR reference lands in an item (and in no more items than it was written), no item is
a bare heading, no item swallows two sibling changes or two bold-titled entries, every line of a
BC-breaking or deprecation entry reaches a reader, and what the maintainers' headings say is
what items get.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from watcher.models import ClassifiedItem, Item, top_level
from watcher.notes.blocks import Block, Bullet, Code, Heading, ListBlock, Paragraph
from watcher.notes.flat import restructure
from watcher.notes.headings import CATCH_ALL, HeadingLookup
from watcher.notes.parse import CONTINUED_KINDS
from watcher.notes.runs import read_blocks
from watcher.notes.taxonomy import Taxonomy
from watcher.notes.text import (
    References,
    bold_title,
    code_lines,
    folded,
    home_repository,
    normalise_body,
)


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    references: int = 0   # PR references in the source (outside code)

    @property
    def ok(self) -> bool:
        return not self.problems


def _code(blocks: list[Block]) -> set[int]:
    """The source lines that are code as CommonMark reads them: fenced or indented blocks, at
    the top or inside bullets."""
    found: set[int] = set()
    for block in blocks:
        if isinstance(block, Code):
            found.update(range(block.start, block.end))
        elif isinstance(block, ListBlock):
            for siblings in _bullets(block.bullets):
                for bullet in siblings:
                    found.update(n for n, code in zip(bullet.numbers, bullet.code,
                                                      strict=True) if code)
    return found


def _references(lines: list[str], blocks: list[Block], refs: References) -> Counter[int]:
    """How many lines cite each PR number (code left out: what CommonMark reads as code, and
    what opens a fence where markdown-it gave up nesting deeper, as item texts treat it)."""
    code = _code(blocks) | {n for n, fenced in enumerate(code_lines(lines)) if fenced}
    found: Counter[int] = Counter()
    for number, line in enumerate(lines):
        if number not in code:
            found.update(refs.in_line(line))
    return found


def _check_references(cited: Counter[int], items: list[Item], report: Report) -> None:
    holders = Counter(pr for item in items for pr in item.prs)
    for number, times in sorted(cited.items()):
        if holders[number] == 0:
            report.problems.append(f"#{number} is in no item")
        elif holders[number] > times:
            report.problems.append(f"#{number} is cited {times} times but held by "
                                   f"{holders[number]} items")


def _check_not_headings(headings: list[Heading], items: list[Item], lookup: HeadingLookup,
                        report: Report) -> None:
    titles = {folded(h.title).rstrip(":").lower() for h in headings}
    for item in items:
        text = folded(item.text).rstrip(":")
        named = text.lower() in titles or (len(text.split()) <= 4 and (
            lookup.kind_of_heading(text) or lookup.area_ids(text)))
        if named and not item.prs:
            report.problems.append(f"item {text!r} is only a heading's name")


def _bullets(bullets: list[Bullet]) -> Iterator[list[Bullet]]:
    yield bullets
    for bullet in bullets:
        if bullet.children:
            yield from _bullets(bullet.children)


def _check_one_change_each(items: list[Item], refs: References, report: Report) -> None:
    for item in items:
        _, blocks = read_blocks(item.text)
        for block in blocks:
            if not isinstance(block, ListBlock):
                continue
            for siblings in _bullets(block.bullets):
                citing = [b for b in siblings if (prose := b.prose()) and refs.find(
                    prose) and not refs.only(prose)]
                if len(citing) > 1:
                    first = folded(item.text)[:60]
                    report.problems.append(f"item {first!r}… holds {len(citing)} sibling "
                                           "bullets that each cite PRs")
                    break


def _continued_lines(lines: list[str], headings: list[Heading],
                     lookup: HeadingLookup) -> Iterator[str]:
    """Non-blank lines under a BC-breaking or deprecation section, headings that are known
    names left out."""
    stack: list[tuple[int, str | None]] = []
    starts = {h.start: h for h in headings}
    scope = False
    for number, line in enumerate(lines):
        heading = starts.get(number)
        if heading is not None:
            kind = lookup.kind_of_heading(heading.title)
            while stack and stack[-1][0] >= heading.level:
                stack.pop()
            stack.append((heading.level, kind))
            scope = next((k for _, k in reversed(stack) if k and k != CATCH_ALL),
                         None) in CONTINUED_KINDS
            if kind is not None or lookup.area_ids(heading.title):
                continue
            yield heading.source if scope else ""
            continue
        if scope and line.strip():
            yield line


def _check_continued(lines: list[str], headings: list[Heading], items: list[Item],
                     lookup: HeadingLookup, report: Report) -> None:
    # A topic heading over a BC entry's bullets reaches readers as their section and group.
    def plain(text: str) -> str:
        return folded(text).replace("`", "")  # a heading's title drops its code spans' marks

    texts = [plain(item.text) for item in items] + [
        plain(title) for item in items for title in item.section]
    for line in _continued_lines(lines, headings, lookup):
        wanted = plain(line.lstrip(" -*+"))
        if wanted and not any(wanted in text for text in texts):
            report.problems.append(f"BC/deprecation line {wanted[:60]!r} is in no item")


def _check_bullets_kept(blocks: list[ListBlock], headings: list[Heading], items: list[Item],
                        lookup: HeadingLookup, report: Report) -> None:
    """Every bullet reaches a reader: in an item, or as the group its items stand under; only
    a table of contents' entries (links to, or names of, the document's sections) may not."""
    titles = {folded(h.title).lower() for h in headings}
    texts = [folded(item.text) for item in items]
    groups = {folded(name) for item in items for name in item.section}
    for block in blocks:
        for siblings in _bullets(block.bullets):
            for bullet in siblings:
                line = folded(bullet.first_line)
                name = line.rstrip(":").strip("*_ ")
                contents = (line.startswith("[") and "](#" in line) or name.lower() in titles \
                    or lookup.kind_of_heading(name) is not None
                if line and not contents and name not in groups and not any(
                        line in text for text in texts):
                    report.problems.append(f"bullet {line[:60]!r} is in no item")


def _titled_entries(blocks: list[Block]) -> Iterator[tuple[str, str]]:
    """(title, first words of its prose) of each paragraph that is only a bold title with prose
    after it: an entry as a heading would title it (``**[Beta] torch.library.triton_op**``).
    Prose that leads into a list is the list's lead-in: the title then names a group."""
    for block, following, after in zip(blocks, blocks[1:], [*blocks[2:], None], strict=False):
        if (isinstance(block, Paragraph) and isinstance(following, Paragraph)
                and not isinstance(after, ListBlock)
                and (title := bold_title(block.text)) and bold_title(following.text) is None):
            yield folded(title), folded(following.text)[:80]


def _check_entries_apart(blocks: list[Block], items: list[Item], report: Report) -> None:
    """Each bold-titled entry's prose reaches a reader, and no item holds two such entries
    (seven highlight write-ups glued into one item reach no channel of their own)."""
    texts = [folded(item.text) for item in items]
    entries = list(_titled_entries(blocks))
    for title, prose in entries:
        if not any(prose in text for text in texts):
            report.problems.append(f"the prose of entry {title[:60]!r} is in no item")
    for text in texts:
        held = [title for title, prose in entries if title in text and prose in text]
        if len(held) > 1:
            report.problems.append(f"one item holds {len(held)} titled entries: "
                                   f"{held[0][:40]!r}, {held[1][:40]!r}")


def check_items(body: str, items: list[Item], lookup: HeadingLookup,
                repo: str | None = None) -> Report:
    """The structural checks, for items parsed from ``body`` (of ``repo``, if known)."""
    source = restructure(normalise_body(body), lookup)
    lines, blocks = read_blocks(source)
    refs = References(repo.lower() if repo else home_repository(source))
    headings = [block for block in blocks if isinstance(block, Heading)]
    report = Report()
    cited = _references(lines, blocks, refs)
    report.references = sum(cited.values())
    _check_references(cited, items, report)
    _check_not_headings(headings, items, lookup, report)
    _check_one_change_each(items, refs, report)
    _check_continued(lines, headings, items, lookup, report)
    _check_bullets_kept([b for b in blocks if isinstance(b, ListBlock)], headings, items,
                        lookup, report)
    _check_entries_apart(blocks, items, report)
    return report


@dataclass(frozen=True)
class Placement:
    """How many items stand under a recognised heading, and how many took what it says."""

    under_area: int
    area_kept: int
    under_section: int
    section_kept: int

    @property
    def area_share(self) -> float:
        return self.area_kept / self.under_area if self.under_area else 1.0

    @property
    def section_share(self) -> float:
        return self.section_kept / self.under_section if self.under_section else 1.0


def placement(items: list[ClassifiedItem], taxonomy: Taxonomy) -> Placement:
    """Items under an area heading that got its subsystem; under a section, its kind."""
    under_area = area_kept = under_section = section_kept = 0
    for item in items:
        area = taxonomy.heading_area(item.section)
        if area:
            under_area += 1
            area_kept += top_level(item.subsystem) == area
        kinds = [kind for h in item.section if (kind := taxonomy.kind_of_heading(h))]
        if kinds:
            under_section += 1
            section_kept += item.kind in kinds
    return Placement(under_area, area_kept, under_section, section_kept)
