"""The impact analysis: which changes of a release touch the APIs a codebase uses, line by line.

One sub-package per step, each reached through its ``__init__``:

1. ``subjects/`` reads from each item's own text what it changes (APIs, options, config
   variables, namespaces, environment requirements), never the replacement it recommends.
2. ``code/`` reads what a codebase's Python uses with ``ast``, resolved through its imports,
   through a per-file cache; ``environment/`` reads the environment it declares
   (requires-python, pins, base images). ``atlas/`` reads the package's side: a release's public
   API from its wheel, the diff of two releases, and where atlases come from.
3. ``reach/`` finds the uses each change touches and judges them on a ladder of evidence
   (``breaks`` only where the package proves it).
4. ``analysis/`` puts the steps behind one call per item and per release, and keeps the uses a
   team accepted out of the tiers.

Two modules stay at the top because every step shares them: ``model`` (the values: subjects,
uses, declarations) and ``knowledge`` (what an atlas can answer about torch's API, and
``NoKnowledge`` for when none is at hand). Everything is pure apart from the reads of the
codebase, the wheel and the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.impact.analysis import CodeRoot as CodeRoot
    from watcher.impact.analysis import ImpactAnalyzer as ImpactAnalyzer
    from watcher.impact.analysis import ItemImpact as ItemImpact
    from watcher.impact.analysis import ReleaseAnalysis as ReleaseAnalysis
    from watcher.impact.analysis import Suppressed as Suppressed
    from watcher.impact.analysis import Suppression as Suppression
    from watcher.impact.analysis import Suppressor as Suppressor
    from watcher.impact.analysis import own_knowledge as own_knowledge
    from watcher.impact.analysis import package_changes as package_changes
    from watcher.impact.analysis import package_expected as package_expected
    from watcher.impact.analysis import read_baseline as read_baseline
    from watcher.impact.analysis import write_baseline as write_baseline
    from watcher.impact.atlas import ApiChange as ApiChange
    from watcher.impact.atlas import Atlas as Atlas
    from watcher.impact.atlas import AtlasSource as AtlasSource
    from watcher.impact.code import CodeIndex as CodeIndex
    from watcher.impact.knowledge import ApiKnowledge as ApiKnowledge
    from watcher.impact.knowledge import NoKnowledge as NoKnowledge
    from watcher.impact.knowledge import Parameter as Parameter
    from watcher.impact.knowledge import Signature as Signature
    from watcher.impact.model import Subjects as Subjects
    from watcher.impact.reach import PACKAGES as PACKAGES
    from watcher.impact.reach import PackageChanges as PackageChanges
    from watcher.impact.subjects import read_subjects as read_subjects

_EXPORTS = {
    "ApiChange": "atlas",
    "Atlas": "atlas",
    "AtlasSource": "atlas",
    "ApiKnowledge": "knowledge",
    "CodeIndex": "code",
    "CodeRoot": "analysis",
    "ImpactAnalyzer": "analysis",
    "ItemImpact": "analysis",
    "own_knowledge": "analysis",
    "package_changes": "analysis",
    "package_expected": "analysis",
    "PACKAGES": "reach",
    "PackageChanges": "reach",
    "ReleaseAnalysis": "analysis",
    "NoKnowledge": "knowledge",
    "Parameter": "knowledge",
    "read_subjects": "subjects",
    "Signature": "knowledge",
    "Subjects": "model",
    "Suppressed": "analysis",
    "Suppression": "analysis",
    "Suppressor": "analysis",
    "read_baseline": "analysis",
    "write_baseline": "analysis",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
