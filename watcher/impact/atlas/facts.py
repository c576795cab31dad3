"""What the atlas knows of one module once read (``extract``): its definitions, the names its
top level binds, its star imports and ``__all__``, and what it binds for type checkers only."""

from __future__ import annotations

from dataclasses import dataclass, field

from watcher.impact.atlas.model import Param

# A binding of a top-level name: ("def", qualname), ("from", module, name), ("module", module)
# or ("alias", dotted expression).
Binding = tuple[str, ...]


@dataclass
class Definition:
    """A function, class, method, property or piece of data a module defines; ``bases`` as
    written (dotted), resolved against the module's names later."""

    kind: str
    params: tuple[Param, ...] | None = None
    deprecated: str | None = None
    deprecated_params: dict[str, str] = field(default_factory=dict)
    bases: tuple[str, ...] = ()
    raises: str | None = None
    # A dataclass's or NamedTuple's generated constructor: (kind, its own fields' parameters)
    generated: tuple[str, tuple[Param, ...]] | None = None
    deprecates: bool = False  # a function that is a deprecation helper (``says_deprecated``)
    # ``name = helper(module, new, "message")`` at the top level (``markers.wrapper_call``):
    # a deprecated name where the linker finds the helper to be a deprecation helper
    wrapper: tuple[str, tuple[str, ...], str] | None = None


@dataclass
class ModuleFacts:
    name: str
    is_package: bool
    definitions: dict[str, Definition] = field(default_factory=dict)  # by qualname
    bindings: dict[str, Binding] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)  # modules ``from M import *`` reads
    all: list[str] | None = None  # a static ``__all__``
    all_from: list[str] = field(default_factory=list)  # ``X.__all__`` added to it
    deprecated: str | None = None
    # ``from M import a as a`` (the typing convention for "re-exported on purpose")
    explicit: set[str] = field(default_factory=set)
    # Names the module's own code resolves but that are no attributes of it: a stub's
    # imports and type variables (``from torch.fx.node import Node as FxNode`` in
    # ``torch/_C/__init__.pyi``), and names it ``del``s once used (``del _LegacyStorage``
    # after the classes deriving from it)
    hidden: set[str] = field(default_factory=set)
    constants: dict[str, str] = field(default_factory=dict)  # module-level strings, by name
    # What a module-level ``__getattr__`` (PEP 562) may serve: the names its text spells as
    # strings (``torch.utils.mkldnn`` builds ``MkldnnLinear`` on first use in 2.14)
    lazy: set[str] = field(default_factory=set)

    def members(self, qualname: str) -> list[str]:
        """The names of a class's own members (methods, properties, data), by the index
        made once per module (a look-up per class was a pass over every definition)."""
        if self._members is None:
            self._members = {}
            for name in self.definitions:
                owner, dot, member = name.rpartition(".")
                if dot:
                    self._members.setdefault(owner, []).append(member)
        return self._members.get(qualname, [])

    _members: dict[str, list[str]] | None = field(default=None, repr=False, compare=False)
