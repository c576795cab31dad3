"""Release body → classified items: the parser and the classifier behind one call."""

from __future__ import annotations

import gc
import hashlib
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from watcher.models import ClassifiedItem

if TYPE_CHECKING:
    from watcher.notes.classify import Classifier
    from watcher.notes.labels import LabelSource
    from watcher.notes.taxonomy import Taxonomy

logger = logging.getLogger(__name__)

# Real releases have up to about 1,000 items (PyTorch 2.5: 853; 2.7 and 2.8 joined: 1,007);
# past this many, the rest of a release is one item that says how many there are, so one body
# cannot cost a poll, a notifier or a Slack thread more than a few real releases do
# (``poll.max_items_per_release``). An item no heading places costs its rules and the model,
# about 20 us: 2,000 of them cost what a whole real note of 125,000 characters does.
MAX_ITEMS = 2000


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Parsing a body makes tens of thousands of small objects (blocks, bullets, drafts) that
    all live until it ends; CPython's cyclic collector would scan them again and again as they
    pile up (two fifths of the time of a 30,000-bullet body, an eighth of a real note's). It
    is turned back on right after, unless it was off already."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def omitted_item(count: int, url: str | None = None) -> ClassifiedItem:
    """The item that stands for ``count`` items past the cap: never a silent loss. Item text is
    markdown, so the release page is a link every notifier shows its own way (Slack's
    ``<url|label>``, the console's ``label (url)``)."""
    notes = f"[the release notes]({url})" if url else "the release notes"
    items = "item" if count == 1 else "items"
    return ClassifiedItem(text=f"{count:,} more {items} not shown: see {notes}",
                          subsystem="other", kind="other", decided_by="rule", confidence=1.0)


_VERSION = re.compile(r"^[A-Za-z_-]*v?(\d+)\.(\d+)\.(\d+)(?:$|[-+._]?(?:post\d*)?$)")


def is_patch_release(tag: str | None) -> bool:
    """Whether ``tag`` names a patch release: ``v2.7.1``, ``2.0.1`` (X.Y.Z, Z > 0; not a
    pre-release such as ``v2.7.1-rc1``, whose notes are the minor release's draft)."""
    found = _VERSION.match(tag.strip()) if tag else None
    return found is not None and int(found.group(3)) > 0


def body_hash(body: str | None) -> str:
    """sha256 of the body with all whitespace runs folded to one space.

    Line-ending and whitespace churn (CRLF ↔ LF, trailing spaces, re-wrapped blank lines) is
    not a change a reader can see, so it must not change the hash or count as an edit.
    """
    visible = " ".join((body or "").split())  # str.split() also splits on \r and \n
    return hashlib.sha256(visible.encode("utf-8")).hexdigest()


class Analyzer:
    """Parses and classifies. The taxonomy (hundreds of regexes) and the model are built on
    first use, so a poll where nothing changed never pays for them."""

    def __init__(self, taxonomy: Taxonomy | Callable[[], Taxonomy], *,
                 max_body_chars: int = 125_000, labels: LabelSource | None = None,
                 max_items: int = MAX_ITEMS) -> None:
        self._taxonomy_source = taxonomy
        self._classifier: Classifier | None = None
        self.max_body_chars = max_body_chars
        self.max_items = max_items
        self.labels = labels
        self._reported: set[str] = set()

    @property
    def classifier(self) -> Classifier:
        if self._classifier is None:
            from watcher.notes.classify import Classifier

            source = self._taxonomy_source
            self._classifier = Classifier(source() if callable(source) else source)
        return self._classifier

    @property
    def taxonomy(self) -> Taxonomy:
        return self.classifier.taxonomy

    def items(self, body: str | None, *, label: str = "release", repo: str | None = None,
              url: str | None = None, tag: str | None = None) -> list[ClassifiedItem]:
        """``repo``: whose release it is (the model starts from its prior) and where the
        notes' PR numbers point, for ``classify.use_pr_labels``; ``url``: the release's page,
        which the item summing up items past the cap points to; ``tag``: the release's tag,
        which says whether it is a patch release (``is_patch_release``)."""
        items, omitted = self._classified(body, label, repo, is_patch_release(tag))
        if omitted:
            logger.warning("%s: %d items, over poll.max_items_per_release=%d; the first %d "
                           "are kept and the other %d summed up in one item", label,
                           self.max_items + omitted, self.max_items, self.max_items, omitted)
            items.append(omitted_item(omitted, url))
        return items

    def _classified(self, body: str | None, label: str, repo: str | None, patch: bool = False
                    ) -> tuple[list[ClassifiedItem], int]:
        """The items up to the cap, classified, and how many more there are."""
        from watcher.notes.parse import parse_notes

        with _collector_paused():
            notes = parse_notes(body, lookup=self.taxonomy, max_chars=self.max_body_chars,
                                repo=repo, max_items=self.max_items)
        if notes.unknown_headings and label not in self._reported:
            self._reported.add(label)  # once per release, not once per parse of it
            logger.debug("%s: headings the taxonomy does not know: %s", label,
                         "; ".join(notes.unknown_headings))
        if notes.truncated:
            logger.warning("%s: body is %d characters, over poll.max_body_chars=%d; recorded "
                           "whole, items taken from the first %d only", label, len(body or ""),
                           self.max_body_chars, self.max_body_chars)
        if self.labels is None or repo is None:
            with _collector_paused():
                return (self.classifier.classify_all(notes.items, repo=repo, patch=patch),
                        notes.omitted)
        # The look-up may wait on GitHub: the collector runs meanwhile.
        found = self.labels.labels(repo, {pr for item in notes.items for pr in item.prs})
        with _collector_paused():
            return [self.classifier.explain(item, [name for pr in item.prs
                                                   for name in found.get(pr, [])],
                                            self.labels.mapping, repo=repo, patch=patch).item
                    for item in notes.items], notes.omitted
