"""The notes pipeline: a release body in, classified items and item-level changes out.

``parse`` splits markdown into items (``blocks`` reads markdown-it's tokens, the ``runs``
package has it read a run of same-shaped lines once and builds the rest of the run, ``tables``
reads HTML tables, ``flat`` restores the structure of notes that lost their line breaks),
``headings`` normalises heading names, ``taxonomy`` holds what the headings and rules mean,
``classify`` decides each item's subsystem and kind from headings, PR ``labels``, rules and the
statistical ``model``, ``analyze`` puts parse and classify behind one call, and ``diff`` matches
two versions' items. Everything here is pure except ``labels``, which reads PR labels through
the GitHub client it is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.notes.analyze import Analyzer as Analyzer
    from watcher.notes.analyze import body_hash as body_hash
    from watcher.notes.analyze import is_patch_release as is_patch_release
    from watcher.notes.classify import Classifier as Classifier
    from watcher.notes.classify import Decision as Decision
    from watcher.notes.diff import ItemChange as ItemChange
    from watcher.notes.diff import diff_items as diff_items
    from watcher.notes.labels import LabelSource as LabelSource
    from watcher.notes.labels import label_map as label_map
    from watcher.notes.parse import parse_notes as parse_notes
    from watcher.notes.taxonomy import Taxonomy as Taxonomy
    from watcher.notes.taxonomy import taxonomy_for as taxonomy_for
    from watcher.notes.taxonomy import with_overrides as with_overrides
    from watcher.notes.text import code_lines as code_lines
    from watcher.notes.text import unescape_markdown as unescape_markdown

_EXPORTS = {
    "Analyzer": "analyze",
    "body_hash": "analyze",
    "Classifier": "classify",
    "code_lines": "text",
    "Decision": "classify",
    "diff_items": "diff",
    "is_patch_release": "analyze",
    "ItemChange": "diff",
    "label_map": "labels",
    "LabelSource": "labels",
    "parse_notes": "parse",
    "Taxonomy": "taxonomy",
    "taxonomy_for": "taxonomy",
    "unescape_markdown": "text",
    "with_overrides": "taxonomy",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
