"""The API changes between two atlases of a package: names removed, parameters removed, made
keyword-only or positional-only, required or added as required, defaults changed, markers of
deprecation newly carried; for each class and every subclass that inherits the change.

Most APIs do not change from one release to the next: a function or method stored as the same
row in both atlases is passed over without decoding either. A name is compared by its
spelling: one that moved but is still reachable as users write it is not removed, nor one its
module still binds though it no longer exports it. Each change names the API by its shortest
public spelling (``api``) and the other names it goes by (``names``). Pure: two atlases in, a
sorted list out.
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from dataclasses import dataclass
from typing import Any

from watcher.impact.atlas.model import (
    CALLABLE,
    CLASS,
    KEYWORD_ONLY,
    MODULE,
    POSITIONAL_ONLY,
    POSITIONAL_OR_KEYWORD,
    UNKNOWN_DEFAULT,
    Atlas,
    Param,
)
from watcher.impact.atlas.table import ApiTable

REMOVED = "removed"
PARAMETER_REMOVED = "parameter_removed"
KEYWORD_ONLY_CHANGE = "keyword_only"
POSITIONAL_ONLY_CHANGE = "positional_only"
DEFAULT_CHANGED = "default_changed"
DEFAULT_REMOVED = "default_removed"  # the parameter became required
REQUIRED_ADDED = "required_parameter_added"
# A parameter both releases take by position at different positions (one inserted or removed
# before it, or the order changed): ``old``/``new`` its argument numbers, from 1. A call
# passing that many arguments by position hands the later ones to other parameters.
PARAMETER_MOVED = "parameter_moved"
DEPRECATED = "deprecated"
# The order changes are listed in (``atlas diff`` groups its text by it).
CHANGES = (REMOVED, PARAMETER_REMOVED, KEYWORD_ONLY_CHANGE, POSITIONAL_ONLY_CHANGE,
           DEFAULT_CHANGED, DEFAULT_REMOVED, REQUIRED_ADDED, PARAMETER_MOVED, DEPRECATED)
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


def diff(old: Atlas, new: Atlas, among: Set[str] | None = None) -> list[ApiChange]:
    """What changed from ``old`` to ``new``, sorted by kind of change, then API. ``among``:
    the canonical APIs of ``old`` that may have changed, the only ones compared (the others
    are known not to have: ``bundled_diffs.span_diff``); None: every one."""
    changes = [*_removed(old, new, among), *_changed(old, new, among)]
    unique = dict.fromkeys(changes)
    return sorted(unique, key=lambda c: (_ORDER[c.change], c.api, c.parameter or ""))


def _removed(old: Atlas, new: Atlas, among: Set[str] | None) -> Iterator[ApiChange]:
    """Public names of ``old`` that ``new`` resolves to nothing, one change per API; a name
    inside a removed module is the module's removal, not a change of its own."""
    gone: dict[str, list[str]] = {}
    for name, canonical in old.names.items():
        if among is not None and canonical not in among:
            continue
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


# A change before it is named: (change, parameter, old, new, raises). Most APIs do not change,
# so the names an API goes by (sorted spellings, through every subclass for a method) are
# looked up only for those that do.
Found = tuple[str, str | None, str | None, str | None, bool]
_COMPARED = (*CALLABLE, CLASS, MODULE)


def _changed(old: Atlas, new: Atlas, among: Set[str] | None) -> Iterator[ApiChange]:
    """Signature and deprecation changes of what both releases have, by the public names of
    ``old``'s APIs that still resolve in ``new``."""
    # A method (old, new canonical) -> the classes of ``new`` it is reached through, each
    # with the name to use where that class has no public one.
    methods: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for canonical in old.public_apis():
        if among is not None and canonical not in among:
            continue
        kind = old.kind(canonical)
        if kind not in _COMPARED:
            continue
        first, now = _still_spelled(old, new, canonical)
        if now is None or (kind in CALLABLE and _same_row(old, canonical, new, now)):
            continue
        if new.kind(now) != kind:
            continue
        if _became_a_stub(old, new, canonical, now):
            yield _named(REMOVED, _names(new, now, first), new=new.raises(now), raises=True)
            continue
        found = list(_own_changes(old, new, canonical, now, kind))
        if found:
            names = _names(new, now, first)
            yield from (_named(change, names, parameter=parameter, old=was, new=becomes,
                               raises=raises)
                        for change, parameter, was, becomes, raises in found)
        if kind == CLASS:
            then = new.members(now)
            for member, was in old.members(canonical).items():
                if member != "__init__" and not member.startswith("_"):
                    methods.setdefault((was, then.get(member, "")), []).append(
                        (now, first, member))
    yield from _member_changes(old, new, methods)


def _still_spelled(old: Atlas, new: Atlas, canonical: str) -> tuple[str, str | None]:
    """The first (shortest) public name of ``canonical`` that ``new`` still resolves, and
    what it resolves to there; ("", None) when none does."""
    for name in old.names_of(canonical):
        now = new.resolve(name)
        if now is not None:
            return name, now
    return "", None


def _names(new: Atlas, now: str, first: str) -> list[str]:
    """Every name ``now`` goes by in ``new``, else the one it was reached by."""
    return new.names_of(now) or [first]


def _own_changes(old: Atlas, new: Atlas, was: str, now: str, kind: str | None
                 ) -> Iterator[Found]:
    if kind in CALLABLE or kind == CLASS:
        yield from _call_changes(old.signature(was), new.signature(now), was)
        yield from _param_markers(old.deprecated_params(was), new.deprecated_params(now))
    # Its own marker: a module newly deprecated is one change, not one per name in it.
    if old.deprecated(was) is None:
        message = new.deprecated(now, module=False)
        if message is not None:
            yield DEPRECATED, None, None, message, False


def _member_changes(old: Atlas, new: Atlas,
                    methods: dict[tuple[str, str], list[tuple[str, str, str]]]
                    ) -> Iterator[ApiChange]:
    """A method's changes once for every class that has it (its own or inherited), all of
    their spellings named."""
    for (was, now), reached in methods.items():
        if now and _same_row(old, was, new, now):
            continue
        if not now or _became_a_stub(old, new, was, now):
            yield _named(REMOVED, _method_names(old, new, was, reached),
                         new=new.raises(now) if now else None, ordered=True, raises=bool(now))
            continue
        before, after = old.apis[was], new.apis[now]
        found = [*_call_changes(before.params, after.params, was),
                 *_param_markers(old.deprecated_params(was), new.deprecated_params(now))]
        if before.deprecated is None and after.deprecated is not None:
            found.append((DEPRECATED, None, None, after.deprecated, False))
        if found:
            names = _method_names(old, new, was, reached)
            yield from (_named(change, names, parameter=parameter, old=then, new=becomes,
                               ordered=True, raises=raises)
                        for change, parameter, then, becomes, raises in found)


def _method_names(old: Atlas, new: Atlas, method: str, reached: list[tuple[str, str, str]]
                  ) -> list[str]:
    """A method's spellings through every class it was reached by, owner first."""
    classes = {(cls, first) for cls, first, _ in reached}
    names = {cls: _names(new, cls, first) for cls, first in classes}
    spelled = {f"{name}.{member}" for cls, first, member in reached for name in names[cls]}
    return _owner_first(old, method, spelled)


def _same_row(old: Atlas, was: str, new: Atlas, now: str) -> bool:
    """Whether both atlases (loaded from their files) store ``was`` and ``now`` as the same
    row: the same parameters, markers and body, so a function or method has no change of its
    own (a class's constructor may come from a base that changed: classes are compared)."""
    if not (isinstance(old.apis, ApiTable) and isinstance(new.apis, ApiTable)):
        return False
    row = old.apis.row(was)
    return row is not None and row == new.apis.row(now)


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
                  api: str) -> Iterator[Found]:
    if before is None or after is None:
        return
    then = {param.name: param for param in before if not param.variadic}
    now = {param.name: param for param in after if not param.variadic}
    absorbs = any(param.variadic for param in before)
    for name, param in then.items():
        found = now.get(name)
        if found is None:
            yield PARAMETER_REMOVED, name, None, None, False
            continue
        yield from _param_change(param, found)
    for name, param in now.items():
        if name not in then and param.default is None and not absorbs:
            yield REQUIRED_ADDED, name, None, None, False
    if not compiled(api):
        # A compiled function's signature is its stub's overloads merged in first-seen order
        # (``torch.randint_like``): their order says nothing of what a call meets.
        yield from _moved(before, after)


def _moved(before: tuple[Param, ...], after: tuple[Param, ...]) -> Iterator[Found]:
    """The first parameter taken by position in both releases whose position changed
    (``cpp_extension.load``'s ``extra_ldflags``, argument 5 to 6, after 2.7 inserted
    ``extra_sycl_cflags``): every later argument a call passes by position moves with it."""
    then, now = _positional(before), _positional(after)
    for position, name in enumerate(then):
        if name in now and now.index(name) != position:
            yield PARAMETER_MOVED, name, str(position + 1), str(now.index(name) + 1), False
            return


def _positional(params: tuple[Param, ...]) -> list[str]:
    """The names a call can pass by position, in order, up to a ``*args``."""
    names = []
    for param in params:
        if param.kind not in (POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD):
            break
        names.append(param.name)
    return names


def _param_change(before: Param, after: Param) -> Iterator[Found]:
    name = before.name
    if after.kind == KEYWORD_ONLY and before.kind != KEYWORD_ONLY:
        yield KEYWORD_ONLY_CHANGE, name, None, None, False
    elif after.kind == POSITIONAL_ONLY and before.kind != POSITIONAL_ONLY:
        # From keyword-only too: every call passed it by keyword, and none can now.
        yield POSITIONAL_ONLY_CHANGE, name, None, None, False
    if before.default is not None and after.default is None:
        yield DEFAULT_REMOVED, name, before.default, None, False
    elif (before.default is not None and after.default is not None
          and UNKNOWN_DEFAULT not in (before.default, after.default)
          and before.default != after.default):
        yield DEFAULT_CHANGED, name, before.default, after.default, False


def _param_markers(before: dict[str, str], after: dict[str, str]) -> Iterator[Found]:
    for name, message in sorted(after.items()):
        if name not in before:
            yield DEPRECATED, name, None, message, False


def _named(change: str, names: list[str], *, parameter: str | None = None,
           old: str | None = None, new: str | None = None, ordered: bool = False,
           raises: bool = False) -> ApiChange:
    """A change named by the first of ``names`` when ``ordered``, else by the shortest."""
    spelled = names if ordered else sorted(names, key=_shortest)
    return ApiChange(spelled[0], change, parameter, old, new, tuple(spelled[1:]), raises,
                     internal(spelled[0]))


def compiled(name: str) -> bool:
    """Whether an API is defined in a package's compiled extension (``torch._C``): read from
    its ``.pyi`` stubs."""
    return "._C." in name or name.endswith("._C")


def internal(name: str) -> bool:
    """Whether a name lies in a package's internal kernels: a module named ``kernels`` or
    ``*_kernels`` (``torch_xla.experimental.pallas_kernels.flash_attention_kernel``), the
    implementations public wrappers call (``torch_xla.experimental.custom_kernel``)."""
    return any(part == "kernels" or part.endswith("_kernels") for part in name.split(".")[:-1])


def _shortest(name: str) -> tuple[int, int, str]:
    return (name.count("."), len(name), name)
