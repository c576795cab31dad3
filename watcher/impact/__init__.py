"""The impact analysis: which changes of a release touch the APIs a codebase uses, line by line.

``subjects/`` reads from each item's own text what it changes (APIs, options, config variables,
namespaces, environment requirements), never the replacement it recommends; ``code/`` reads
what a codebase's Python uses with ``ast``, resolved through its imports, through a per-file
cache; ``environment/`` reads the environment a codebase declares (requires-python, pins, base
images); ``model`` holds the values they share; ``match`` finds the uses each change touches;
``analyze`` puts them behind one call. Everything is pure apart from the scan's reads of the
codebase.

``package`` joins a release's own API changes (the atlas diff) with what its notes say, and
``release`` puts the two behind one analysis per release; ``suppress`` keeps the uses a team
accepted (ignore comments, a baseline, "Not us") out of the tiers; ``syntax`` holds the readings of
syntax trees they share. ``atlas`` (a package of its own) is the API of a package's release
read from its wheel, the diff of two releases, and where atlases come from (bundled, the
store, the package index).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.impact.analyze import CodeRoot as CodeRoot
    from watcher.impact.analyze import ImpactAnalyzer as ImpactAnalyzer
    from watcher.impact.analyze import ItemImpact as ItemImpact
    from watcher.impact.atlas import ApiChange as ApiChange
    from watcher.impact.atlas import Atlas as Atlas
    from watcher.impact.atlas import AtlasSource as AtlasSource
    from watcher.impact.code import CodeIndex as CodeIndex
    from watcher.impact.knowledge import ApiKnowledge as ApiKnowledge
    from watcher.impact.knowledge import NoKnowledge as NoKnowledge
    from watcher.impact.knowledge import Parameter as Parameter
    from watcher.impact.knowledge import Signature as Signature
    from watcher.impact.model import Subjects as Subjects
    from watcher.impact.package import PACKAGES as PACKAGES
    from watcher.impact.package import PackageChanges as PackageChanges
    from watcher.impact.release import ReleaseAnalysis as ReleaseAnalysis
    from watcher.impact.release import package_changes as package_changes
    from watcher.impact.release import package_expected as package_expected
    from watcher.impact.subjects import read_subjects as read_subjects
    from watcher.impact.suppress import Suppressed as Suppressed
    from watcher.impact.suppress import Suppression as Suppression
    from watcher.impact.suppress import Suppressor as Suppressor
    from watcher.impact.suppress import read_baseline as read_baseline
    from watcher.impact.suppress import write_baseline as write_baseline

_EXPORTS = {
    "ApiChange": "atlas",
    "Atlas": "atlas",
    "AtlasSource": "atlas",
    "ApiKnowledge": "knowledge",
    "CodeIndex": "code",
    "CodeRoot": "analyze",
    "ImpactAnalyzer": "analyze",
    "ItemImpact": "analyze",
    "package_changes": "release",
    "package_expected": "release",
    "PACKAGES": "package",
    "PackageChanges": "package",
    "ReleaseAnalysis": "release",
    "NoKnowledge": "knowledge",
    "Parameter": "knowledge",
    "read_subjects": "subjects",
    "Signature": "knowledge",
    "Subjects": "model",
    "Suppressed": "suppress",
    "Suppression": "suppress",
    "Suppressor": "suppress",
    "read_baseline": "suppress",
    "write_baseline": "suppress",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
