"""Item-level diff of two versions of a release's notes.

Items are matched, in this order: identical text (wherever it moved), the same PR numbers, then
near-identical text for items without PRs (a typo fixed). What is left is added or removed.
Whitespace never counts: texts are compared with whitespace runs folded.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from watcher.models import ChangeType, ClassifiedItem

SIMILAR = 0.75  # below this ratio two PR-less items are different items, not an edit


@dataclass(frozen=True)
class ItemChange:
    change: ChangeType
    item: ClassifiedItem  # the new item (the old one for "removed")
    old_text: str | None = None


def folded(text: str) -> str:
    return " ".join(text.split())


def diff_items(old: list[ClassifiedItem], new: list[ClassifiedItem]) -> list[ItemChange]:
    unmatched_old = list(range(len(old)))
    by_text: dict[str, list[int]] = {}
    for index in unmatched_old:
        by_text.setdefault(folded(old[index].text), []).append(index)

    changes: dict[int, ItemChange] = {}  # new index → change
    unmatched_new: list[int] = []
    for index, item in enumerate(new):
        candidates = by_text.get(folded(item.text))
        if candidates:
            unmatched_old.remove(candidates.pop(0))
        else:
            unmatched_new.append(index)

    def pair(new_index: int, old_index: int) -> None:
        unmatched_old.remove(old_index)
        unmatched_new.remove(new_index)
        changes[new_index] = ItemChange("changed", new[new_index], old[old_index].text)

    for new_index in list(unmatched_new):
        prs = set(new[new_index].prs)
        if not prs:
            continue
        same = [o for o in unmatched_old if set(old[o].prs) == prs]
        overlap = same or [o for o in unmatched_old if prs & set(old[o].prs)]
        if overlap:
            pair(new_index, overlap[0])

    old_folded = {index: folded(old[index].text) for index in unmatched_old}
    for new_index in list(unmatched_new):
        best, best_ratio = None, SIMILAR
        # One matcher per new item: SequenceMatcher indexes its second sequence once.
        matcher = SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(folded(new[new_index].text))
        for old_index in unmatched_old:
            if old[old_index].prs and new[new_index].prs:
                continue  # both cite PRs and none matched: different items
            matcher.set_seq1(old_folded[old_index])
            if matcher.real_quick_ratio() < best_ratio or matcher.quick_ratio() < best_ratio:
                continue
            ratio = matcher.ratio()
            if ratio >= best_ratio:
                best, best_ratio = old_index, ratio
        if best is not None:
            pair(new_index, best)

    for index in unmatched_new:
        changes[index] = ItemChange("added", new[index])
    ordered = [changes[index] for index in sorted(changes)]
    return ordered + [ItemChange("removed", old[index]) for index in unmatched_old]
