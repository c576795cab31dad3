"""Release body → classified items: the parser and the classifier behind one call."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from watcher.models import ClassifiedItem

if TYPE_CHECKING:
    from watcher.notes.classify import Classifier
    from watcher.notes.labels import LabelSource
    from watcher.notes.taxonomy import Taxonomy

logger = logging.getLogger(__name__)


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
                 max_body_chars: int = 1_000_000, labels: LabelSource | None = None) -> None:
        self._taxonomy_source = taxonomy
        self._classifier: Classifier | None = None
        self.max_body_chars = max_body_chars
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

    def items(self, body: str | None, *, label: str = "release",
              repo: str | None = None) -> list[ClassifiedItem]:
        """``repo``: where the notes' PR numbers point, for ``classify.use_pr_labels``."""
        from watcher.notes.parse import parse_notes

        notes = parse_notes(body, lookup=self.taxonomy, max_chars=self.max_body_chars,
                            repo=repo)
        if notes.unknown_headings and label not in self._reported:
            self._reported.add(label)  # once per release, not once per parse of it
            logger.debug("%s: headings the taxonomy does not know: %s", label,
                         "; ".join(notes.unknown_headings))
        if notes.truncated:
            logger.warning("%s: body is %d characters, over poll.max_body_chars=%d; recorded "
                           "whole, items taken from the first %d only", label, len(body or ""),
                           self.max_body_chars, self.max_body_chars)
        if self.labels is None or repo is None:
            return self.classifier.classify_all(notes.items)
        found = self.labels.labels(repo, {pr for item in notes.items for pr in item.prs})
        return [self.classifier.explain(item, [name for pr in item.prs
                                               for name in found.get(pr, [])],
                                        self.labels.mapping).item for item in notes.items]
