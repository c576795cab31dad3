"""Gives every item a subsystem and a kind, and can say why.

Order of evidence, strongest first:
  subsystem: the first area heading above the item (refined by deeper headings of the same area,
             then by the text rules of that area), else the text rules over the item's words;
  kind:      the nearest section heading, else a strong text rule (security), else the paragraph
             introducing the item's list ("fix the following issues"), else the item's own words.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from watcher.models import ClassifiedItem, Item
from watcher.taxonomy import Taxonomy, top_level

_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1[`~]*[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Decision:
    item: ClassifiedItem
    subsystem_reason: str
    kind_reason: str


class Classifier:
    def __init__(self, taxonomy: Taxonomy) -> None:
        self.taxonomy = taxonomy
        self._order = {name: index for index, name in enumerate(taxonomy.names)}

    def classify(self, item: Item) -> ClassifiedItem:
        return self.explain(item).item

    def classify_all(self, items: list[Item]) -> list[ClassifiedItem]:
        return [self.classify(item) for item in items]

    def explain(self, item: Item) -> Decision:
        words = self._words(item)
        subsystem, subsystem_reason = self._subsystem(item, words)
        kind, kind_reason = self._kind(item, words)
        classified = ClassifiedItem(**item.model_dump(), subsystem=subsystem, kind=kind)
        return Decision(classified, subsystem_reason, kind_reason)

    def _words(self, item: Item) -> str:
        """The item's prose without code blocks, plus headings above it that are not areas or
        sections (a BC-breaking entry's title, for the bullets grouped under it)."""
        extra = [h for h in item.section if not self.taxonomy.is_known_heading(h)]
        return "\n".join([*extra, _FENCED.sub(" ", item.text)])

    def _subsystem(self, item: Item, words: str) -> tuple[str, str]:
        area: str | None = None
        reason = ""
        for heading in item.section:
            ids = self.taxonomy.area_ids(heading)
            if area is None:
                ids = [i for i in ids if i not in self.taxonomy.context_only]
                if ids:
                    area = self._most_specific(ids, top_level(ids[0]))
                    reason = f"heading {heading!r}"
            elif ids:
                refined = self._most_specific(ids, top_level(area))
                if refined and "/" in refined and refined != area:
                    area, reason = refined, f"{reason} > {heading!r}"
        if area is not None:
            if "/" not in area:
                finer, rule = self._best_finer(words, area)
                if finer:
                    return finer, f"{reason}, refined by rule {rule!r}"
            return area, reason
        return self._by_rules(words)

    @staticmethod
    def _most_specific(ids: list[str], top: str) -> str | None:
        same = [i for i in ids if top_level(i) == top]
        finer = [i for i in same if "/" in i]
        return (finer or same or [None])[0]

    def _scores(self, words: str) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
        tops: dict[str, float] = defaultdict(float)
        finer: dict[str, float] = defaultdict(float)
        first_rule: dict[str, str] = {}
        lowered = words.lower()
        for rule in self.taxonomy.text_rules:
            if rule.matches(words, lowered):
                tops[top_level(rule.subsystem)] += rule.weight
                finer[rule.subsystem] += rule.weight
                first_rule.setdefault(rule.subsystem, rule.pattern.pattern)
                first_rule.setdefault(top_level(rule.subsystem), rule.pattern.pattern)
        return tops, finer, first_rule

    def _best_finer(self, words: str, top: str) -> tuple[str | None, str]:
        _, finer, first_rule = self._scores(words)
        candidates = [(score, -self._order.get(s, 0), s) for s, score in finer.items()
                      if "/" in s and top_level(s) == top and s not in self.taxonomy.context_only]
        if not candidates:
            return None, ""
        best = max(candidates)[2]
        return best, first_rule[best]

    def _by_rules(self, words: str) -> tuple[str, str]:
        tops, finer, first_rule = self._scores(words)
        if not tops:
            return "other", "no heading or rule matched"
        top = max(tops, key=lambda s: (tops[s], -self._order.get(s, 0)))
        candidates = [(score, -self._order.get(s, 0), s) for s, score in finer.items()
                      if "/" in s and top_level(s) == top and s not in self.taxonomy.context_only]
        chosen = max(candidates)[2] if candidates else top
        return chosen, f"rule {first_rule[chosen]!r} (score {tops[top]:g})"

    def _kind(self, item: Item, words: str) -> tuple[str, str]:
        for heading in reversed(item.section):
            kind = self.taxonomy.kind_of_heading(heading)
            if kind:
                return kind, f"section {heading!r}"
        rules = self.taxonomy.kind_rules
        for rule in rules:
            if rule.strong and rule.pattern.search(words):
                return rule.kind, f"rule {rule.pattern.pattern!r}"
        if item.lead:
            for rule in self.taxonomy.lead_rules:
                if rule.pattern.search(item.lead):
                    return rule.kind, f"introduced by {item.lead[:60]!r}"
        first_line = item.text.split("\n", 1)[0]
        for rule in rules:
            if rule.anchored and rule.pattern.search(first_line):
                return rule.kind, f"rule {rule.pattern.pattern!r}"
        for rule in rules:
            if not rule.anchored and rule.pattern.search(words):
                return rule.kind, f"rule {rule.pattern.pattern!r}"
        return "other", "no section or rule matched"
