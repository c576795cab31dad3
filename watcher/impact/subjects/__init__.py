"""What a release-note item changes, read from its own text, never the replacement it recommends.

``text`` splits an item into sentences, mentions and code blocks; ``names`` expands the aliases
notes write (``nn.``, ``F.``) and tells method forms and distinctive names; ``cues`` holds the
words that say something changed; ``clause`` reads one sentence for its subjects and their
conditions; ``examples`` reads migration examples (before and after); ``environment`` reads
requirements (Python, CUDA, packages); ``reader`` puts them together as ``read_subjects``;
``terms`` holds the vocabulary of ``config/impact.toml`` (kinds of input a change can be limited
to, names that only mark code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.impact.subjects.reader import read_subjects as read_subjects
    from watcher.impact.subjects.terms import InputKind as InputKind
    from watcher.impact.subjects.terms import vocabulary as vocabulary

_EXPORTS = {
    "InputKind": "terms",
    "read_subjects": "reader",
    "vocabulary": "terms",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
