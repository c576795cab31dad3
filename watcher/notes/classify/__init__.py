"""Gives every item a subsystem and a kind, and can say why.

Order of evidence, strongest first (each verdict says what decided, ``decided_by``, and how
sure it is, ``confidence``, the contract's "Subsystems and kinds"):
  subsystem: the first area heading above the item (refined by deeper headings of the same area,
             then by the text rules of that area): ``heading``, 1.0; else the PR's maintainer
             label: ``label``, 1.0; else a context-only heading with nothing above it ("Ongoing
             Dynamic Shape implementation"), unless a decisive rule names another subsystem;
             else the item's words: a decisive rule (an API namespace or a name beyond doubt):
             ``rule``, as sure as decisive rules were on releases held out of training, unless
             the APIs the item names are another single subsystem's (``named``); else the
             statistical model's best guess, which weighs the weaker rules with the words and
             starts from the prior of the release's repository (PyTorch/XLA: XLA's areas first):
             ``model``, its probability calibrated on held-out releases, with its candidates;
             in a patch release a catch-all heading ("Other") decides nothing;
  kind:      the nearest section heading, else a strong text rule (security), else the paragraph
             introducing the item's list ("fix the following issues"), else the item's own words;
             in a patch release, ``bug_fix`` unless a section, a strong rule or a regression
             fixed says otherwise.

What the figures are, and how they were measured: scripts/eval_classifier.py and the README.

``classifier`` weighs the evidence (``evidence`` holds what it weighs and says, ``named``
what the APIs an item names say), ``kinds`` decides an item's kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.notes.classify.classifier import Classifier as Classifier
    from watcher.notes.classify.evidence import Decision as Decision

_EXPORTS = {
    "Classifier": "classifier",
    "Decision": "evidence",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
