"""The walk over a body's blocks that turns them into drafts: headings kept as a stack of
sections, areas and topics; entries (a heading or bold title and what follows it); prose that
cites PRs; tables; and lists (``watcher.notes.parse.lists``). What each shape is read as:
the package docstring.
"""

from __future__ import annotations

from watcher.notes.blocks import Block, Code, Heading, ListBlock, Other, Paragraph
from watcher.notes.headings import CATCH_ALL, HeadingLookup, heading_keys
from watcher.notes.parse.bullets import carries, cites_beyond, group_name, lead_group
from watcher.notes.parse.drafts import CONTINUED_KINDS, Draft
from watcher.notes.parse.lists import ListReader
from watcher.notes.tables import Table
from watcher.notes.text import References, bold_title, trim_blank


class Walker:
    """One pass over the document's blocks, keeping the heading stack."""

    def __init__(self, lines: list[str], blocks: list[Block], lookup: HeadingLookup,
                 refs: References) -> None:
        self.lines = lines
        self.refs = refs
        self.blocks = blocks
        self.lookup = lookup
        self.stack: list[tuple[int, str, bool]] = []  # level, title, names only a topic
        self.drafts: list[Draft] = []
        self.prose: list[str] = []
        self.lead = ""
        self.open: Draft | None = None  # the bullet later prose continues (BC/deprecation)
        self.unknown: dict[str, None] = {}
        self.document_keys = {key for block in blocks if isinstance(block, Heading)
                              for key in heading_keys(block.title)}
        # Which blocks are paragraphs of only a bold title; whether one titles an entry is
        # asked up to three times (walk, heading, entry).
        self.bold = [isinstance(block, Paragraph) and bold_title(block.text) is not None
                     for block in blocks]
        self.titled: dict[int, bool] = {}
        self.lists = ListReader(lines, refs, lookup, self.document_keys, self.prose)

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
                index = self.paragraph(index)
                continue
            elif isinstance(block, Table):
                self.table(block)
            elif isinstance(block, Other) and self.open is None and self.refs.find(block.text):
                self.drafts.append(Draft([block.text], self.section, group=self.topic))
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
        # "[Prototype] FlexAttention" is an area of its own: its item says so (``Draft.item``).
        self.drafts.append(Draft([source, body], self.section, title=title,
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
        self.drafts.append(Draft(chunks, self.section, group=self.topic))
        return end

    def paragraph(self, index: int) -> int:
        """Prose: a lead-in to the list it introduces, the notes of the BC-breaking or
        deprecation entry still open, or text outside any item. Under an open entry, a list
        whose bullets cite nothing of their own is part of the entry's notes with the paragraph
        above it (the functions it deprecates), and a paragraph that introduces nothing (no
        closing colon) before the next entries' list is the entry's closing note ("User code
        calling these APIs does not need to change"), not their lead-in."""
        paragraph = self.blocks[index]
        assert isinstance(paragraph, Paragraph)
        following = self._next(index)
        if self.open is not None and isinstance(following, ListBlock) and not any(
                carries(bullet, self.refs) for bullet in following.bullets):
            self.open.chunks.append(self._source(paragraph.start, following))
            return index + 2
        if isinstance(following, ListBlock) and (
                self.open is None or paragraph.text.rstrip().endswith(":")):
            self.lead = paragraph.text
            self.prose.append(paragraph.text)
            self.open = None
        elif self.open is not None:
            self.open.chunks.append(paragraph.text)
        else:
            self.prose.append(paragraph.text)
        return index + 1

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
                self.drafts.append(Draft([cell], section, from_table=True))
        if self.refs.in_prose_line(table.outside):  # text in no cell that still cites PRs
            self.drafts.append(Draft([table.outside], self.section, group=self.topic,
                                      from_table=True))
        self.open = None

    def list_block(self, block: ListBlock) -> None:
        if self.lists.is_contents(block.bullets):
            self.prose.append(self._source(block.start, block))
            return
        section = self.section
        continued = self._continued()
        drafts = self.lists.bullet_items(block.bullets, section, self.lead,
                                         lead_group(self.lead) or self.topic,
                                         continued=continued)
        for draft in drafts:
            draft.group_depth = len(draft.section) - len(section)
        self.drafts.extend(drafts)
        self.open = drafts[-1] if drafts and continued else None
