"""The impact analysis: which changes of a release touch the APIs a codebase uses, line by line.

``subjects`` reads from each item's own text what it changes (APIs, options, config variables,
namespaces, environment requirements), never the replacement it recommends; ``pyindex`` reads
what a Python file uses with ``ast``, resolved through its imports; ``envindex`` reads the
environment a codebase declares (requires-python, pins, base images); ``scan`` walks a codebase
with a per-file cache; ``match`` finds the uses each change touches; ``analyze`` puts them
behind one call. Everything is pure apart from ``scan``'s reads of the codebase.

``atlas`` (a package of its own) is the API of a package's release read from its wheel, the
diff of two releases, and where atlases come from (bundled, the store, the package index).
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
    from watcher.impact.model import Subjects as Subjects
    from watcher.impact.subjects import read_subjects as read_subjects

_EXPORTS = {
    "ApiChange": "atlas",
    "Atlas": "atlas",
    "AtlasSource": "atlas",
    "CodeRoot": "analyze",
    "ImpactAnalyzer": "analyze",
    "ItemImpact": "analyze",
    "read_subjects": "subjects",
    "Subjects": "model",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
