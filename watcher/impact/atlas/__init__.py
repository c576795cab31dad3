"""The API atlas of a package's release: every public name of ``torch`` (or ``torch_xla``), read
from a wheel as a zip with ``ast`` (never imported), with parameters, bases and deprecation
markers; its compact file form; the diff of two releases; and where atlases come from.

``wheel`` lists a wheel's modules; ``extract`` reads one module's facts (``facts``; with
``statements``, ``classes``, ``signature`` and ``markers``: single statements, class bodies,
parameters and deprecation markers); ``link`` follows names across modules into an ``Atlas``
(``model``), making what no ``def`` spells out (``synthesized``); ``build`` puts these behind
one call; ``codec`` is the file form; ``compare`` diffs two atlases; ``index`` is the package
index's JSON API (``limits`` holds each exchange to its budget, ``budget``); ``sandbox`` builds
in a child process with limits (``scratch`` the folders it works in); ``source`` finds an atlas
bundled, in the store, or from the index; ``step`` fetches the atlases a poll lacked, apart
from it. All is pure but ``wheel``, ``index``, ``limits``, ``sandbox``, ``scratch``,
``source`` and ``step``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.impact.atlas.budget import Budget as Budget
    from watcher.impact.atlas.build import build_atlas as build_atlas
    from watcher.impact.atlas.build import wheel_version as wheel_version
    from watcher.impact.atlas.bundled_diffs import bundled_diff as bundled_diff
    from watcher.impact.atlas.bundled_diffs import changes_between as changes_between
    from watcher.impact.atlas.bundled_diffs import span_diff as span_diff
    from watcher.impact.atlas.codec import FORMAT as FORMAT
    from watcher.impact.atlas.codec import dumps as dumps
    from watcher.impact.atlas.codec import loads as loads
    from watcher.impact.atlas.compare import CHANGES as CHANGES
    from watcher.impact.atlas.compare import ApiChange as ApiChange
    from watcher.impact.atlas.compare import diff as diff
    from watcher.impact.atlas.errors import AtlasError as AtlasError
    from watcher.impact.atlas.errors import AtlasPending as AtlasPending
    from watcher.impact.atlas.errors import ChecksumMismatch as ChecksumMismatch
    from watcher.impact.atlas.errors import ForeignHost as ForeignHost
    from watcher.impact.atlas.errors import IndexUnreachable as IndexUnreachable
    from watcher.impact.atlas.errors import NotYetPublished as NotYetPublished
    from watcher.impact.atlas.errors import OverBudget as OverBudget
    from watcher.impact.atlas.errors import WheelUnreadable as WheelUnreadable
    from watcher.impact.atlas.errors import WrongVersion as WrongVersion
    from watcher.impact.atlas.index import PackageIndex as PackageIndex
    from watcher.impact.atlas.index import WheelFile as WheelFile
    from watcher.impact.atlas.knowledge import AtlasKnowledge as AtlasKnowledge
    from watcher.impact.atlas.model import VAR_KEYWORD as VAR_KEYWORD
    from watcher.impact.atlas.model import Api as Api
    from watcher.impact.atlas.model import Atlas as Atlas
    from watcher.impact.atlas.model import Param as Param
    from watcher.impact.atlas.sandbox import BoundedBuilder as BoundedBuilder
    from watcher.impact.atlas.sandbox import Built as Built
    from watcher.impact.atlas.scratch import removed_on_sigterm as removed_on_sigterm
    from watcher.impact.atlas.scratch import sweep as sweep
    from watcher.impact.atlas.source import AtlasSource as AtlasSource
    from watcher.impact.atlas.source import Shelf as Shelf
    from watcher.impact.atlas.source import bundled_dir as bundled_dir
    from watcher.impact.atlas.source import configured_source as configured_source
    from watcher.impact.atlas.source import normal_version as normal_version
    from watcher.impact.atlas.source import previous_minor as previous_minor
    from watcher.impact.atlas.step import PackageStep as PackageStep

_EXPORTS = {
    "AtlasKnowledge": "knowledge",
    "changes_between": "bundled_diffs",
    "VAR_KEYWORD": "model",
    "Api": "model",
    "ApiChange": "compare",
    "Atlas": "model",
    "AtlasError": "errors",
    "AtlasPending": "errors",
    "AtlasSource": "source",
    "BoundedBuilder": "sandbox",
    "Budget": "budget",
    "Built": "sandbox",
    "bundled_dir": "source",
    "configured_source": "source",
    "build_atlas": "build",
    "bundled_diff": "bundled_diffs",
    "span_diff": "bundled_diffs",
    "CHANGES": "compare",
    "ChecksumMismatch": "errors",
    "diff": "compare",
    "dumps": "codec",
    "FORMAT": "codec",
    "ForeignHost": "errors",
    "IndexUnreachable": "errors",
    "loads": "codec",
    "normal_version": "source",
    "NotYetPublished": "errors",
    "OverBudget": "errors",
    "PackageIndex": "index",
    "PackageStep": "step",
    "Param": "model",
    "previous_minor": "source",
    "removed_on_sigterm": "scratch",
    "Shelf": "source",
    "sweep": "scratch",
    "wheel_version": "build",
    "WheelFile": "index",
    "WheelUnreadable": "errors",
    "WrongVersion": "errors",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
