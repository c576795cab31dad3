"""The rung of evidence a change's uses stand on: whether a use may be ``breaks``, and the words
that say why.

Release notes say in words what changed; the package shows it. A use is ``breaks`` only where
the package proves the change (the atlas diff of the release has it: a name gone or only
raising, a parameter gone, a default changed), or the notes say a name or a parameter is
removed and the new release's atlas agrees. While no atlas of the release can be read (its
wheels not yet published, no network), the notes' explicit removal stands until it can be
checked. Everything else the words alone claim is ``check`` at most: a behaviour change, a
default the package shows unchanged (or cannot show: ``None`` resolved at run time), a removal
the atlas contradicts (the API still there, the parameter still taken) or cannot see.

An environment change (a Python, a package, a channel dropped) is weighed the same way: the
wheel's metadata proves a Python floor (``Requires-Python``) or a package's new minimum
(``Requires-Dist``); what a wheel cannot state (CUDA builds, a conda channel, the C++ ABI) rests
on the notes' words. Its tier stays the environment verdict's: the rung is said, not weighed.

Pure: a subject and the release's package changes in, an ``Evidence`` out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from watcher.impact.atlas import VAR_KEYWORD, ApiChange, Atlas
from watcher.impact.model import EnvironmentSubject, Subject
from watcher.impact.reach.package import PackageChanges

__all__ = ["Evidence", "Ladder", "Weigh"]

# The diff's kinds that prove a changed default reaches a call leaving the option out.
DEFAULT_CHANGES = frozenset({"default_changed", "default_removed", "required_parameter_added"})


class Evidence(NamedTuple):
    """``sure``: a use may stand in ``breaks``; ``rung``: what it rests on, said after the
    ``why`` ("the 2.14.1 package: torch.cholesky now only raises"); ``disputed``: the notes
    call an option removed that the new package's API still takes, so what changed is only
    what the option does."""

    sure: bool
    rung: str
    disputed: bool = False


# What a ladder's ``weigh`` is to the steps that take one.
Weigh = Callable[[Subject | EnvironmentSubject], Evidence]


@dataclass
class Ladder:
    """Weighs each subject of one release against its package (None: no diff of the release
    can be made; ``release`` names it). ``alone``: the release's own atlas was read, but none
    of the release before it to diff it against (2.5.0, the oldest bundled, offline), and
    ``own`` is that atlas where it is at hand (its wheel's metadata weighs an environment)."""

    package: PackageChanges | None
    release: str | None = None
    alone: bool = False
    own: Atlas | None = None
    _by_name: dict[str, list[ApiChange]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for change in self.package.changes if self.package is not None else ():
            for name in dict.fromkeys((change.api, *change.names)):
                self._by_name.setdefault(name, []).append(change)

    @property
    def _version(self) -> str:
        if self.package is not None:
            return self.package.after.version
        return (self.release or "this release").removeprefix("v")

    def weigh(self, subject: Subject | EnvironmentSubject) -> Evidence:
        if isinstance(subject, EnvironmentSubject):
            return self._environment(subject)
        if subject.condition == "errors" or (subject.condition == "signature" and
                                             subject.shape != "moved"):
            return Evidence(False, "")
        shown = self._shown(subject)
        if shown is not None:
            return Evidence(True, f"the {self._version} package: {shown}")
        if self.package is None:
            return self._unread(subject)
        return self._read(subject, self.package.before, self.package.after)

    # ---- the package's own diff ---------------------------------------------------------
    def _shown(self, subject: Subject) -> str | None:
        """What the release's diff shows of the subject, when it shows its change."""
        if self.package is None or subject.effect == "deprecated":
            return None
        for change in self._changes_of(subject):
            if subject.condition == "uses" and change.change == "removed":
                return _removal(change)
            if change.parameter != subject.option or subject.option is None:
                continue
            if subject.condition == "passes" and change.change == "parameter_removed" \
                    and subject.effect == "removed" and subject.value is None:
                return f"{change.api} takes no {change.parameter}"
            if subject.condition == "omits" and change.change in DEFAULT_CHANGES:
                return _default(change)
            if subject.shape == "moved" and change.change == "parameter_moved":
                return (f"{change.parameter} of {change.api} moved from argument {change.old} "
                        f"to {change.new}")
        return None

    def _changes_of(self, subject: Subject) -> list[ApiChange]:
        assert self.package is not None
        names = [subject.api]
        canonical = self.package.before.resolve(subject.api)
        if canonical is not None:
            names += [canonical, *self.package.before.names_of(canonical)]
        return [change for name in dict.fromkeys(names) for change in self._by_name.get(name, ())]

    # ---- an environment, against the wheel's metadata ------------------------------------
    def _environment(self, subject: EnvironmentSubject) -> Evidence:
        after = self.package.after if self.package is not None else self.own
        if after is None:
            return Evidence(True, f"the notes say so; no {self._version} package read yet")
        version = after.version
        if subject.kind == "python" and after.requires_python:
            from watcher.impact.environment import admits_below

            stated = after.requires_python
            if not admits_below(stated, subject.minimum):
                return Evidence(True, f"the {version} package: Requires-Python {stated}")
            return Evidence(True, f"the notes say so; the {version} package still states "
                                  f"Requires-Python {stated}")
        if subject.kind in ("package", "renamed_package"):
            shown = _required(subject, after.requires)
            if shown:
                return Evidence(True, f"the {version} package: Requires-Dist {shown}")
        return Evidence(True, "the notes say so")

    # ---- the words, against the atlases -------------------------------------------------
    def _unread(self, subject: Subject) -> Evidence:
        missing = (f"no package before {self._version} read to diff it against" if self.alone
                   else f"no {self._version} package read yet")
        if _removes(subject):
            return Evidence(True, f"the notes say so; {missing}")
        return Evidence(False, f"the notes' words; {missing}")

    def _read(self, subject: Subject, before: Atlas, after: Atlas) -> Evidence:
        version = self._version
        if subject.condition == "uses" and subject.effect == "removed":
            return self._removed_name(subject, before, after)
        if subject.condition == "passes" and _removes(subject):
            return self._removed_option(subject, before, after)
        if subject.condition == "omits" and subject.effect != "deprecated":
            return self._default(subject, before, after)
        if subject.effect == "changed" and subject.condition == "uses":
            return Evidence(False, f"a behaviour change the {version} package cannot show")
        return Evidence(False, "")

    def _removed_name(self, subject: Subject, before: Atlas, after: Atlas) -> Evidence:
        version, api = self._version, subject.api
        canonical = after.resolve(api)
        if canonical is not None and after.raises(canonical) is not None:
            return Evidence(True, f"the {version} package: {api} now only raises")
        if after.spells(api):
            return Evidence(False, f"the notes say removed, but the {version} package still "
                                   f"has {api}")
        if before.spells(api):
            return Evidence(True, f"the {version} package no longer has {api}")
        return Evidence(False, f"the notes say removed; the package does not show {api}")

    def _removed_option(self, subject: Subject, before: Atlas, after: Atlas) -> Evidence:
        version, api, option = self._version, subject.api, str(subject.option)
        canonical = after.resolve(api)
        if canonical is None:
            if before.spells(api):  # the API itself is gone: any call of it breaks
                return Evidence(True, f"the {version} package no longer has {api}")
            return Evidence(False, f"the notes say {option} is removed; the package does not "
                                   f"show {api}")
        params = after.signature(canonical)
        if params is None:
            return Evidence(False, f"the notes say {option} is removed; the {version} "
                                   f"package's signature of {api} cannot tell")
        names = {param.name for param in params}
        if option in names:
            return Evidence(False, f"the notes say {option} is removed, but {api} still takes "
                                   f"it in the {version} package", disputed=True)
        if any(param.kind == VAR_KEYWORD for param in params):
            return Evidence(False, f"the notes say {option} is removed; {api} takes **kwargs "
                                   f"in the {version} package")
        return Evidence(True, f"the {version} package's {api} takes no {option}")

    def _default(self, subject: Subject, before: Atlas, after: Atlas) -> Evidence:
        version, option = self._version, str(subject.option)
        old, new = _default_of(before, subject.api, option), _default_of(after, subject.api,
                                                                         option)
        if old is not None and old == new:
            return Evidence(False, f"the notes' words; the {version} package shows the same "
                                   f"default of {option}, {new}")
        return Evidence(False, f"the notes' words; the {version} package does not show the "
                               f"default of {option} changed")


def _required(subject: EnvironmentSubject, requires: tuple[str, ...]) -> str:
    """The wheel's requirement that proves the subject: for ``package``, one of its name that
    rejects every version the notes say is no longer enough; for ``renamed_package``, one of
    the new name where none of the old is left. Empty where none does."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    from watcher.impact.environment import admits_rejected

    found: dict[str, tuple[str, str]] = {}  # name -> (the line without markers, specifier)
    for line in requires:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        found.setdefault(canonicalize_name(requirement.name),
                         (line.partition(";")[0].strip(), str(requirement.specifier)))
    if subject.kind == "renamed_package":
        new, old = canonicalize_name(subject.new_name), canonicalize_name(subject.name)
        return found[new][0] if new in found and old not in found else ""
    line, specifier = found.get(canonicalize_name(subject.name), ("", ""))
    if specifier and not admits_rejected(specifier, subject.specifier):
        return line
    return ""


def _removes(subject: Subject) -> bool:
    """The words remove a name or a parameter (not one value of an option)."""
    return subject.effect == "removed" and subject.condition in ("uses", "passes") and \
        subject.value is None


def _removal(change: ApiChange) -> str:
    if change.raises:
        return f"{change.api} now only raises"
    return f"{change.api} is gone"


def _default(change: ApiChange) -> str:
    if change.change == "default_changed":
        return f"the default of {change.parameter} is now {change.new}, was {change.old}"
    if change.change == "default_removed":
        return f"{change.parameter} of {change.api} no longer has a default"
    return f"{change.api} takes a new required parameter {change.parameter}"


def _default_of(atlas: Atlas, api: str, option: str) -> str | None:
    canonical = atlas.resolve(api)
    params = atlas.signature(canonical) if canonical is not None else None
    for param in params or ():
        if param.name == option:
            return param.default
    return None
