"""The API atlas of one release of a package, as values: what each API is, the names users
write for it, its parameters, its bases and its deprecation markers; with the look-ups the
impact analysis needs (any name → the API, an API → its names, a class → its subclasses).

An API is known by its *canonical* name, where it is defined (``torch._tensor.Tensor``,
``torch.optim.lr_scheduler.LRScheduler.print_lr``), and by the *public* names users write
(``torch.Tensor``). A method has no public names of its own in ``names``: it is reached through
a class, its own or a subclass (``torch.optim.lr_scheduler.StepLR.print_lr``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

POSITIONAL_ONLY = "positional_only"
POSITIONAL_OR_KEYWORD = "positional_or_keyword"
VAR_POSITIONAL = "var_positional"
KEYWORD_ONLY = "keyword_only"
VAR_KEYWORD = "var_keyword"
VARIADIC = frozenset({VAR_POSITIONAL, VAR_KEYWORD})

# What an API is.
FUNCTION, CLASS, METHOD, PROPERTY, DATA, MODULE = ("function", "class", "method", "property",
                                                   "data", "module")
CALLABLE = frozenset({FUNCTION, METHOD})
# A stub's ``= ...``: the parameter has a default whose value the stub does not say.
UNKNOWN_DEFAULT = "..."
# Bases from outside the package whose construction is object's (no arguments): typing's and
# abc's markers add no constructor (``class S(Generic[T]): pass; S(1)`` raises TypeError).
BARE_BASES = frozenset({"object", "Generic", "typing.Generic", "Protocol", "typing.Protocol",
                        "ABC", "abc.ABC"})


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter: ``default`` is its source text (``ast.unparse``), None when required."""

    name: str
    kind: str = POSITIONAL_OR_KEYWORD
    default: str | None = None

    @property
    def variadic(self) -> bool:
        return self.kind in VARIADIC


@dataclass(frozen=True, slots=True)
class Api:
    """One API. ``params``: a function's or method's (``self``/``cls`` left out), None where
    the source does not say; ``deprecated``: the marker's message ("" when it gives none);
    ``bases``: a class's bases, canonical where the package defines them, else as written
    (``enum.Enum``), and its own methods, properties and attributes (an enum's members) in
    ``members`` (each an API of its own, ``{class}.{member}``); ``deprecated_params``:
    parameters a warning is raised for;
    ``raises``: the message of a function whose body does nothing but raise (torch keeps a
    removed function as such a stub, ``torch.cholesky`` in 2.14), None for any other."""

    kind: str
    params: tuple[Param, ...] | None = None
    deprecated: str | None = None
    bases: tuple[str, ...] = ()
    deprecated_params: tuple[tuple[str, str], ...] = ()
    raises: str | None = None
    members: tuple[str, ...] = ()  # a class's own methods, properties, attributes, by name


@dataclass(frozen=True)
class Atlas:
    """One release's API. ``apis``: canonical name → ``Api`` (modules included, kind
    ``module``); ``names``: every public name → the canonical name of what it is; ``derived``:
    each class → the classes deriving from it directly, when known beforehand (a loaded atlas
    has it from its file; else it is found from the bases, which reads every API); ``bound``:
    each public module → the attributes it binds from the package without making them public
    names (``from torch import Tensor`` in ``torch.types``, outside its ``__all__``): code
    that writes ``torch.types.Tensor`` still runs, so such a name is not removed; so are the
    names a module-level ``__getattr__`` may serve (PEP 562). ``skipped``: the modules the
    build could not read (nested too deep for ``ast``, or larger than the budget lets one
    module be): what they define is unknown, not removed. ``requires_python`` and
    ``requires``: the wheel's ``Requires-Python`` and ``Requires-Dist`` (empty where its
    metadata had none, or the atlas was built before they were read)."""

    package: str
    version: str
    apis: Mapping[str, Api]
    names: Mapping[str, str]
    derived: Mapping[str, tuple[str, ...]] | None = None
    bound: Mapping[str, Sequence[str]] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()
    requires_python: str = ""
    requires: tuple[str, ...] = ()
    _members: dict[str, dict[str, str]] = field(default_factory=dict, init=False, repr=False,
                                                compare=False)
    # Names already resolved: the impact step asks for the same few hundred thousands of times
    # (each package change against each item's subjects), each a walk through the name table.
    _resolved: dict[str, str | None] = field(default_factory=dict, init=False, repr=False,
                                             compare=False)
    # Each class's C3 line once: a diff asks for the MRO of every class it compares and of
    # each of their bases, and without it every call walked the whole hierarchy again.
    _lines: dict[str, tuple[str, ...] | None] = field(default_factory=dict, init=False,
                                                      repr=False, compare=False)

    # ---- names --------------------------------------------------------------------------
    def resolve(self, name: str) -> str | None:
        """The canonical API a name users write stands for (a method through any class that
        has it, inherited or not), or None when this release has no such name."""
        if name in self._resolved:
            return self._resolved[name]
        found = self.names.get(name)
        if found is None:
            owner, dot, member = name.rpartition(".")
            cls = self.resolve(owner) if dot else None
            if cls is not None and self.kind(cls) == CLASS:
                found = self.members(cls).get(member)
        self._resolved[name] = found
        return found

    def spells(self, name: str) -> bool:
        """Whether ``name`` still works when written: it resolves, or its module binds it."""
        if self.resolve(name) is not None:
            return True
        module, _, attr = name.rpartition(".")
        return attr in self.bound.get(module, ())

    def names_of(self, api: str) -> list[str]:
        """Every name ``api`` goes by, shortest first (a method: through each public class
        that has it)."""
        if self.kind(api) in (METHOD, PROPERTY):
            owner, _, member = api.rpartition(".")
            spelled = {f"{name}.{member}" for cls in (owner, *self.subclasses(owner))
                       if self.members(cls).get(member) == api for name in self.names_of(cls)}
            return sorted(spelled, key=_shortest)
        return sorted(self._reverse.get(api, ()), key=_shortest)

    def public_name(self, api: str) -> str:
        """The shortest name users write for ``api`` (its canonical one if it has none)."""
        names = self.names_of(api)
        return names[0] if names else api

    def spellings(self) -> Mapping[str, list[str]]:
        """Each API that has a public name → its public names, unsorted; built once."""
        return self._reverse

    @cached_property
    def _reverse(self) -> dict[str, list[str]]:
        reverse: dict[str, list[str]] = {}
        # A loaded atlas's table gives its pairs module by module (``NameTable.pairs``),
        # without looking each name up again: the whole of a diff's cost but for the APIs.
        pairs = getattr(self.names, "pairs", None)
        for name, api in pairs() if pairs is not None else self.names.items():
            reverse.setdefault(api, []).append(name)
        return reverse

    # ---- what an API is -----------------------------------------------------------------
    def kind(self, api: str) -> str | None:
        found = self.apis.get(api)
        return found.kind if found is not None else None

    def signature(self, api: str) -> tuple[Param, ...] | None:
        """A function's or method's parameters; a class's are its constructor's: the first
        class along its MRO that the package defines with a ``__new__`` or ``__init__`` (the
        ``__new__`` where it has both), as ``inspect.signature`` reads a class."""
        found = self.apis.get(api)
        if found is None:
            return None
        if found.kind == CLASS:
            for base in self.mro(api):
                own = self.apis[base].members
                for method in ("__new__", "__init__"):
                    if method in own:
                        return self.signature(f"{base}.{method}")
            return () if self._bare(api) else None
        return found.params

    def _bare(self, cls: str) -> bool:
        """Whether ``cls`` is built by ``object``'s constructor, which takes no arguments:
        no class along its MRO defines one, and every base the package does not define is
        one of ``BARE_BASES``, named (2.10's ``Sampler(Generic)`` takes no ``data_source``).
        A class naming no base at all may be a stub's C type (``class Argument: ...`` in
        ``torch/_C/__init__.pyi``), whose constructor the stub need not declare: unknown."""
        outside = [base for package_cls in self.mro(cls) for base in self.bases(package_cls)
                   if self.kind(base) != CLASS]
        return bool(outside) and all(base in BARE_BASES for base in outside)

    def deprecated(self, api: str, *, module: bool = True) -> str | None:
        """The deprecation message ``api`` carries ("" when its marker gives none): its own,
        a class's constructor's, or (unless not ``module``) its module's; None when it
        carries none."""
        found = self.apis.get(api)
        if found is None:
            return None
        if found.deprecated is not None:
            return found.deprecated
        if found.kind == CLASS:
            init = self.members(api).get("__init__")
            if init is not None and init.startswith(api + "."):
                own = self.apis[init].deprecated
                if own is not None:
                    return own
        home = self.module_of(api) if module else None
        if home is not None and home != api:
            return self.apis[home].deprecated
        return None

    def raises(self, api: str) -> str | None:
        """The message ``api`` always raises with, when its body does nothing else."""
        found = self.apis.get(api)
        return found.raises if found is not None else None

    def deprecated_params(self, api: str) -> dict[str, str]:
        """The parameters of ``api`` (a class: of its constructor) a warning is raised for."""
        target = self.members(api).get("__init__") if self.kind(api) == CLASS else api
        found = self.apis.get(target) if target is not None else None
        return dict(found.deprecated_params) if found is not None else {}

    def module_of(self, api: str) -> str | None:
        """The module ``api`` (a canonical or a public name) is defined in."""
        canonical = api if api in self.apis else self.resolve(api)
        if canonical is None:
            return None
        if self.apis[canonical].kind == MODULE:
            return canonical
        head = canonical.rpartition(".")[0]
        while head and self.kind(head) != MODULE:
            head = head.rpartition(".")[0]
        return head or None

    # ---- classes ------------------------------------------------------------------------
    def bases(self, cls: str) -> tuple[str, ...]:
        found = self.apis.get(cls)
        return found.bases if found is not None else ()

    def mro(self, cls: str) -> Sequence[str]:
        """``cls`` and the bases the package defines, nearest first, in Python's C3 order
        (``LazyBatchNorm1d(_LazyNormBase, _BatchNorm)`` meets ``_BatchNorm.forward`` before
        ``Module.forward``); depth first where the bases admit no C3 order."""
        found = _c3(self, cls, set())
        return found if found is not None else self._depth_first(cls)

    def _depth_first(self, cls: str) -> list[str]:
        order: list[str] = []
        pending = [cls]
        while pending:
            current = pending.pop(0)
            if current in order or self.kind(current) != CLASS:
                continue
            order.append(current)
            pending[0:0] = list(self.bases(current))
        return order

    def members(self, cls: str) -> dict[str, str]:
        """A class's methods, properties and attributes, own and inherited: name →
        canonical."""
        cached = self._members.get(cls)
        if cached is not None:
            return cached
        found: dict[str, str] = {}
        for base in reversed(self.mro(cls)):
            found.update((member, f"{base}.{member}") for member in self.apis[base].members)
        self._members[cls] = found
        return found

    def subclasses(self, cls: str) -> list[str]:
        """Every class deriving from ``cls``, directly or through others, sorted."""
        found: set[str] = set()
        pending = [cls]
        while pending:
            for sub in self._derived.get(pending.pop(), ()):
                if sub not in found:
                    found.add(sub)
                    pending.append(sub)
        return sorted(found)

    @cached_property
    def _derived(self) -> Mapping[str, Sequence[str]]:
        if self.derived is not None:
            return self.derived
        return derived_index(self.apis)

    # ---- all of it -----------------------------------------------------------------------
    def public_apis(self) -> Iterator[str]:
        """The canonical names that have a public name, each once."""
        return iter(self._reverse)


def _c3(atlas: Atlas, cls: str, visiting: set[str]) -> tuple[str, ...] | None:
    """The C3 linearisation of ``cls`` over the bases the package defines, None when there
    is none (or the bases run in a circle). Kept per class: a line does not depend on the
    classes being visited above it (a base that reaches one of them back is itself in a
    circle, None from anywhere), so each is worked out once."""
    if cls in atlas._lines:
        return atlas._lines[cls]
    if cls in visiting:
        return None
    visiting.add(cls)
    bases = [base for base in atlas.bases(cls) if atlas.kind(base) == CLASS]
    lines: list[Sequence[str]] = []
    for base in bases:
        line = _c3(atlas, base, visiting)
        if line is None:
            atlas._lines[cls] = None
            return None
        lines.append(line)
    visiting.discard(cls)
    lines.append(bases)
    order = [cls]
    while any(lines):
        head = next((line[0] for line in lines if line and not any(
            line[0] in other[1:] for other in lines)), None)
        if head is None:
            atlas._lines[cls] = None
            return None
        order.append(head)
        lines = [line[1:] if line and line[0] == head else line for line in lines]
    atlas._lines[cls] = found = tuple(order)
    return found


def derived_index(apis: Mapping[str, Api]) -> dict[str, tuple[str, ...]]:
    """Each class the package defines → the classes naming it as a base, sorted."""
    derived: dict[str, list[str]] = {}
    for api, found in apis.items():
        for base in found.bases:
            if base in apis:
                derived.setdefault(base, []).append(api)
    return {base: tuple(sorted(subs)) for base, subs in sorted(derived.items())}


def _shortest(name: str) -> tuple[int, int, str]:
    return (name.count("."), len(name), name)
