"""The last step of the analysis, behind one call: what a release's items do to a codebase.

``item`` holds ``ImpactAnalyzer``: each attention item's subjects read from its own words
(``subjects``), their uses found and judged in the scanned codebases (``reach``), cached per
item; ``release`` joins that with the release's own package changes (the atlas diff) into a
``ReleaseAnalysis``, adding an item for the changes no note mentions; ``suppress`` keeps the
uses a team accepted (ignore comments, a baseline file, a "Not us" in Slack) out of the tiers
and counts them. Pure but for the scan's reads of the codebase and the atlas source's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.impact.analysis.item import CodeRoot as CodeRoot
    from watcher.impact.analysis.item import ImpactAnalyzer as ImpactAnalyzer
    from watcher.impact.analysis.item import ItemImpact as ItemImpact
    from watcher.impact.analysis.release import ReleaseAnalysis as ReleaseAnalysis
    from watcher.impact.analysis.release import own_knowledge as own_knowledge
    from watcher.impact.analysis.release import package_changes as package_changes
    from watcher.impact.analysis.release import package_expected as package_expected
    from watcher.impact.analysis.suppress import Suppressed as Suppressed
    from watcher.impact.analysis.suppress import Suppression as Suppression
    from watcher.impact.analysis.suppress import Suppressor as Suppressor
    from watcher.impact.analysis.suppress import read_baseline as read_baseline
    from watcher.impact.analysis.suppress import write_baseline as write_baseline

_EXPORTS = {
    "CodeRoot": "item",
    "ImpactAnalyzer": "item",
    "ItemImpact": "item",
    "own_knowledge": "release",
    "package_changes": "release",
    "package_expected": "release",
    "read_baseline": "suppress",
    "ReleaseAnalysis": "release",
    "Suppressed": "suppress",
    "Suppression": "suppress",
    "Suppressor": "suppress",
    "write_baseline": "suppress",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
