"""The third step of the analysis: where a change reaches a codebase, and how sure that is.

``match`` finds the uses each changed API, option or requirement has in the scanned code (its
subclasses and aliases included, where the atlas knows them), leaving out the uses that run
only below a release (``callers``: in a function every call of which is version-guarded);
``tiers`` judges each use
``breaks``, ``check`` or a mention and says why in one line; ``evidence`` is the ladder that
judgement stands on: a use is ``breaks`` only where the package proves the change (the atlas
diff of the release) or the notes state a removal the new atlas confirms; ``package`` joins
the release's own API changes with what its notes say, for the ladder and for the changes no
item mentions. All pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.impact.reach.evidence import Evidence as Evidence
    from watcher.impact.reach.evidence import Ladder as Ladder
    from watcher.impact.reach.evidence import Weigh as Weigh
    from watcher.impact.reach.match import find_affects as find_affects
    from watcher.impact.reach.package import PACKAGES as PACKAGES
    from watcher.impact.reach.package import UNMENTIONED as UNMENTIONED
    from watcher.impact.reach.package import PackageChanges as PackageChanges
    from watcher.impact.reach.package import confirmed_classes as confirmed_classes
    from watcher.impact.reach.package import covers as covers
    from watcher.impact.reach.package import dead_spellings as dead_spellings
    from watcher.impact.reach.package import speaks_of as speaks_of
    from watcher.impact.reach.package import subject_of as subject_of
    from watcher.impact.reach.package import unmentioned_groups as unmentioned_groups
    from watcher.impact.reach.package import unmentioned_item as unmentioned_item
    from watcher.impact.reach.tiers import rank as rank

_EXPORTS = {
    "confirmed_classes": "package",
    "covers": "package",
    "dead_spellings": "package",
    "Evidence": "evidence",
    "find_affects": "match",
    "Ladder": "evidence",
    "PACKAGES": "package",
    "PackageChanges": "package",
    "rank": "tiers",
    "speaks_of": "package",
    "subject_of": "package",
    "UNMENTIONED": "package",
    "unmentioned_groups": "package",
    "unmentioned_item": "package",
    "Weigh": "evidence",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
