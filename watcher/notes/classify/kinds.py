"""An item's kind: the nearest section heading that names one, else a strong text rule
(security), else the paragraph introducing the item's list ("fix the following issues"), else
the item's own words, first its leading lines, then anywhere.
"""

from __future__ import annotations

import re

from watcher.models import Item
from watcher.notes.headings import CATCH_ALL
from watcher.notes.prefilter import any_of
from watcher.notes.taxonomy import KindRule, Taxonomy

_BULLET = re.compile(r"^\s*[-*+]\s+(.*)")
_TAGS = re.compile(r"^(?:\s*\[[^\]]{1,30}\](?!\())+\s*")  # commit-title tags: "[MPS][BE] Fix …"
SECTION_REASON = "section "
KindRules = tuple[list[KindRule], re.Pattern[str] | None]  # rules, and all of them at once


def leading_lines(text: str) -> list[str]:
    """The item's first line without "[MPS] "-style tags, then its first nested bullet: a
    "DTensor" line above "- Fixed …" bullets is a label, and the bullet's verb says the kind."""
    if "\n" not in text:  # one line (most items): no nested bullet
        return [_TAGS.sub("", text)]
    lines = text.split("\n")
    bullet = next((m.group(1) for line in lines[1:] if (m := _BULLET.match(line))), None)
    return [_TAGS.sub("", lines[0])] + ([bullet] if bullet else [])


def kind_of_sections(section: tuple[str, ...], kinds: list[str | None], group_depth: int
                  ) -> tuple[str, str] | None:
    """(kind, heading) the sections give. A Highlights section holds highlights whatever its
    sub-sections say ("Beta Features"); otherwise the nearest heading that names a kind, then
    the nearest group bullet that does ("- Bug fixes"), but a group never outranks a heading
    ("Improvements > … > - Miscellaneous" are improvements). A catch-all ("Miscellaneous")
    names no kind: its items keep the kind of the section above it ("Performance >
    Miscellaneous" are performance changes), and are "other" only when nothing else says."""
    cut = len(section) - group_depth
    named = list(zip(section, kinds, strict=True))
    headings, groups = named[:cut], named[cut:]
    for heading, kind in headings:
        if kind == "highlight":
            return "highlight", heading
    for names in (headings, groups):
        for heading, kind in reversed(names):
            if kind and kind != CATCH_ALL:
                return kind, heading
    return next(((kind, heading) for heading, kind in reversed(named) if kind), None)


def first_match(rules: KindRules, text: str) -> KindRule | None:
    """The first rule (in file order) that matches; one search when none does."""
    group, together = rules
    if together is not None and not together.search(text):
        return None
    return next((rule for rule in group if rule.pattern.search(text)), None)


class Kinds:
    """Decides kinds by the taxonomy's kind rules (read again if the taxonomy's list changes)."""

    def __init__(self, taxonomy: Taxonomy) -> None:
        self.taxonomy = taxonomy
        self._split_rules: tuple[tuple[int, int], tuple[
            KindRules, KindRules, KindRules]] | None = None


    def decide(self, item: Item, section_kind: tuple[str, str] | None, words: str, *,
               patch: bool = False) -> tuple[str, str]:
        """(kind, why): the sections' kind (``section_kind``), else the rules'. In a patch
        release every item is a fix: a catch-all section ("Other") says nothing more, and
        an item no section names is the patch's kind (``bug_fix``) unless a strong rule
        (a security fix) or a patch rule (a regression fixed) says otherwise."""
        if section_kind is not None and not (patch and section_kind[0] == CATCH_ALL):
            kind, heading = section_kind
            return kind, f"{SECTION_REASON}{heading!r}"
        strong, anchored, anywhere = self._kind_rules
        found = first_match(strong, words)
        if found is not None:
            return found.kind, f"rule {found.pattern.pattern!r}"
        if patch:
            said = next((rule for rule in self.taxonomy.patch_rules
                         if rule.pattern.search(words)), None)
            if said is not None:
                return said.kind, f"patch release, rule {said.pattern.pattern!r}"
            return self.taxonomy.patch_kind, "a patch release's item"
        if item.lead:
            for rule in self.taxonomy.lead_rules:
                if rule.pattern.search(item.lead):
                    return rule.kind, f"introduced by {item.lead[:60]!r}"
        for line in leading_lines(item.text):
            found = first_match(anchored, line)
            if found is not None:
                return found.kind, f"rule {found.pattern.pattern!r}"
        found = first_match(anywhere, words)
        if found is not None:
            return found.kind, f"rule {found.pattern.pattern!r}"
        return "other", "no section or rule matched"

    @property
    def _kind_rules(self) -> tuple[KindRules, KindRules, KindRules]:
        """The kind rules split by how they are tried (strong, anchored, anywhere), each in
        file order; split once, since every item not under a section asks."""
        rules = self.taxonomy.kind_rules
        if self._split_rules is None or self._split_rules[0] != (id(rules), len(rules)):
            strong, anchored = [r for r in rules if r.strong], [r for r in rules if r.anchored]
            anywhere = [r for r in rules if not r.anchored]
            split = ((strong, any_of([r.pattern for r in strong])),
                     (anchored, any_of([r.pattern for r in anchored])),
                     (anywhere, any_of([r.pattern for r in anywhere])))
            self._split_rules = (id(rules), len(rules)), split
            return split
        return self._split_rules[1]
