"""Release body → classified items: the parser and the classifier behind one call."""

from __future__ import annotations

import hashlib
import logging

from watcher.classify import Classifier
from watcher.models import ClassifiedItem
from watcher.notes import normalise_body, parse_notes
from watcher.taxonomy import Taxonomy

logger = logging.getLogger(__name__)


def body_hash(body: str | None) -> str:
    """sha256 of the body with all whitespace runs folded to one space.

    Line-ending and whitespace churn (CRLF ↔ LF, trailing spaces, re-wrapped blank lines) is
    not a change a reader can see, so it must not change the hash or count as an edit.
    """
    visible = " ".join(normalise_body(body).split())
    return hashlib.sha256(visible.encode("utf-8")).hexdigest()


class Analyzer:
    def __init__(self, taxonomy: Taxonomy, *, max_body_chars: int = 1_000_000) -> None:
        self.taxonomy = taxonomy
        self.classifier = Classifier(taxonomy)
        self.max_body_chars = max_body_chars

    def items(self, body: str | None, *, label: str = "release") -> list[ClassifiedItem]:
        notes = parse_notes(body, is_known_heading=self.taxonomy.is_known_heading,
                            max_chars=self.max_body_chars)
        if notes.truncated:
            logger.warning("%s: body is %d characters, over poll.max_body_chars=%d; recorded "
                           "whole, items taken from the first %d only", label, len(body or ""),
                           self.max_body_chars, self.max_body_chars)
        return self.classifier.classify_all(notes.items)
