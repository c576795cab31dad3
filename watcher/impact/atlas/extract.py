"""What one module's source says, read with ``ast``: the names its top level binds (its own
definitions, imports, aliases), ``__all__``, star imports, and every function, class and
method with its parameters and deprecation markers. Pure: source text in, ``ModuleFacts`` out.

Both branches of a top-level ``if``/``try`` count (what an optional dependency or another
build would define is API too); under ``if TYPE_CHECKING:`` only star imports do: torch makes
``torch.cholesky`` visible to type checkers that way, and it is a name users write.
"""

from __future__ import annotations

import ast
import bisect

from watcher.impact.atlas.classes import attributes, constructor
from watcher.impact.atlas.facts import Binding, Definition, ModuleFacts
from watcher.impact.atlas.markers import (
    body_markers,
    decorator_marker,
    says_deprecated,
    string_constants,
    wrapper_call,
)
from watcher.impact.atlas.model import CLASS, DATA, FUNCTION, METHOD, PROPERTY, Param
from watcher.impact.atlas.signature import FunctionNode, merge_overloads, params_of
from watcher.impact.atlas.statements import (
    attribute,
    blocks,
    flat,
    only_raises,
    runs_as_script,
    strings,
    typing_only,
    unsubscripted,
)
from watcher.impact.code import dotted

# ``ModuleFacts`` is read from here by the build (``build.py``) as before it had a module.
__all__ = ["Binding", "Definition", "ModuleFacts", "read_module"]

_WARNS = ("FutureWarning", "DeprecationWarning")
_NONE: frozenset[str] = frozenset()
_CONSTRUCTORS = ("__init__", "__new__")  # read whatever their names: calls of the class


def read_module(name: str, is_package: bool, py: str | None, pyi: str | None) -> ModuleFacts:
    """The facts of a module from its source and its stub: the stub is the authority for
    names and signatures, the source adds what the stub leaves out and the warnings it raises."""
    facts = ModuleFacts(name, is_package)
    if py is not None:
        _read(facts, py, stub=False)
    if pyi is not None:
        stub = ModuleFacts(name, is_package)
        _read(stub, pyi, stub=True)
        _overlay(facts, stub)
    return facts


def _overlay(facts: ModuleFacts, stub: ModuleFacts) -> None:
    for qualname, definition in stub.definitions.items():
        source = facts.definitions.get(qualname)
        if source is not None:
            definition.deprecated = definition.deprecated if definition.deprecated is not None \
                else source.deprecated
            definition.deprecated_params = {**source.deprecated_params,
                                            **definition.deprecated_params}
            definition.raises = source.raises  # the stub's body is ``...``
        facts.definitions[qualname] = definition
    # What the source binds is an attribute whatever its stub imports.
    facts.hidden |= stub.hidden - set(facts.bindings)
    facts.bindings.update(stub.bindings)
    facts.explicit |= stub.explicit
    facts.constants = {**stub.constants, **facts.constants}
    facts.stars = list(dict.fromkeys([*facts.stars, *stub.stars]))
    if stub.all is not None:
        facts.all, facts.all_from = stub.all, stub.all_from


def _read(facts: ModuleFacts, text: str, *, stub: bool) -> None:
    try:
        tree = ast.parse(text, type_comments=False)
    except (SyntaxError, ValueError):
        return  # a template or a file for another Python: the module holds nothing readable
    # A message may be a constant defined anywhere at the top level.
    facts.constants.update(string_constants(tree.body))
    reader = _Reader(facts, _warning_lines(text), stub)
    reader.mentions_deprecation = "deprecat" in text
    reader.statements(tree.body)
    facts.stars = list(dict.fromkeys(facts.stars))  # a module star-imported twice is read once
    if facts.bindings.get("__getattr__") == ("def", "__getattr__"):
        facts.lazy |= {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
                       and isinstance(node.value, str) and node.value.isidentifier()
                       and not node.value.startswith("_")}


def _warning_lines(text: str) -> list[int]:
    """The lines (1-based, ascending) that name a deprecation category: only the bodies
    spanning one are walked for warnings, which spares walking almost every body."""
    if not any(word in text for word in _WARNS):
        return []
    return [number for number, line in enumerate(text.split("\n"), 1)
            if "FutureWarning" in line or "DeprecationWarning" in line]


class _Reader:
    def __init__(self, facts: ModuleFacts, warning_lines: list[int], stub: bool) -> None:
        self.facts = facts
        self.warning_lines = warning_lines
        self.stub = stub
        self.mentions_deprecation = False  # whether the module's text says "deprecat"
        self.checking = False  # inside ``if TYPE_CHECKING:``
        self.overloads: dict[str, list[tuple[Param, ...]]] = {}

    def warns(self, node: ast.stmt) -> bool:
        """Whether a line of ``node`` names a deprecation category."""
        lines = self.warning_lines
        at = bisect.bisect_left(lines, node.lineno)
        return at < len(lines) and lines[at] <= (node.end_lineno or node.lineno)

    def statements(self, body: list[ast.stmt]) -> None:
        for node in body:
            self.statement(node)
        if self.warning_lines and self.facts.deprecated is None:
            top = [node for node in body if self.warns(node) and not isinstance(
                node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
            self.facts.deprecated = body_markers(top, constants=self.facts.constants).deprecated

    def statement(self, node: ast.stmt) -> None:
        facts = self.facts
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.function(node, node.name, owner=None)
            facts.bindings[node.name] = ("def", node.name)
        elif isinstance(node, ast.ClassDef):
            self.cls(node)
            facts.bindings[node.name] = ("def", node.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    facts.bindings[alias.asname] = ("module", alias.name)
                else:
                    head = alias.name.partition(".")[0]
                    facts.bindings[head] = ("module", head)
                self.hide(alias.asname or alias.name.partition(".")[0], alias)
        elif isinstance(node, ast.Delete):
            facts.hidden.update(target.id for target in node.targets
                                if isinstance(target, ast.Name) and target.id in facts.bindings)
        elif isinstance(node, ast.ImportFrom):
            self.import_from(node)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            self.assign(node)
        elif isinstance(node, ast.If) and runs_as_script(node.test):
            for child in node.orelse:  # ``if __name__ == "__main__":`` never runs on import
                self.statement(child)
        elif isinstance(node, ast.If) and dotted(node.test).endswith("TYPE_CHECKING"):
            self.checking, was = True, self.checking
            for child in node.body:
                self.statement(child)
            self.checking = was
            for child in node.orelse:
                self.statement(child)
        elif isinstance(node, ast.If | ast.Try | ast.TryStar | ast.With):
            for block in blocks(node):
                for child in block:
                    self.statement(child)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self.all_call(node.value)

    def import_from(self, node: ast.ImportFrom) -> None:
        module = _absolute(self.facts, node.module, node.level)
        for alias in node.names:
            if alias.name == "*":
                self.facts.stars.append(module)  # made unique once read (``_read``)
                continue
            bound = alias.asname or alias.name
            self.facts.bindings[bound] = ("from", module, alias.name)
            if alias.asname == alias.name:
                self.facts.explicit.add(bound)
            self.hide(bound, alias)

    def hide(self, bound: str, alias: ast.alias) -> None:
        """A stub's import is no attribute of the module unless re-exported ``as`` itself
        (PEP 484), nor one under ``if TYPE_CHECKING:`` (for annotations); elsewhere every
        import is. (A star import there stays: torch's mirrors the names a loop binds.)"""
        if self.checking or (self.stub and alias.asname != alias.name.rpartition(".")[2]):
            self.facts.hidden.add(bound)
        else:
            self.facts.hidden.discard(bound)

    def assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            if target.id == "__all__":
                self.all_value(node.value, add=isinstance(node, ast.AugAssign))
            elif isinstance(node, ast.AugAssign) or (node.value is None and not self.stub):
                continue  # a bare annotation binds nothing at run time (a stub's declares)
            elif node.value is not None and dotted(node.value):
                self.facts.bindings[target.id] = ("alias", dotted(node.value))
            else:
                self.facts.definitions[target.id] = Definition(DATA, wrapper=wrapper_call(
                    node.value, self.facts.constants) if isinstance(node.value, ast.Call)
                    and dotted(node.value.func) else None)
                self.facts.bindings[target.id] = ("def", target.id)
            if self.stub and typing_only(node):
                self.facts.hidden.add(target.id)

    def all_value(self, value: ast.expr | None, *, add: bool) -> None:
        names: list[str] = []
        sources: list[str] = []
        if value is None or not strings(value, names, sources):
            if not add:
                self.facts.all = None  # computed: read the module's names instead
            return
        self.facts.all = [*(self.facts.all or []), *names] if add else names
        self.facts.all_from = [*self.facts.all_from, *sources] if add else sources

    def all_call(self, call: ast.Call) -> None:
        """``__all__.append("x")`` / ``__all__.extend([...])``."""
        target = dotted(call.func)
        if target not in ("__all__.append", "__all__.extend") or self.facts.all is None:
            return
        if target.endswith("append"):
            if call.args and isinstance(call.args[0], ast.Constant) \
                    and isinstance(call.args[0].value, str):
                self.facts.all.append(call.args[0].value)
        elif call.args:
            self.all_value(call.args[0], add=True)

    def function(self, node: FunctionNode, qualname: str, owner: str | None) -> None:
        decorators = {dotted(d.func if isinstance(d, ast.Call) else d)
                      for d in node.decorator_list} if node.decorator_list else _NONE
        if any(name.endswith((".setter", ".deleter")) for name in decorators):
            return
        # ``__new__`` takes the class first though it is a static method (so it may say so).
        bound = owner is not None and ("staticmethod" not in decorators or node.name == "__new__")
        params = params_of(node, bound=bound)
        if decorators & {"overload", "typing.overload", "typing_extensions.overload"}:
            self.overloads.setdefault(qualname, []).append(params)
        variants = self.overloads.get(qualname)
        if variants and variants[-1] is not params:
            variants = None  # the implementation after its overloads: what a call meets
            del self.overloads[qualname]
        kind = FUNCTION if owner is None else METHOD
        if owner is not None and decorators & {"property", "functools.cached_property",
                                               "cached_property"}:
            kind, params = PROPERTY, ()
        constants = self.facts.constants
        deprecated = decorator_marker(node.decorator_list, constants)
        found = None
        if self.warns(node):  # a message may be held in a local (``msg = "..."``) too
            local = {**constants, **string_constants(node.body, constants)}
            found = body_markers(node.body, frozenset(p.name for p in params), local)
        self.facts.definitions[qualname] = Definition(
            kind, merge_overloads(variants) if variants and kind != PROPERTY else params,
            deprecated if deprecated is not None else found.deprecated if found else None,
            found.params if found else {}, raises=only_raises(node, constants),
            deprecates=self.mentions_deprecation and owner is None and says_deprecated(node))

    def cls(self, node: ast.ClassDef) -> None:
        bases = tuple(base for base in (dotted(unsubscripted(b)) for b in node.bases) if base)
        body = flat(node.body)
        definitions = self.facts.definitions
        definitions[node.name] = Definition(
            CLASS, None, decorator_marker(node.decorator_list, self.facts.constants), {}, bases,
            generated=constructor(node, body))
        for child in body:
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and \
                    (not child.name.startswith("_") or child.name in _CONSTRUCTORS):
                self.function(child, f"{node.name}.{child.name}", owner=node.name)
        for name, value in attributes(body):
            qualname = f"{node.name}.{name}"
            if qualname not in definitions:
                definitions[qualname] = attribute(definitions, value)


def _absolute(facts: ModuleFacts, module: str | None, level: int) -> str:
    if not level:
        return module or ""
    parts = facts.name.split(".")
    if not facts.is_package:
        parts.pop()
    anchor = parts[: len(parts) - level + 1]
    return ".".join([*anchor, *([module] if module else [])])
