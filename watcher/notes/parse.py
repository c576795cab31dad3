"""Release-notes markdown → items, each with the section path it stands under.

Built for the family of styles PyTorch and PyTorch/XLA notes are written in, recognised by
structure and by name, never by heading level or by file:

* a bullet is an item, with its continuation lines, code and nested explanation;
* a bullet that only names a group (``- c10d``, ``- DTensor:``: no reference of its own) whose
  nested bullets carry references is split: each nested bullet is an item and the group's name
  joins the section path; a short reference-less label followed by sibling bullets that carry
  references (a flattened group) governs those siblings the same way;
* a heading followed by prose or code is an entry (``### title`` + prose + code in BC-breaking
  notes, ``#### [Beta] Title`` + prose in highlights); a heading whose title cites PRs is an
  entry whatever follows; other headings are context (section, area, or a topic of the notes);
* a paragraph of only a bold title followed by prose is an entry as such a heading is
  (``**[Beta] torch.library.triton_op**`` + prose, PyTorch 2.6's highlights); over a list of
  changes it names their group, and stays what it was read as before;
* in BC-breaking and deprecation sections, prose, code and sub-headings after a bullet belong to
  that bullet (the migration notes), so nothing a reader needs is left outside an item;
* tables of contents (anchor links, or bullets naming the document's own sections) are skipped;
  table cells (PyTorch's highlight tables) are items unless an entry tells the same story.

Which names are sections or areas is the taxonomy's business; the parser asks it through
``HeadingLookup``. Flattened notes (one huge line, or one line per paragraph) are first given
their structure back by ``watcher.notes.flat``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from watcher.models import Item
from watcher.notes.blocks import (
    Block,
    Bullet,
    Code,
    Heading,
    ListBlock,
    Other,
    Paragraph,
    plain_text,
)
from watcher.notes.bullets import (
    carries,
    cites_beyond,
    group_name,
    label_like,
    lead_group,
    split_lazy,
)
from watcher.notes.flat import restructure
from watcher.notes.headings import CATCH_ALL, HeadingLookup, heading_keys
from watcher.notes.runs import read_blocks
from watcher.notes.tables import Retold, Table
from watcher.notes.text import (
    References,
    bold_title,
    home_repository,
    normalise_body,
    trim_blank,
)

CONTINUED_KINDS = frozenset({"bc_breaking", "deprecation"})  # entries run on in prose
_ANCHOR = re.compile(r"^\[[^\]]*\]\(#[^)\s]*\)$")


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


@dataclass(slots=True)
class _Draft:
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


class _Walker:
    """One pass over the document's blocks, keeping the heading stack."""

    def __init__(self, lines: list[str], blocks: list[Block], lookup: HeadingLookup,
                 refs: References) -> None:
        self.lines = lines
        self.refs = refs
        self.blocks = blocks
        self.lookup = lookup
        self.stack: list[tuple[int, str, bool]] = []  # level, title, names only a topic
        self.drafts: list[_Draft] = []
        self.prose: list[str] = []
        self.lead = ""
        self.open: _Draft | None = None  # the bullet later prose continues (BC/deprecation)
        self.unknown: dict[str, None] = {}
        self.document_keys = {key for block in blocks if isinstance(block, Heading)
                              for key in heading_keys(block.title)}
        # Which blocks are paragraphs of only a bold title; whether one titles an entry is
        # asked up to three times (walk, heading, entry).
        self.bold = [isinstance(block, Paragraph) and bold_title(block.text) is not None
                     for block in blocks]
        self.titled: dict[int, bool] = {}

    @property
    def section(self) -> tuple[str, ...]:
        return tuple(title for _, title, _ in self.stack)

    @property
    def topic(self) -> str:
        """The innermost heading when it names a topic, not a section or an area ("Several
        config variables … have been renamed"): the group its bullets stand in."""
        return group_name(self.stack[-1][1]) if self.stack and self.stack[-1][2] else ""

    def _continued(self) -> bool:
        """Whether the nearest section heading is one whose entries run on in prose (a
        catch-all, "Miscellaneous", is no section: the one above it says)."""
        for _, title, _ in reversed(self.stack):
            kind = self.lookup.kind_of_heading(title)
            if kind is not None and kind != CATCH_ALL:
                return kind in CONTINUED_KINDS
        return False

    def walk(self) -> None:
        index = 0
        while index < len(self.blocks):
            block = self.blocks[index]
            if isinstance(block, Heading):
                index = self.heading(index)
                continue
            if isinstance(block, ListBlock):
                self.list_block(block)
            elif isinstance(block, Paragraph) and self._titles_entry(index) and (
                    self.open is None or self.refs.find(self._source(
                        block.start, self.blocks[index + 1]))):  # else a BC bullet's notes
                index = self.entry(index)
                continue
            elif isinstance(block, Paragraph) and self.open is None and self.refs.find(
                    block.text):
                index = self.citing_paragraph(index)
                continue
            elif isinstance(block, Paragraph):
                self.paragraph(block, self._next(index))
            elif isinstance(block, Table):
                self.table(block)
            elif isinstance(block, Other) and self.open is None and self.refs.find(block.text):
                self.drafts.append(_Draft([block.text], self.section, group=self.topic))
            elif isinstance(block, (Code, Other)):
                self.loose(block.text)
            index += 1

    def _next(self, index: int) -> Block | None:
        return self.blocks[index + 1] if index + 1 < len(self.blocks) else None

    def _titles_entry(self, index: int) -> bool:
        """A paragraph that is only a bold title, with prose after it, titles an entry as a
        heading would (``**[Beta] torch.library.triton_op**`` + what it is, in highlights).
        Before a list or code it may name a group, or lead in ("**Example:**"); over bullets
        that cite PRs of their own it names what they stand in: not an entry, as before. One
        that cites PRs is an entry whatever follows, as such a heading is."""
        if index + 1 >= len(self.blocks) or not self.bold[index] or self.bold[index + 1]:
            return False
        titled = self.titled.get(index)
        if titled is None:
            titled = self.titled[index] = isinstance(
                self._next(index), Paragraph) and self._titles_stories(index)
        return titled

    def _titles_stories(self, index: int) -> bool:
        """Whether the bold title at ``index`` tells a story, not names a list's group: it
        cites PRs, or no list of changes follows it before the next heading or bold title."""
        title = self.blocks[index]
        assert isinstance(title, Paragraph)
        if self.refs.in_prose_line(title.text):
            return True
        for later in range(index + 2, len(self.blocks)):
            after = self.blocks[later]
            if isinstance(after, Heading) or self.bold[later]:
                return True
            if isinstance(after, ListBlock) and any(carries(b, self.refs) for b in after.bullets):
                return False
        return True

    def _body_end(self, index: int) -> int:
        """Index of the next heading after ``index`` (of any level)."""
        for position in range(index + 1, len(self.blocks)):
            if isinstance(self.blocks[position], Heading):
                return position
        return len(self.blocks)

    # ---- headings ------------------------------------------------------------------------
    def heading(self, index: int) -> int:
        heading = self.blocks[index]
        assert isinstance(heading, Heading)
        if self.refs.in_prose_line(heading.source):
            return self.entry(index)
        kind = self.lookup.kind_of_heading(heading.title)
        areas = self.lookup.area_ids(heading.title)
        end = self._body_end(index)
        body = self.blocks[index + 1:end]
        following = self.blocks[end] if end < len(self.blocks) else None
        deeper = isinstance(following, Heading) and following.level > heading.level
        part_follows = deeper and self._part_of_entry(heading, end)  # "#### background"
        parent = deeper and not part_follows  # "#### Decompositions" over "##### …"
        empty = not body and not (part_follows and not areas)
        titled = self._titles_entry(index + 1)  # "### Beta Features" over bold-titled entries
        if kind is not None or empty or parent or titled or self._introduces_items(body):
            topic = kind is None and not areas
            if topic and heading.title:
                self.unknown.setdefault(heading.title)  # an entry's title is not a heading
            self.push(heading, topic=topic)
            return index + 1
        if (self.open is not None and not areas and self._continued()
                and not any(isinstance(b, ListBlock) for b in body)
                and (not self.stack or heading.level > self.stack[-1][0])
                and not any(self.refs.find(b.text) for b in body if not isinstance(b, Table))):
            self.open.chunks.append(self._source(heading.start, self.blocks[end - 1]))
            return end
        return self.entry(index)

    def _introduces_items(self, body: list[Block]) -> bool:
        """A heading is context for what follows when a list comes first, after lead-in
        paragraphs only, or when its lists hold items of their own."""
        lists = [b for b in body if isinstance(b, ListBlock)]
        if not lists:
            return False
        if any(carries(bullet, self.refs) for block in lists for bullet in block.bullets):
            return True
        before = body[:body.index(lists[0])]
        return all(isinstance(b, Paragraph) and b.text.rstrip().endswith(":") for b in before)

    def push(self, heading: Heading, *, topic: bool) -> None:
        while self.stack and self.stack[-1][0] >= heading.level:
            self.stack.pop()
        self.stack.append((heading.level, heading.title, topic))
        self.lead = ""
        self.open = None

    def _source(self, start: int, last: Block) -> str:
        return "\n".join(trim_blank(self.lines[start:last.end]))

    def entry(self, index: int) -> int:
        """``### title`` (or a bold title, ``_titles_entry``) + what follows, up to the next
        heading that is not part of it or the next bold title."""
        heading = self.blocks[index]
        if isinstance(heading, Heading):
            while self.stack and self.stack[-1][0] >= heading.level:
                self.stack.pop()
            source, title = heading.source, heading.title
        else:  # a bold title stands in the section it is written in
            assert isinstance(heading, Paragraph)
            source, title = heading.text, bold_title(heading.text) or ""
        end = index + 1
        cited = set(self.refs.in_prose_line(source))
        while end < len(self.blocks):
            block = self.blocks[end]
            if isinstance(block, Heading) and not (
                    isinstance(heading, Heading) and self._part_of_entry(heading, end)):
                break
            if isinstance(block, ListBlock) and cites_beyond(block, cited, self.refs):
                break  # bullets with changes of their own follow the entry, not inside it
            if isinstance(block, Paragraph) and self.bold[end] and self._titles_entry(end) and (
                    not cited or self.refs.in_prose_line(block.text)):
                break  # the next entry (under a title citing PRs, a part of its story)
            end += 1
        body = self._source(self.blocks[index + 1].start, self.blocks[end - 1]) \
            if end > index + 1 else ""
        # "[Prototype] FlexAttention" is an area of its own: its item says so (``_Draft.item``).
        self.drafts.append(_Draft([source, body], self.section, title=title,
                                  bold=not isinstance(heading, Heading)))
        self.lead = ""
        self.open = None
        return end

    def _part_of_entry(self, entry: Heading, index: int) -> bool:
        """A deeper heading with no name of its own ("Version 2.4", "hipify v1 background")
        and no list of changes under it: a part of the entry's story, not a new one."""
        sub = self.blocks[index]
        assert isinstance(sub, Heading)
        if sub.level <= entry.level or self.refs.in_prose_line(sub.source):
            return False
        if self.lookup.kind_of_heading(sub.title) or self.lookup.area_ids(sub.title):
            return False
        body = self.blocks[index + 1:self._body_end(index)]
        return not any(isinstance(block, ListBlock)
                       and any(carries(b, self.refs) for b in block.bullets) for block in body)

    # ---- other blocks --------------------------------------------------------------------
    def citing_paragraph(self, index: int) -> int:
        """Prose that cites PRs tells of a change, so it is an item, never lost as an intro:
        with the list it introduces when that list's bullets cite nothing of their own
        ("Hipify v2 (#1, #2) makes the following changes:" and its points)."""
        paragraph = self.blocks[index]
        assert isinstance(paragraph, Paragraph)
        following = self._next(index)
        chunks = [paragraph.text]
        end = index + 1
        if isinstance(following, ListBlock):
            if any(carries(bullet, self.refs) for bullet in following.bullets):
                self.lead = paragraph.text  # and it still introduces the changes listed
            else:
                chunks.append(self._source(following.start, following))
                end += 1
        self.drafts.append(_Draft(chunks, self.section, group=self.topic))
        return end

    def paragraph(self, paragraph: Paragraph, following: Block | None) -> None:
        if isinstance(following, ListBlock):
            self.lead = paragraph.text
            self.prose.append(paragraph.text)
            self.open = None
        elif self.open is not None:
            self.open.chunks.append(paragraph.text)
        else:
            self.prose.append(paragraph.text)

    def loose(self, text: str) -> None:
        if self.open is not None:
            self.open.chunks.append(text)
        else:
            self.prose.append(text)

    def table(self, table: Table) -> None:
        above = self.section
        sections = [(*above, title) if title else above for title in table.header]
        for row in table.rows:
            for column, cell in enumerate(row):
                if not cell:
                    continue
                section = sections[column] if column < len(sections) else above
                self.drafts.append(_Draft([cell], section, from_table=True))
        if self.refs.in_prose_line(table.outside):  # text in no cell that still cites PRs
            self.drafts.append(_Draft([table.outside], self.section, group=self.topic,
                                      from_table=True))
        self.open = None

    def list_block(self, block: ListBlock) -> None:
        if self._is_contents(block.bullets):
            self.prose.append(self._source(block.start, block))
            return
        section = self.section
        drafts = self.bullet_items(block.bullets, section, self.lead,
                                   lead_group(self.lead) or self.topic)
        for draft in drafts:
            draft.group_depth = len(draft.section) - len(section)
        self.drafts.extend(drafts)
        self.open = drafts[-1] if drafts and self._continued() else None

    def _is_contents(self, bullets: list[Bullet]) -> bool:
        """A table of contents: every entry an anchor link or the name of a section."""
        if len(bullets) < 2:
            return False
        for bullet in bullets:
            text = bullet.own_text()
            if self.refs.find(text) or "\n" in text:
                return False
            named = (_ANCHOR.match(text) or self.lookup.kind_of_heading(text)
                     or set(heading_keys(text)) & self.document_keys)
            if not named or (bullet.children and not self._is_contents(bullet.children)):
                return False
        return True

    def _adjacent(self, bullet: Bullet) -> bool:
        """Whether no blank line separates the bullet from the one above it."""
        return bullet.start > 0 and bool(self.lines[bullet.start - 1].strip())

    def bullet_items(self, bullets: list[Bullet], section: tuple[str, ...], lead: str,
                     group: str) -> list[_Draft]:
        """The items of a list's bullets (a body may hold 30,000: each step counts)."""
        out: list[_Draft] = []
        label = ""
        previous: _Draft | None = None
        continued = self._continued()
        refs = self.refs
        final = len(bullets) - 1
        for position, original in enumerate(bullets):
            last = position == final
            # A bullet of one line has no lazy lines to split off (most of them).
            bullet, lazy = split_lazy(original, last) if len(original.own) > 1 else (original, "")
            own_refs = refs.find(bullet.prose())
            # Whether a blank line parts it from the bullet above: asked only where it counts.
            adjacent = bool(own_refs or continued) and self._adjacent(bullet)
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
                out.extend(self.bullet_items(children, (*section, name), lead, name))
            elif not own_refs and not last and self._adjacent(bullets[position + 1]) and carries(
                    bullets[position + 1], refs) and label_like(bullet, refs):
                label = group_name(bullet.first_line)
            else:
                previous = _Draft([bullet.text()], (*section, label) if label else section,
                                  lead=lead, group=label or group)
                out.append(previous)
            if lazy:
                self.prose.append(lazy)
                lead, group, label = lazy, lead_group(lazy), ""
        return out


def _without_retold_cells(drafts: list[_Draft]) -> list[_Draft]:
    """A highlight table often lists the entries the notes then tell in full: keep those."""
    titles = [d.title for d in drafts if d.title]
    if not titles or not any(d.from_table for d in drafts):
        return drafts
    told = Retold(titles)
    return [d for d in drafts if not d.from_table or not told.retells(" ".join(d.chunks))]


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
    walker = _Walker(lines, blocks, lookup, refs)
    walker.walk()
    drafts = iter(_without_retold_cells(walker.drafts))
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
