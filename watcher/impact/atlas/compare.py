"""The API changes between two atlases of a package: names removed, parameters removed, made
keyword-only or positional-only, required or added as required, defaults changed, markers of
deprecation newly carried; for each class and every subclass that inherits the change.

A name is compared by its spelling: one that moved but is still reachable as users write it
is not removed, nor one its module still binds though it no longer exports it. Each change
names the API by its shortest public spelling (``api``) and the other names it goes by
(``names``). Pure: two atlases in, a sorted list out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from watcher.impact.atlas.model import (
    CALLABLE,
    CLASS,
    KEYWORD_ONLY,
    MODULE,
    POSITIONAL_ONLY,
    UNKNOWN_DEFAULT,
    Atlas,
    Param,
)

REMOVED = "removed"
PARAMETER_REMOVED = "parameter_removed"
KEYWORD_ONLY_CHANGE = "keyword_only"
POSITIONAL_ONLY_CHANGE = "positional_only"
DEFAULT_CHANGED = "default_changed"
DEFAULT_REMOVED = "default_removed"  # the parameter became required
REQUIRED_ADDED = "required_parameter_added"
DEPRECATED = "deprecated"
# The order changes are listed in (``atlas diff`` groups its text by it).
CHANGES = (REMOVED, PARAMETER_REMOVED, KEYWORD_ONLY_CHANGE, POSITIONAL_ONLY_CHANGE,
           DEFAULT_CHANGED, DEFAULT_REMOVED, REQUIRED_ADDED, DEPRECATED)
_ORDER = {change: index for index, change in enumerate(CHANGES)}


@dataclass(frozen=True, slots=True)
class ApiChange:
    """One change of one API: ``parameter`` for a parameter's, ``old``/``new`` the defaults as
    source text (``default_changed``) or the deprecation message (``deprecated``).

    ``raises``: a ``removed`` whose names still resolve, to a function that now does nothing
    but raise (``torch.cholesky`` in 2.14; ``new`` is its message): every spelling of it is
    dead for callers, though the name is there. ``internal``: the API lives in a package's
    internal kernels (``torch_xla.experimental.pallas_kernels``): counted, but only for code
    that imports them."""

    api: str
    change: str
    parameter: str | None = None
    old: str | None = None
    new: str | None = None
    names: tuple[str, ...] = ()
    raises: bool = False
    internal: bool = False

    def to_json_dict(self) -> dict[str, object]:
        found: dict[str, object] = {"api": self.api, "change": self.change,
                                    "parameter": self.parameter, "old": self.old,
                                    "new": self.new}
        if self.names:
            found["names"] = list(self.names)
        if self.raises:
            found["raises"] = True
        if self.internal:
            found["internal"] = True
        return found

    @classmethod
    def from_json_dict(cls, row: dict[str, Any]) -> ApiChange:
        return cls(api=row["api"], change=row["change"], parameter=row["parameter"],
                   old=row["old"], new=row["new"], names=tuple(row.get("names", ())),
                   raises=bool(row.get("raises")), internal=bool(row.get("internal")))


def diff(old: Atlas, new: Atlas) -> list[ApiChange]:
    """What changed from ``old`` to ``new``, sorted by kind of change, then API."""
    changes = [*_removed(old, new), *_changed(old, new)]
    unique = dict.fromkeys(changes)
    return sorted(unique, key=lambda c: (_ORDER[c.change], c.api, c.parameter or ""))


def _removed(old: Atlas, new: Atlas) -> Iterator[ApiChange]:
    """Public names of ``old`` that ``new`` resolves to nothing, one change per API; a name
    inside a removed module is the module's removal, not a change of its own."""
    gone: dict[str, list[str]] = {}
    for name, canonical in old.names.items():
        if not new.spells(name) and not _inside_removed_module(old, new, name):
            gone.setdefault(canonical, []).append(name)
    for names in gone.values():
        yield _named(REMOVED, sorted(names, key=_shortest))


def _inside_removed_module(old: Atlas, new: Atlas, name: str) -> bool:
    head = name.rpartition(".")[0]
    while head:
        if old.kind(old.names.get(head, "")) == MODULE and new.resolve(head) is None:
            return True
        head = head.rpartition(".")[0]
    return False


def _changed(old: Atlas, new: Atlas) -> Iterator[ApiChange]:
    """Signature and deprecation changes of what both releases have, by the public names of
    ``old``'s APIs that still resolve in ``new``."""
    methods: dict[tuple[str, str], list[str]] = {}
    for canonical in old.public_apis():
        kind = old.kind(canonical)
        if kind not in (*CALLABLE, CLASS, MODULE):
            continue
        spelled = [name for name in old.names_of(canonical) if new.resolve(name) is not None]
        if not spelled:
            continue
        now = new.resolve(spelled[0])
        if now is None or new.kind(now) != kind:
            continue
        names = tuple(new.names_of(now)) or (spelled[0],)
        if _became_a_stub(old, new, canonical, now):
            yield _named(REMOVED, list(names), new=new.raises(now), raises=True)
            continue
        if kind in CALLABLE or kind == CLASS:
            yield from _call_changes(old.signature(canonical), new.signature(now), names)
            yield from _param_markers(old.deprecated_params(canonical),
                                      new.deprecated_params(now), names)
        # Its own marker: a module newly deprecated is one change, not one per name in it.
        if old.deprecated(canonical) is None and new.deprecated(now, module=False) is not None:
            yield _named(DEPRECATED, list(names), new=new.deprecated(now, module=False))
        if kind == CLASS:
            for member, was in old.members(canonical).items():
                if member != "__init__" and not member.startswith("_"):
                    methods.setdefault((was, new.members(now).get(member, "")), []).extend(
                        f"{name}.{member}" for name in names)
    yield from _member_changes(old, new, methods)


def _member_changes(old: Atlas, new: Atlas, methods: dict[tuple[str, str], list[str]]
                    ) -> Iterator[ApiChange]:
    """A method's changes once for every class that has it (its own or inherited), all of
    their spellings named."""
    for (was, now), spelled in methods.items():
        names = _owner_first(old, was, set(spelled))
        if not now or _became_a_stub(old, new, was, now):
            yield _named(REMOVED, names, new=new.raises(now) if now else None, ordered=True,
                         raises=bool(now))
            continue
        yield from _call_changes(old.apis[was].params, new.apis[now].params, tuple(names),
                                 ordered=True)
        yield from _param_markers(old.deprecated_params(was), new.deprecated_params(now),
                                  tuple(names), ordered=True)
        if old.apis[was].deprecated is None and new.apis[now].deprecated is not None:
            yield _named(DEPRECATED, names, new=new.apis[now].deprecated, ordered=True)


def _became_a_stub(old: Atlas, new: Atlas, was: str, now: str) -> bool:
    """A function kept only to raise "removed" (its name resolves, its call cannot work)."""
    return old.raises(was) is None and new.raises(now) is not None


def _owner_first(old: Atlas, method: str, spelled: set[str]) -> list[str]:
    """A method's spellings, the one through the class that defines it first (the change is
    that class's; its subclasses inherit it), then shortest first."""
    owner, _, member = method.rpartition(".")
    own = f"{old.public_name(owner)}.{member}"
    rest = sorted(spelled - {own}, key=_shortest)
    return [own, *rest] if own in spelled else rest


def _call_changes(before: tuple[Param, ...] | None, after: tuple[Param, ...] | None,
                  names: tuple[str, ...], *, ordered: bool = False) -> Iterator[ApiChange]:
    if before is None or after is None:
        return
    then = {param.name: param for param in before if not param.variadic}
    now = {param.name: param for param in after if not param.variadic}
    absorbs = any(param.variadic for param in before)
    for name, param in then.items():
        found = now.get(name)
        if found is None:
            yield _named(PARAMETER_REMOVED, list(names), parameter=name, ordered=ordered)
            continue
        yield from _param_change(param, found, names, ordered)
    for name, param in now.items():
        if name not in then and param.default is None and not absorbs:
            yield _named(REQUIRED_ADDED, list(names), parameter=name, ordered=ordered)


def _param_change(before: Param, after: Param, names: tuple[str, ...], ordered: bool
                  ) -> Iterator[ApiChange]:
    name, spelled = before.name, list(names)
    if after.kind == KEYWORD_ONLY and before.kind != KEYWORD_ONLY:
        yield _named(KEYWORD_ONLY_CHANGE, spelled, parameter=name, ordered=ordered)
    elif after.kind == POSITIONAL_ONLY and before.kind != POSITIONAL_ONLY:
        # From keyword-only too: every call passed it by keyword, and none can now.
        yield _named(POSITIONAL_ONLY_CHANGE, spelled, parameter=name, ordered=ordered)
    if before.default is not None and after.default is None:
        yield _named(DEFAULT_REMOVED, spelled, parameter=name, old=before.default,
                     ordered=ordered)
    elif (before.default is not None and after.default is not None
          and UNKNOWN_DEFAULT not in (before.default, after.default)
          and before.default != after.default):
        yield _named(DEFAULT_CHANGED, spelled, parameter=name, old=before.default,
                     new=after.default, ordered=ordered)


def _param_markers(before: dict[str, str], after: dict[str, str], names: tuple[str, ...],
                   *, ordered: bool = False) -> Iterator[ApiChange]:
    for name, message in sorted(after.items()):
        if name not in before:
            yield _named(DEPRECATED, list(names), parameter=name, new=message, ordered=ordered)


def _named(change: str, names: list[str], *, parameter: str | None = None,
           old: str | None = None, new: str | None = None, ordered: bool = False,
           raises: bool = False) -> ApiChange:
    """A change named by the first of ``names`` when ``ordered``, else by the shortest."""
    spelled = names if ordered else sorted(names, key=_shortest)
    return ApiChange(spelled[0], change, parameter, old, new, tuple(spelled[1:]), raises,
                     internal(spelled[0]))


def internal(name: str) -> bool:
    """Whether a name lies in a package's internal kernels: a module named ``kernels`` or
    ``*_kernels`` (``torch_xla.experimental.pallas_kernels.flash_attention_kernel``), the
    implementations public wrappers call (``torch_xla.experimental.custom_kernel``)."""
    return any(part == "kernels" or part.endswith("_kernels") for part in name.split(".")[:-1])


def _shortest(name: str) -> tuple[int, int, str]:
    return (name.count("."), len(name), name)
