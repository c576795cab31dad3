"""The impact of one release's items: each item's subjects read from its own text and joined
with the package's own API changes (``package``), and the changes no item speaks of, as items of
their own where they touch the code.

One ``ReleaseAnalysis`` per release: its items are read in order (``of``), each claiming the
package's changes it speaks of; ``unmentioned`` then gives what is left. Every use found through
the package's diff says so (``source: package``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from packaging.version import Version

from watcher.impact.analysis.item import ImpactAnalyzer, ItemImpact
from watcher.impact.analysis.suppress import Suppressor
from watcher.impact.atlas import (
    ApiChange,
    AtlasError,
    AtlasKnowledge,
    AtlasSource,
    changes_between,
    normal_version,
)
from watcher.impact.knowledge import ApiKnowledge, NoKnowledge
from watcher.impact.model import Subject, Subjects
from watcher.impact.reach import (
    PACKAGES,
    Ladder,
    PackageChanges,
    confirmed_classes,
    covers,
    dead_spellings,
    rank,
    speaks_of,
    subject_of,
    unmentioned_groups,
    unmentioned_item,
)
from watcher.impact.subjects import read_subjects
from watcher.models import ATTENTION_KINDS, Affect, ClassifiedItem

__all__ = ["ReleaseAnalysis", "own_knowledge", "package_changes", "package_expected"]

logger = logging.getLogger(__name__)


def package_changes(source: AtlasSource, repo: str, tag: str, prerelease: bool = False,
                    ) -> PackageChanges | None:
    """The API changes of ``repo``'s release ``tag`` against the release before, from their
    atlases (bundled, stored, else fetched: ``AtlasSource``); None, with one line saying why,
    when either cannot be had now (offline, not yet published), or the repo ships no package
    the project reads. A pre-release's wheels are not on the package index: none either."""
    if not package_expected(repo, tag, prerelease, say=True):
        return None
    package, version = PACKAGES[repo.lower()], normal_version(tag)
    after = source.find(package, version)
    before = source.before(package, version) if after is not None else None
    if after is None or before is None:
        return None
    changes = changes_between(before, after)
    unread = {module for atlas in (before, after) for module in atlas.skipped}
    if unread:  # what a module the build could not read defines is unknown, not removed
        changes = [change for change in changes if not any(
            name == module or name.startswith(module + ".")
            for name in (change.api, *change.names) for module in unread)]
    return PackageChanges(tag, tuple(changes), before, after)


def own_knowledge(source: AtlasSource, repo: str, tag: str) -> ApiKnowledge | None:
    """Names and signatures from the release's own atlas, bundled or stored (nothing fetched),
    for a release whose package diff cannot be made (no atlas of the release before it, as for
    2.5.0): the positions of its APIs' parameters are then read from it, not left unknown."""
    if repo.lower() not in PACKAGES:
        return None
    atlas = source.known(PACKAGES[repo.lower()], normal_version(tag))
    return AtlasKnowledge(atlas, subclasses=False) if atlas is not None else None


def package_expected(repo: str, tag: str, prerelease: bool = False, say: bool = False) -> bool:
    """Whether ``repo``'s release ``tag`` has a package on the index to diff, now or once its
    wheels are published (a final release of a package the project reads); ``say``: log why
    not."""
    if repo.lower() not in PACKAGES:
        return False
    try:
        version = normal_version(tag)
    except AtlasError:
        if say:
            logger.info("package diff skipped: %s %s is not a version", repo, tag)
        return False
    if prerelease or Version(version).is_prerelease:
        if say:
            logger.info("package diff skipped: %s %s is a pre-release (its wheels are not on "
                        "the package index)", repo, tag)
        return False
    return True


def _changed_in_words(subject: Subject) -> bool:
    """A namespace the words say changed in how it behaves (not removed, not deprecated): the
    package's own changes under it say what, where it shows any."""
    return subject.effect == "changed" and subject.condition == "uses"


def _merged(notes: list[Affect], package: list[Affect]) -> list[Affect]:
    """One use per line of code, the surest reading kept, the package's at equal tiers (it
    names the API exactly)."""
    found: dict[tuple[str, str, int], Affect] = {}
    for use in [*package, *notes]:
        key = (use.root, use.path, use.line)
        old = found.get(key)
        if old is None or rank(use.tier) < rank(old.tier):
            found[key] = use
    return sorted(found.values(), key=lambda use: (rank(use.tier), use.path, use.line, use.api))


@dataclass
class ReleaseAnalysis:
    """``release``: the tag the items are of; ``package``: its API changes, when both its
    atlas and the one before it could be had; ``owner``: the subsystem owning an API;
    ``pending``: the release has a package whose atlas could not be had yet (its wheels not
    published, the index out of reach), asked for again on a later poll."""

    analyzer: ImpactAnalyzer
    release: str | None
    package: PackageChanges | None = None
    owner: Callable[[str], str | None] = lambda api: None
    pending: bool = False
    # Without a package diff, the release's own atlas where one is at hand (``own_knowledge``)
    knowledge: ApiKnowledge | None = None
    untouched: int = 0  # the package's changes no item speaks of that touch no code
    # Which uses the team accepted (ignore comments always; a baseline, the store's "Not us").
    suppressor: Suppressor = field(default_factory=Suppressor)
    _claimed: set[int] = field(default_factory=set)
    _ladder: Ladder = field(init=False, repr=False)

    def __post_init__(self) -> None:
        own = self.knowledge.atlas if isinstance(self.knowledge, AtlasKnowledge) else None
        self._ladder = Ladder(self.package, self.release, alone=self.knowledge is not None,
                              own=own)

    def _package_uses(self, changes: list[ApiChange], notes: Subjects) -> list[Affect]:
        """The uses the changes reach as the package says them; a removed spelling of an API
        that lives on is matched as spelled, without the names the atlas knows it by."""
        assert self.package is not None
        package = self.package
        spelled: list[Subject] = []  # removals: each spelling that no longer works, as spelled
        known: list[Subject] = []  # the rest: through the names and subclasses the atlas knows
        for change in changes:
            subject = subject_of(change, package.before)
            if subject is None:
                continue
            if change.change == "removed":
                spelled += [subject.model_copy(update={"api": name})
                            for name in dead_spellings(change, package.after)]
            else:
                known.append(subject)
        found: list[Affect] = []
        # Each class a change reaches is a change of its own in the diff (a subclass with an
        # __init__ of its own keeps its parameters): no subclass is followed from here.
        for subjects, knowledge in ((known, package.exact), (spelled, NoKnowledge())):
            if subjects:
                found += self.analyzer.affects(
                    Subjects(python=tuple(subjects), qualifiers=notes.qualifiers), self.release,
                    knowledge, self._ladder.weigh)
        return [use.model_copy(update={"source": "package"}) for use in found]

    def without_package(self) -> ReleaseAnalysis:
        """The same release read from its notes alone: what was announced while the package
        was pending."""
        return ReleaseAnalysis(self.analyzer, self.release, owner=self.owner,
                               suppressor=self.suppressor)

    def of(self, item: ClassifiedItem) -> ItemImpact | None:
        """None for an item that is not BC-breaking or a deprecation, or names nothing a
        codebase could use; else its APIs and their uses, possibly none, the suppressed ones
        apart."""
        return self._suppressed(item, self._of(item))

    def _suppressed(self, item: ClassifiedItem, found: ItemImpact | None) -> ItemImpact | None:
        if found is None or not found.affects:
            return found
        kept, suppressed = self.suppressor.split(item, found.affects)
        return ItemImpact(found.apis, kept, (*found.suppressed, *suppressed))

    def _of(self, item: ClassifiedItem) -> ItemImpact | None:
        if self.package is None:
            return self.analyzer.impact(item, self.release, self.knowledge, self._ladder.weigh)
        if item.kind not in ATTENTION_KINDS:
            return None
        package = self.package
        subjects = read_subjects(item)
        joined: list[ApiChange] = []
        bound: set[Subject] = set()  # namespaces said to change, bound to what the package shows
        for index, change in enumerate(package.changes):
            spoken = speaks_of(change, subjects.python, item.text, package.before)
            if spoken is None:
                continue
            self._claimed.add(index)
            if subject_of(change, package.before) is None:
                continue
            if not covers(spoken, package.before):
                joined.append(change)
            elif _changed_in_words(spoken):
                # "Objects in torch.utils.dlpack have been updated": the package shows which
                # (DLDeviceType's members); calls of the rest of the module are not reached.
                bound.add(spoken)
                joined.append(change)
            # Else a namespace removed or deprecated reaches every use under it already.
        named = subjects.apis  # what the notes say it changes, however its uses are found
        if bound:
            subjects = subjects.model_copy(update={"python": tuple(
                subject for subject in subjects.python if subject not in bound)})
        if not subjects and not joined:
            return None
        # Where the package shows what became of the option the notes name, it says exactly
        # which classes lost it ("Sampler" loses data_source; SequentialSampler, with an
        # __init__ of its own, keeps it): the notes' broader reading gives way.
        shown = {change.parameter for change in joined if change.parameter}
        notes, exact = [], []
        for subject in subjects.python:
            if subject.option in shown:
                continue
            classes = confirmed_classes(subject, package.before, package.after)
            if classes is None:
                notes.append(subject)
            else:  # the atlases tell which classes lost it: those, each as itself
                exact += [subject.model_copy(update={"api": cls}) for cls in classes]
        subjects = subjects.model_copy(update={"python": tuple(notes)})
        weigh = self._ladder.weigh
        affects = self.analyzer.affects(subjects, self.release, package.knowledge, weigh)
        if exact:
            affects += self.analyzer.affects(
                Subjects(python=tuple(exact), qualifiers=subjects.qualifiers), self.release,
                package.exact, weigh)
        if joined:
            affects = _merged(affects, self._package_uses(joined, subjects))
        apis = list(dict.fromkeys([*named, *(change.api for change in joined)]))
        return ItemImpact(apis, affects)

    def unmentioned(self) -> list[tuple[ClassifiedItem, ItemImpact]]:
        """The package's changes no item read so far speaks of, one item per kind of change,
        kept only where they touch the code; the others are counted in ``untouched``."""
        if self.package is None:
            return []
        rest = [change for index, change in enumerate(self.package.changes)
                if index not in self._claimed]
        kept, self.untouched = [], 0
        for changes in unmentioned_groups(rest):
            if changes[0].change == "default_changed":
                # A default the notes never mention is counted, not flagged: when it matters
                # the package does not say (2.7's ``optimize`` of torch.onnx.export applies
                # only with ``dynamo=True``, not the default then), so every call relying on
                # it would be a false alarm but a few.
                self.untouched += len(changes)
                continue
            uses = self._package_uses(changes, Subjects())
            if not any(use.tier != "mentions" for use in uses):
                self.untouched += len(changes)
                continue
            touched = {use.api for use in uses if use.tier != "mentions"}
            first = sorted(changes, key=lambda c: not ({c.api, *c.names} & touched))
            item = unmentioned_item(first, self.release or "this release", self.owner)
            found = self._suppressed(item, ItemImpact([change.api for change in first],
                                                      _merged([], uses)))
            assert found is not None
            kept.append((item, found))
        return kept
