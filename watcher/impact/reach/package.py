"""A release's own API changes, read from the package (the atlas diff against the release
before), joined with what its notes say.

The notes alone cannot know torch's API: "the LRScheduler constructor" loses ``verbose``, and
the code passes it to ``ReduceLROnPlateau``. The atlas can. Each change of the diff joins the
notes item that speaks of it (the same API, a class it derives from, or the same method; and,
for a parameter's change, the same parameter), which gains the change as a precise subject.
A change no item speaks of becomes an item of its own ("API changes the notes do not mention":
removals and signature changes BC-breaking, new markers deprecations), one per kind of change
and parameter, which reaches readers only where it touches the code.

Pure: atlases and the diff in, subjects and items out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from watcher.impact.atlas import ApiChange, Atlas, AtlasKnowledge
from watcher.impact.model import Scope, Subject
from watcher.models import ClassifiedItem

__all__ = ["UNMENTIONED", "PackageChanges", "confirmed_classes", "covers", "dead_spellings",
           "speaks_of", "subject_of", "unmentioned_groups",
           "unmentioned_item"]

UNMENTIONED = "API changes the notes do not mention"
PACKAGES = {"pytorch/pytorch": "torch", "pytorch/xla": "torch_xla"}
_NAMED_SHOWN = 3  # APIs an unmentioned item names before "and N more"
_METHODS = frozenset({"method", "property"})


@dataclass(frozen=True)
class PackageChanges:
    """``changes``: the release's API diff; ``before``: the atlas of the release before, which
    the code is written against (where a removed parameter still has its position)."""

    release: str
    changes: tuple[ApiChange, ...]
    before: Atlas
    after: Atlas
    knowledge: AtlasKnowledge = field(init=False)  # names, signatures, subclasses
    exact: AtlasKnowledge = field(init=False)  # names and signatures, no subclass followed

    def __post_init__(self) -> None:
        object.__setattr__(self, "knowledge", AtlasKnowledge(self.before))
        object.__setattr__(self, "exact", AtlasKnowledge(self.before, subclasses=False))


def _canonical(atlas: Atlas, name: str) -> str:
    return atlas.resolve(name) or name


def _is_method(atlas: Atlas, api: str) -> bool:
    return atlas.kind(_canonical(atlas, api)) in _METHODS


def _owner_and_member(atlas: Atlas, change: ApiChange) -> tuple[str, str | None]:
    """The class a change is about and the member it changes (None: the class itself or its
    constructor; a function: itself and None)."""
    canonical = _canonical(atlas, change.api)
    if _is_method(atlas, change.api):
        owner, _, member = canonical.rpartition(".")
        return owner, member
    return canonical, None


def _lineage(atlas: Atlas, cls: str) -> set[str]:
    """``cls`` and the classes it derives from, canonical and by last name (notes write
    ``LRScheduler``)."""
    found = set(atlas.mro(cls)) if atlas.kind(cls) == "class" else {cls}
    found.add(cls)
    return found | {name.rpartition(".")[2] for name in found}


def _names_the_parameter(parameter: str, subject: Subject, text: str) -> bool:
    return subject.option == parameter or bool(
        re.search(rf"(?<![\w.]){re.escape(parameter)}(?![\w(])", text))


def speaks_of(change: ApiChange, subjects: tuple[Subject, ...], text: str, atlas: Atlas
              ) -> Subject | None:
    """The subject by which an item whose subjects are ``subjects`` speaks of ``change``: the
    same API (any of its names), a class it derives from (a constructor's or a method's
    change), the same method named on a base class, or a namespace holding it; and, for a
    parameter's change, the same parameter. None when the item does not."""
    if not subjects:
        return None
    names = {change.api, *change.names, _canonical(atlas, change.api)}
    owner, member = _owner_and_member(atlas, change)
    lineage = _lineage(atlas, owner)
    for subject in subjects:
        if subject.scope == "method" or (member and subject.method):
            method = subject.method or subject.api.rpartition(".")[2]
            base = subject.api.removesuffix("." + method)
            about = member == method and (not base or base in lineage
                                          or _canonical(atlas, base) in lineage)
        else:
            about = (subject.api in names or _canonical(atlas, subject.api) in names
                     or (member is None and subject.api in lineage)
                     or (covers(subject, atlas) and any(
                         name.startswith(subject.api + ".") for name in names)))
        if about and (change.parameter is None
                      or _names_the_parameter(change.parameter, subject, text)):
            return subject
    return None


def covers(subject: Subject, atlas: Atlas) -> bool:
    """Whether ``subject`` reaches every API under its name: a namespace, or a module (uses
    are matched through attribute chains, ``torch.jit`` reaches ``torch.jit.script(...)``)."""
    return subject.scope == "namespace" or atlas.kind(_canonical(atlas, subject.api)) == "module"


def dead_spellings(change: ApiChange, after: Atlas) -> list[str]:
    """A removal's spellings that no longer work: only those are uses of it
    (``torch.linalg.Tensor`` is gone, ``torch.Tensor`` is not; ``torch.onnx.utils.
    is_in_onnx_export`` moved to ``torch.onnx``, where code still reaches it). A function
    that now only raises is dead under every name it has (``torch.cholesky``)."""
    names = dict.fromkeys((change.api, *change.names))
    if change.raises:
        return list(names)
    return [name for name in names if not after.spells(name)]


def _class_named(atlas: Atlas, name: str, option: str) -> str | None:
    """The class a note names, dotted or bare (``LRScheduler``, ``Sampler``: the one class of
    that name whose constructor took ``option``), if one."""
    found = atlas.resolve(name)
    if found is None and "." not in name:
        named = {canonical for public, canonical in atlas.names.items()
                 if public.rpartition(".")[2] == name and atlas.kind(canonical) == "class"
                 and _has(atlas, canonical, option)}
        found = named.pop() if len(named) == 1 else None
    return found if found is not None and atlas.kind(found) == "class" else None


def _has(atlas: Atlas, cls: str, parameter: str) -> bool | None:
    params = atlas.signature(cls)
    return None if params is None else any(param.name == parameter for param in params)


def confirmed_classes(subject: Subject, before: Atlas, after: Atlas) -> list[str] | None:
    """The classes a note's removed constructor option really leaves: the class it names and
    each subclass whose constructor took the option before and no longer does (one with an
    ``__init__`` of its own that keeps it is untouched). None when the atlases cannot tell
    (not a class, no signature)."""
    if subject.option is None or subject.effect != "removed" or subject.condition != "passes":
        return None
    cls = _class_named(before, subject.api, subject.option)
    if cls is None:
        return None
    kept = []
    for candidate in (cls, *before.subclasses(cls)):
        if _has(before, candidate, subject.option) and not _has(after, candidate,
                                                                  subject.option):
            kept.append(candidate)
    return kept


def subject_of(change: ApiChange, atlas: Atlas) -> Subject | None:
    """The change as a subject the matcher reads: a removed name is any use; a removed
    parameter, calls passing it; a changed default (or one removed, a parameter now required),
    calls not passing it; a deprecation, any use; a parameter moved to another position, calls
    passing arguments by position up to where it was. A parameter made keyword- or
    positional-only is reached only by calls passing it the other way, which the index does
    not tell apart: no subject (the item still names the API)."""
    api = change.api
    method = api.rpartition(".")[2] if _is_method(atlas, api) else None
    scope: Scope = "method" if method else "exact"
    kind = change.change
    if kind == "removed":
        return Subject(api=api, scope=scope, method=method, effect="removed")
    if kind == "deprecated":
        if change.parameter is not None:
            # A warning the body raises under a condition on a parameter ("if not dynamo:")
            # is read as that parameter's deprecation, but which of its values warns the
            # package does not say: the notes' words decide (``dynamo=False``), not this.
            return None
        return Subject(api=api, scope=scope, method=method, effect="deprecated")
    if kind == "parameter_removed":
        return Subject(api=api, condition="passes", option=change.parameter, effect="removed")
    if kind in ("default_changed", "default_removed", "required_parameter_added"):
        return Subject(api=api, condition="omits", option=change.parameter, effect="changed")
    if kind == "parameter_moved" and change.old is not None:
        return Subject(api=api, scope=scope, method=method, condition="signature",
                       shape="moved", option=change.parameter, value=change.old,
                       effect="changed")
    return None


# How an unmentioned change reads, by its kind (a marker of deprecation is any other kind).
SENTENCES = {
    "removed": "{apis} removed",
    "parameter_removed": "{parameter} removed from {apis}",
    "keyword_only": "{parameter} of {apis} is now keyword-only",
    "positional_only": "{parameter} of {apis} is now positional-only",
    "default_changed": "The default of {parameter} in {apis} changed from `{old}` to `{new}`",
    "default_removed": "{parameter} of {apis} no longer has a default",
    "required_parameter_added": "{apis} takes a new required parameter {parameter}",
    "parameter_moved": "{parameter} of {apis} moved from argument {old} to argument {new}",
}


def _sentence(change: ApiChange, apis: str) -> str:
    parameter = f"`{change.parameter}`" if change.parameter else ""
    if change.raises:
        return f"{apis} now only raise when called"
    sentence = SENTENCES.get(change.change)
    if sentence is not None:
        return sentence.format(apis=apis, parameter=parameter, old=change.old, new=change.new)
    what = f"{parameter} of {apis}" if parameter else apis
    return f"{what} deprecated" + (f": {change.new}" if change.new else "")


def unmentioned_groups(changes: list[ApiChange]) -> list[list[ApiChange]]:
    """The changes no item speaks of, grouped per kind of change and parameter (``verbose``
    removed from 17 schedulers is one group)."""
    groups: dict[tuple[str, str | None, str | None, str | None], list[ApiChange]] = {}
    for change in changes:
        groups.setdefault((change.change, change.parameter, change.old, change.new),
                          []).append(change)
    return list(groups.values())


def unmentioned_item(changes: list[ApiChange], release: str,
                     owner: Callable[[str], str | None]) -> ClassifiedItem:
    """One group as an item: its first APIs named (put those that touch the code first), the
    rest counted; filed under the subsystem that owns its first API (``owner``:
    ``config/apis.toml``)."""
    shown = ", ".join(f"`{change.api}`" for change in changes[:_NAMED_SHOWN])
    more = len(changes) - _NAMED_SHOWN
    apis = shown + (f" and {more} more" if more > 0 else "")
    text = (f"{_sentence(changes[0], apis)} in {release} (found in the package's API; "
            "the release notes do not say)")
    return ClassifiedItem(
        text=text, section=(UNMENTIONED,), subsystem=owner(changes[0].api) or "python_frontend",
        kind="deprecation" if changes[0].change == "deprecated" else "bc_breaking",
        decided_by="rule", confidence=1.0)
