"""From the facts of each module to the atlas: every public name followed through imports,
aliases and star imports to where it is defined, class bases resolved the same way, and only
what a public name leads to kept (with the bases and members of the classes it leads to).

A private module (``torch._tensor``) is read only when a public name leads into it; its
definitions are public API exactly where a public module re-exports them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from watcher.impact.atlas.facts import Definition, ModuleFacts
from watcher.impact.atlas.model import (
    CLASS,
    DATA,
    METHOD,
    MODULE,
    PROPERTY,
    Api,
    Atlas,
)
from watcher.impact.atlas.synthesized import deprecated_wrapper, generated, imported_text
from watcher.impact.atlas.wheel import is_public

# What a name stands for: ("api", canonical) defined in the package, ("module", name) a module
# of the package, or None (outside the package: builtins, typing, numpy...).
Target = tuple[str, str] | None
_DEPTH = 40  # alias chains longer than this are circular
_UNREAD = object()


@dataclass
class Linker:
    """Resolves names across the modules of one package; ``read(name)`` gives a module's
    facts (None when the package has no such module), read once and kept."""

    package: str
    modules: set[str]
    read: Callable[[str], ModuleFacts | None]
    _facts: dict[str, ModuleFacts | None] = field(default_factory=dict)
    _exported: dict[str, dict[str, Target]] = field(default_factory=dict)
    _starred: dict[str, dict[str, Target]] = field(default_factory=dict)
    _open: set[str] = field(default_factory=set)  # modules whose star names are being read

    def facts(self, module: str) -> ModuleFacts | None:
        found = self._facts.get(module, _UNREAD)
        if found is _UNREAD:
            found = self._facts[module] = self.read(module) if module in self.modules else None
        return found  # type: ignore[return-value]

    def lookup(self, module: str, name: str, depth: int = 0, *, outside: bool = False) -> Target:
        """What ``module.name`` is; ``outside``: as another module sees it (a stub's own
        imports are not its attributes)."""
        if depth > _DEPTH:
            return None
        facts = self.facts(module)
        if facts is None:
            return None
        binding = facts.bindings.get(name)
        if binding is not None and not (outside and name in facts.hidden):
            return self._bound(facts, name, binding, depth)
        if facts.stars:
            found = self.starred(facts, depth + 1).get(name)
            if found is not None:
                return found
        child = f"{module}.{name}"
        return ("module", child) if child in self.modules else None

    def _bound(self, facts: ModuleFacts, name: str, binding: tuple[str, ...],
               depth: int) -> Target:
        how = binding[0]
        if how == "def":
            qualname = binding[1]
            return ("api", f"{facts.name}.{qualname}") if qualname in facts.definitions else None
        if how == "module":
            return ("module", binding[1]) if binding[1] in self.modules else None
        if how == "from":
            module, imported = binding[1], binding[2]
            child = f"{module}.{imported}"
            if module == facts.name and imported == name:
                # ``from . import x`` of a module's own name: its submodule, if any
                return ("module", child) if child in self.modules else None
            # What the package binds wins over its submodule of that name, as at run time
            # (``torch.cond`` is the function ``torch._higher_order_ops`` binds).
            found = self.lookup(module, imported, depth + 1, outside=True)
            return found if found is not None or child not in self.modules else ("module", child)
        found, head = self._follow(facts.name, binding[1], depth + 1)
        if found is None and head is not None:
            # An attribute of something of the package no reading follows (``quantized_lstm
            # = ops.aten.quantized_lstm``): still a name the module has, as data.
            facts.definitions.setdefault(name, Definition(DATA))
            return ("api", f"{facts.name}.{name}")
        return found

    def dotted(self, module: str, expression: str, depth: int = 0) -> Target:
        """What ``a.b.c`` written in ``module`` is."""
        return self._follow(module, expression, depth)[0]

    def _follow(self, module: str, expression: str, depth: int) -> tuple[Target, Target]:
        """What ``a.b.c`` is, and what ``a`` is (each looked up once: looking the head up
        again for an alias that leads nowhere doubled the work at every link of a chain)."""
        first, *rest = expression.split(".")
        head = target = self.lookup(module, first, depth)
        for part in rest:
            if target is None:
                break
            if target[0] == "module":
                target = self.lookup(target[1], part, depth + 1, outside=True)
            else:
                target = self.member(target[1], part)  # ``_ComputationType.FORWARD``
        return target, head

    def split(self, canonical: str) -> tuple[str, str]:
        """``torch.optim.lr_scheduler.StepLR.step`` → (the module, ``StepLR.step``)."""
        head, _, tail = canonical.rpartition(".")
        while head and head not in self.modules:
            head, _, more = head.rpartition(".")
            tail = f"{more}.{tail}"
        return head, tail

    def definition(self, canonical: str) -> Definition | None:
        """What the package defines under a canonical name, if anything."""
        module, qualname = self.split(canonical)
        facts = self.facts(module) if module else None
        return facts.definitions.get(qualname) if facts is not None else None

    def member(self, canonical: str, name: str) -> Target:
        """A class's own member (a method, a property, an enum's member), None for any other
        attribute."""
        found = self.definition(f"{canonical}.{name}")
        return ("api", f"{canonical}.{name}") if found is not None else None

    def star_names(self, module: str, depth: int = 0) -> dict[str, Target]:
        """What ``from module import *`` binds: ``__all__``, else every public name."""
        if module in self._exported:
            return self._exported[module]
        self._exported[module] = {}  # a circle of star imports ends here
        facts = self.facts(module)
        if facts is None:
            return {}
        self._open.add(module)
        try:
            listed = self.all_names(facts, depth)
            names = dict.fromkeys(listed if listed is not None else (
                name for name in facts.bindings
                if not name.startswith("_") and name not in facts.hidden))
            if listed is None:
                for star in facts.stars:
                    names.update(dict.fromkeys(self.star_names(star, depth + 1)))
            found = {name: self.lookup(module, name, depth + 1) for name in names}
        finally:
            self._open.discard(module)
        self._exported[module] = found
        return found

    def starred(self, facts: ModuleFacts, depth: int) -> dict[str, Target]:
        """What a module's star imports bind, merged once (the last import of a name wins,
        as at run time): a look-up is then one dict access, not one per star import, which
        made linking a package of N star-imported modules grow as N squared."""
        found = self._starred.get(facts.name)
        if found is not None:
            return found
        found = {}
        for star in facts.stars:
            found.update((name, target) for name, target in self.star_names(star, depth).items()
                         if target is not None)
        if not self._open.intersection(facts.stars):
            self._starred[facts.name] = found  # complete: no star import of it is half-read
        return found

    def all_names(self, facts: ModuleFacts, depth: int) -> list[str] | None:
        if facts.all is None:
            return None
        names = list(facts.all)
        for source in facts.all_from:
            target = self.dotted(facts.name, source, depth + 1)
            if target is not None and target[0] == "module":
                names.extend(self.star_names(target[1], depth + 1))
        return names

    def public_names(self, module: str) -> dict[str, Target]:
        """The names users write on a public module: its ``__all__``, its own public
        definitions, what it star-imports, and what else it imports from the package when
        it is a package's ``__init__`` or says ``import x as x`` (elsewhere an import is the
        module's own business: ``torch.nn.modules.linear.Module`` is not an API)."""
        facts = self.facts(module)
        if facts is None:
            return {}
        listed = self.all_names(facts, 0) or []
        names = dict.fromkeys(listed)
        for name, binding in facts.bindings.items():
            if name.startswith("_") or name in facts.hidden:
                continue
            if binding[0] == "def" or facts.is_package or name in facts.explicit:
                names[name] = None
        for star in facts.stars:  # star imports bind attributes, whatever ``__all__`` says
            names.update(dict.fromkeys(self.star_names(star)))
        # What a star import of this module found already is not looked up again.
        exported = self._exported.get(module, {}) if module not in self._open else {}
        return {name: exported[name] if name in exported else self.lookup(module, name)
                for name in names}


def link(package: str, version: str, linker: Linker) -> Atlas:
    """The atlas of the package's public modules."""
    names: dict[str, str] = {}
    bound: dict[str, tuple[str, ...]] = {}
    public = sorted(module for module in linker.modules if is_public(module))
    for module in public:
        facts = linker.facts(module)
        if facts is None:
            continue
        # A package's binding of the name wins over its public submodule's own (``from
        # .fuse_modules import fuse_modules`` in torch.quantization: the function, as at run
        # time); the package is read first, its submodules after it.
        names.setdefault(module, module)
        for name, target in linker.public_names(module).items():
            if target is None or name.startswith("_"):
                continue  # outside the package, or private even where ``__all__`` lists it
            kind, canonical = target
            if kind == "module" and canonical != f"{module}.{name}":
                continue  # ``import os``, ``from torch import nn`` elsewhere: not an API here
            names[f"{module}.{name}"] = canonical
        kept = tuple(sorted({name for name in facts.bindings if not name.startswith("_")
                             and name not in facts.hidden and f"{module}.{name}" not in names
                             and (linker.lookup(module, name) or ("",))[0] == "api"}
                            | {name for name in facts.lazy if f"{module}.{name}" not in names}))
        if kept:
            bound[module] = kept
    return Atlas(package, version, _kept(linker, names), names, bound=bound)


def _kept(linker: Linker, names: dict[str, str]) -> dict[str, Api]:
    """The APIs public names lead to, and the bases and members of the classes among them."""
    apis: dict[str, Api] = {}
    pending = sorted(set(names.values()))
    while pending:
        canonical = pending.pop()
        if canonical in apis:
            continue
        if canonical in linker.modules:
            facts = linker.facts(canonical)
            apis[canonical] = Api(MODULE, deprecated=facts.deprecated if facts else None)
            continue
        module, qualname = linker.split(canonical)
        facts = linker.facts(module) if module else None
        definition = facts.definitions.get(qualname) if facts else None
        if facts is None or definition is None:
            continue
        bases: list[str] = []
        members: list[str] = []
        if definition.kind == CLASS:
            for base in definition.bases:
                target = linker.dotted(module, base)
                if target is not None and target[0] == "api":
                    bases.append(target[1])
                    pending.append(target[1])
                else:
                    bases.append(base)
            for member in facts.members(qualname):
                if facts.definitions[f"{qualname}.{member}"].kind in (METHOD, PROPERTY, DATA):
                    pending.append(f"{module}.{qualname}.{member}")
                    members.append(member)
            made = generated(linker, module, qualname, members)
            if made is not None:
                apis[f"{canonical}.{made[0]}"] = Api(METHOD, made[1])
                members.append(made[0])
        if module not in apis:
            pending.append(module)
        if definition.wrapper is not None:
            definition = deprecated_wrapper(linker, module, definition)
        text = functools.partial(imported_text, linker, module)
        apis[canonical] = Api(definition.kind, definition.params, text(definition.deprecated),
                              tuple(bases), tuple(sorted(
                                  (name, text(why) or "")
                                  for name, why in definition.deprecated_params.items())),
                              text(definition.raises), tuple(sorted(members)))
    return apis
