"""The one walk over a parsed Python file: the names its imports bind, and every reference
whose root is a plain name (``F.relu``, ``load``, ``obj.print_lr()``), left unresolved, with how
it is referenced (a call, an import, an annotation, an ``isinstance`` argument, a decorator, a
base class, an assignment target, or a plain read) and the names the file sets (attributes it
assigns, keywords it passes: the state a codebase can put an object in).

Iterative, so deep nesting costs no recursion; each attribute chain is taken whole from its
outermost node and its inner nodes are not visited again, which keeps one reference per
chain (``torch.nn.functional.relu``, not each of its prefixes).
"""

from __future__ import annotations

import ast
from typing import Any

from watcher.impact.code.guards import (
    FLOOR,
    Test,
    called_in,
    catches_type_error,
    caught_names,
    dead_branch,
    exits,
    expected_names,
    probed_names,
    raised_type,
    retried_calls,
    runs_below,
    tried_keywords,
)
from watcher.impact.code.nodes import FIELDS, fields_of, push_children
from watcher.impact.code.shapes import (
    chain_of,
    literal_keys,
    methods_by_name,
    returned_keys,
    root_name,
    string_keys,
    top_level_imports,
)
from watcher.impact.code.syntax import dotted
from watcher.impact.code.versions import module_flags

__all__ = ["CONFIG_PATCH", "FIRST", "PARAMETER", "PARTIAL", "Function", "Raw", "Ref", "Walker",
           "enclosing"]

CONFIG_PATCH = "config"
PARTIAL = "partial"
PARAMETER = "parameter"  # a keyword's value is (PARAMETER, name) of a None-default parameter

# (line, root, attributes, call, keywords, passes **kwargs, extra, ref, positional arguments,
# passes *args, the constant values of keywords as ((name, value), ...)). ``root`` "" is an
# import, whose full name is ``attributes[0]``. ``call``: True for a call, False for a read,
# None for an assignment target. ``extra``: ("partial", (root, attributes) of the first
# argument or None) or ("config", the string keys of a ``patch({...})`` / ``patch("key",
# ...)``). ``ref``: how the reference is made when it is not a plain call or read (``Ref``),
# else "".
Raw = tuple[int, str, tuple[str, ...], bool | None, tuple[str, ...], bool, Any, str, int, bool,
            tuple[tuple[str, Any], ...]]

# How a use is referenced, besides a call or a read: an "import"; a type "annotation"; the
# class argument of ``isinstance``/``issubclass``; a "decorator" (applied bare, ``@x``, or
# called, ``@x(...)``); a class's "base"; an "assign"ment target; the function a "partial"
# binds (its call is read from the partial); a name "compared" (``f is torch.load``); a function
# "aliased" to a local name (``loader = torch.load``: read where the name is called or passed).
Ref = str
# The references that do not call the API where they are (a base is called when the subclass is
# constructed, an alias where the name is called: each judged there).
NOT_CALLING = frozenset({"import", "annotation", "isinstance", "base", "compared", "aliased"})
TYPE_TESTS = frozenset({"isinstance", "issubclass"})
CONSTANTS = (bool, int, float, str, type(None))
# The key of a call's first positional argument among its constant ``values`` (no keyword can
# be spelt so), and the longest string kept there: the string as written, or the constant head
# of an f-string (``f"facebookresearch/{repo}"``: "facebookresearch/"), which every value it
# takes starts with (read only for prefixes, ``config/impact.toml`` ``[[exempted_by]]``).
FIRST = "#0"
FIRST_LIMIT = 200

DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def is_super_init(func: ast.expr) -> bool:
    """``super().__init__`` (or ``super(Cls, self).__init__``)."""
    return type(func) is ast.Attribute and func.attr == "__init__" and \
        type(func.value) is ast.Call and type(func.value.func) is ast.Name and \
        func.value.func.id == "super"


# A function of the file: (name, first line, last line, positional parameters, all of them).
Function = tuple[str, int, int, tuple[str, ...], frozenset[str]]


def enclosing(functions: list[Function], line: int) -> list[Function]:
    """The functions around ``line``, innermost first."""
    return sorted((function for function in functions if function[1] <= line <= function[2]),
                  key=lambda function: -function[1])


class Walker:
    """``aliases``: every name an import binds, anywhere in the file (first binding wins, so
    ``try: from torch.ao... except ImportError: from torch...`` keeps the first);
    ``exports``: those bound at module level; ``raws``: the references, in file order."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.aliases: dict[str, str] = {}
        self.exports: dict[str, str] = {}
        self.stars: list[str] = []  # modules star-imported at module level, in file order
        # Lines of the bodies of feature checks (``if "x" in signature(f).parameters:``), with
        # the names each asks about.
        self.probes: list[tuple[int, int, frozenset[str]]] = []
        # Lines of the branches that run only below a torch version (``else`` of ``if
        # TORCH_VERSION >= (2, 5):``), with that version.
        self.below: list[tuple[int, int, tuple[int, int]]] = []
        # The names (dotted, as written) a branch for releases older than any the analysis
        # reads refers to, with the release it runs below: their uses are not walked, but a
        # function called only from such branches runs only there (``code.callers``).
        self.unreached: list[tuple[str, tuple[int, int]]] = []
        # The module-level names assigned a version test (``versions.module_flags``)
        self.flags: dict[str, Test] = {}
        # Lines of ``except TypeError:`` handlers, with the keywords the ``try`` tried each
        # function with (``guards.tried_keywords``).
        self.fallbacks: list[tuple[int, int, dict[str, frozenset[str]]]] = []
        # The lines of each ``try`` body, with the exception types its handlers catch, the
        # functions they retry (``guards.retried_calls``) and the functions it calls.
        self.catches: list[tuple[int, int, frozenset[str], frozenset[str], frozenset[str]]] = []
        # (line, type's last name) of each ``raise`` (``raisers``)
        self.raised: list[tuple[int, str]] = []
        self._looped: set[int] = set()  # the ``try`` statements directly in a loop's body
        # (line, function's last name) of the calls passing a tuple that ends in a dict
        self.final_dicts: set[tuple[int, str]] = set()
        # (line, function's last name) -> the positions of the dicts a call passes positionally
        # (a dict where a tuple of arguments is taken is read as that tuple's final dict)
        self.dict_arguments: dict[tuple[int, str], tuple[int, ...]] = {}
        self.raws: list[Raw] = []
        self.sets: set[str] = set()  # attribute names assigned, keyword names passed
        self._top: set[int] = set()
        self._refs: dict[int, Ref] = {}  # id of an expression node -> how it is referenced
        # The names of ``**kwargs`` parameters (a call passing one on forwards its caller's
        # options), and the keys of dicts the file builds literally (``params = {"a": 1}``,
        # ``params["b"] = 2``): a call passing ``**params`` passes those keywords.
        self._forwarded: set[str] = set()
        # Each function taking ``**kwargs``: its lines, that parameter's name and the name it
        # is called by (an ``__init__``'s class's); and what each call spreads, by line (a
        # name, or None for any other expression): read by ``forwarded.mark_spread``.
        self.var_keywords: list[tuple[int, int, str, str]] = []
        self.spreads: dict[int, list[str | None]] = {}
        # The name each ``**`` expression starts from (``cfg`` of ``**cfg["sched"]``, None for
        # a call's result), by line: read by ``forwarded.mark_spread_local``.
        self.spread_roots: dict[int, list[str | None]] = {}
        self._callable_as: dict[int, str] = {}
        self._dicts: dict[str, set[str]] = {}
        # Parameters defaulting to a literal dict (whose keys ``_dicts`` holds, with those the
        # function assigns), and the lines of the calls spreading one: what a call of the
        # function gives it instead is asked of its callers (``forwarded.mark_spread_default``).
        self._dict_defaults: set[str] = set()
        self.spread_defaults: dict[int, str] = {}
        # Local names bound to an imported name (``loader = torch.load``, or one of two,
        # ``safe_load if s else torch.load``): name -> (the chains, first and last line of the
        # function binding it). A call of the name is a call of each, an attribute of it each
        # one's attribute; another read hands each on.
        self.local_functions: dict[str, tuple[tuple[tuple[str, tuple[str, ...]], ...], int,
                                              int]] = {}
        self._open: set[str] = set()  # of those, the ones updated from a dict of unknown keys
        # The module's own functions, and the keys of the dicts each returns (read when a call
        # of one is spread: ``**loader_kwargs(args)``).
        self._functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        # Parameters that default to None (a keyword passing one passes None unless the caller
        # gives a value), and every name the file assigns (one assigned is no longer only that).
        self.unset: set[str] = set()
        self.rebound: set[str] = set()
        # A branch's dict value -> the if's union, read (and dropped) when the walk reaches it.
        self._branch_keys: dict[int, set[str]] = {}
        self._returns: dict[str, set[str] | None] = {}
        # Every function, read by ``forwarded`` for the few uses passing a None-default
        # parameter on, and by ``madekeys`` for a key made from a parameter.
        self.functions: list[Function] = []
        # ``super().__init__(...)`` calls in a class's ``__init__`` -> the class's first base:
        # each is a call of that base's constructor with those arguments.
        self._super_inits: dict[int, tuple[str, tuple[str, ...]]] = {}

    def walk(self, tree: ast.Module) -> None:
        self._top = {id(node) for node in top_level_imports(tree.body)}
        self.flags = module_flags(tree)
        flags = self.flags or None
        self._functions = {node.name: node for node in tree.body
                           if type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef}
        self._functions.update(methods_by_name(tree.body))
        stack: list[Any] = [tree]
        pop, push, extend = stack.pop, stack.append, stack.extend
        record, refs, name_kind, load = self.raws.append, self._refs, ast.Name, ast.Load
        constant, attribute, call, expression = ast.Constant, ast.Attribute, ast.Call, ast.Expr
        assign, annotated, imports = ast.Assign, ast.AnnAssign, (ast.Import, ast.ImportFrom)
        if_kind, if_expression, try_kind, try_star = ast.If, ast.IfExp, ast.Try, ast.TryStar
        with_kind, async_with = ast.With, ast.AsyncWith
        loop, async_loop, while_loop = ast.For, ast.AsyncFor, ast.While
        compare, raise_kind = ast.Compare, ast.Raise
        known_fields = FIELDS.get
        # Each node type is tested once per node, the commonest first: this loop runs for
        # every node of every file, most of a scan's time after ``ast.parse``.
        while stack:
            node = pop()
            kind = type(node)
            if kind is name_kind:
                # Inline: most names are locals read, a reference of their own each (resolved,
                # or dropped, once every import is known); a bare name assigned is none.
                if type(node.ctx) is load:
                    record((node.lineno, node.id, (), False, (), False, None,
                            refs.get(id(node), ""), 0, False, ()))
                    if self.local_functions:  # handed on: the calls made through it unseen
                        for root, attrs in self.aliased(node.id, node.lineno):
                            record((node.lineno, root, attrs, False, (), False, None,
                                    refs.get(id(node), ""), 0, False, ()))
            elif kind is constant:
                continue  # a leaf, and the most common node after names
            elif kind is attribute:
                base = self.reference(node, None, (), False, None)
                if base is not None:
                    push(base)
            elif kind is call:
                extend(reversed(self.call(node)))
            elif kind is expression:
                push(node.value)
            else:
                if (kind is if_kind or kind is if_expression) and (
                        dead := dead_branch(node.test, flags)) is not None:
                    # A branch for torch releases older than any the analysis reads: its
                    # uses never run there. The test and the live branch are walked.
                    live = node.orelse if dead == "body" else node.body
                    self.note_unreached(node.test, dead, node.body if dead == "body" else
                                        node.orelse)
                    if type(live) is list:
                        extend(reversed(live))
                    else:
                        push(live)
                    push(node.test)
                    continue
                fields = known_fields(kind)
                if fields is None:
                    fields = fields_of(kind)
                if kind is assign:
                    self.assignment(node.targets, node.value)
                elif kind in imports:
                    self.imports(node)
                    continue
                elif kind is try_kind or kind is try_star:
                    self.fallback(node)
                elif kind is with_kind or kind is async_with:
                    self.expectation(node)
                elif kind is loop or kind is async_loop or kind is while_loop:
                    self._looped.update(id(statement) for statement in node.body
                                        if type(statement) is try_kind or
                                        type(statement) is try_star)
                elif kind is if_kind:
                    self.probe(node)
                    self.bound(node)
                    if node.orelse:
                        self.branches(node)
                elif kind in DEFINITIONS or kind is annotated:
                    self.definition(node)
                elif kind is raise_kind:
                    self.raised.append((node.lineno, raised_type(node)))
                elif kind is compare:
                    # ``if loader is torch.load``: the name tested, not handed on or called
                    for operand in (node.left, *node.comparators):
                        if type(operand) is attribute or type(operand) is name_kind:
                            refs[id(operand)] = "compared"
                for field in fields:
                    value = getattr(node, field)
                    if type(value) is list:
                        if value:
                            extend(reversed(value))
                    elif value is not None:
                        push(value)

    def below_at(self, line: int) -> tuple[int, int] | None:
        """The release ``line`` runs only below (the tightest guard around it), or None."""
        versions = [version for start, end, version in self.below if start <= line <= end]
        return min(versions) if versions else None

    def note_unreached(self, test: ast.expr, dead: str, branch: Any) -> None:
        """The names a dead branch refers to, with the release it runs below (``runs_below``;
        one it cannot bound runs below the oldest release read)."""
        bounded = runs_below(test, self.flags)
        version = bounded[1] if bounded is not None and bounded[0] == dead else FLOOR
        for statement in branch if type(branch) is list else [branch]:
            for node in ast.walk(statement):
                if type(node) is ast.Name or type(node) is ast.Attribute:
                    name = dotted(node)
                    if name:
                        self.unreached.append((name, version))

    def definition(self, node: Any) -> None:
        """Notes how a function's, class's or annotated assignment's expressions are
        referenced: decorators, annotations, bases."""
        refs = self._refs
        for decorator in getattr(node, "decorator_list", ()):
            refs[id(decorator)] = "decorator"
        if type(node) is ast.ClassDef:
            for base in node.bases:
                refs[id(base)] = "base"
            if node.bases:
                self.super_inits(node)
            for method in node.body:  # its constructor is called by the class's name
                if type(method) is ast.FunctionDef and method.name == "__init__":
                    self._callable_as[id(method)] = node.name
            return
        if type(node) is ast.AnnAssign:
            self.mark(node.annotation, "annotation")
            if node.value is not None:
                self.assignment([node.target], node.value)
            return
        self.returns_early(node)
        arguments = node.args
        if arguments.kwarg is not None:
            self._forwarded.add(arguments.kwarg.arg)
            self.var_keywords.append((node.lineno, node.end_lineno or node.lineno,
                                      arguments.kwarg.arg,
                                      self._callable_as.pop(id(node), node.name)))
        positional = [*arguments.posonlyargs, *arguments.args]
        self.functions.append((node.name, node.lineno, node.end_lineno or node.lineno,
                               tuple(argument.arg for argument in positional),
                               frozenset(argument.arg for argument in (
                                   *positional, *arguments.kwonlyargs))))
        defaulted = positional[len(positional) - len(arguments.defaults):]
        for argument, default in (*zip(defaulted, arguments.defaults, strict=True),
                                  *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)):
            if type(default) is ast.Constant and default.value is None:
                self.unset.add(argument.arg)
            else:  # a parameter of that name with another default: which one is unknown
                self.rebound.add(argument.arg)
                keys = literal_keys(default) if type(default) is ast.Dict else None
                if keys is not None:  # ``params={"opset_version": 12}``, spread as ``**params``
                    self._dicts[argument.arg] = keys
                    self._dict_defaults.add(argument.arg)
        for argument in positional[:len(positional) - len(arguments.defaults)]:
            self.rebound.add(argument.arg)
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                         arguments.vararg, arguments.kwarg):
            if argument is not None and argument.annotation is not None:
                self.mark(argument.annotation, "annotation")
        if node.returns is not None:
            self.mark(node.returns, "annotation")

    def super_inits(self, node: ast.ClassDef) -> None:
        """Notes the ``super().__init__(...)`` calls of the class's own ``__init__``: in a
        class deriving first from ``Sampler``, ``super().__init__(data)`` constructs a
        ``Sampler`` with ``data``, as ``Sampler(data)`` would."""
        first = node.bases[0]
        # ``Sampler[int]``: the generic alias constructs the class itself
        base = chain_of(first.value if type(first) is ast.Subscript else first)
        if base is None:
            return
        for method in node.body:
            if type(method) is not ast.FunctionDef or method.name != "__init__":
                continue
            for inner in ast.walk(method):
                if type(inner) is ast.Call and is_super_init(inner.func):
                    self._super_inits[id(inner)] = base

    def assignment(self, targets: list[ast.expr], value: ast.expr) -> None:
        """Follows the keys of a dict built literally: ``d = {"a": 1}``, ``d = dict(a=1)``,
        ``d["b"] = 2``; any other assignment of the name makes its keys unknown again."""
        if len(targets) != 1:
            return
        target = targets[0]
        if type(target) is ast.Name:
            self.rebound.add(target.id)
            self.local_function(target.id, value)
            keys = self._branch_keys.pop(id(value), None)  # either branch's, as one
            if keys is None:
                keys = literal_keys(value, self.returns_of)
            self._open.discard(target.id)
            if keys is None:
                self._dicts.pop(target.id, None)
            else:
                self._dicts[target.id] = keys
        elif type(target) is ast.Subscript and type(target.value) is ast.Name:
            known = self._dicts.get(target.value.id)
            key = target.slice
            if known is not None and type(key) is ast.Constant and isinstance(key.value, str):
                known.add(key.value)
            elif known is not None:
                self._open.add(target.value.id)

    def local_function(self, name: str, value: ast.expr) -> None:
        """Notes ``name`` as bound to imported names when ``value`` names only those
        (``torch.load``, ``a if c else torch.load``, a module: ``F = torch.nn.functional``);
        forgets it on any other binding."""
        branches = [value.body, value.orelse] if type(value) is ast.IfExp else [value]
        chains = [chain_of(branch) for branch in branches]
        if not all(chain is not None and chain[0] in self.aliases for chain in chains):
            self.local_functions.pop(name, None)
            return
        line = value.lineno
        start, end = 0, 1 << 30  # the module's own statements: the whole file
        for function in reversed(self.functions):  # the innermost one visited holding it
            if function[1] <= line <= function[2]:
                start, end = function[1], function[2]
                break
        self.local_functions[name] = (tuple(chains), start, end)  # type: ignore[arg-type]
        for branch in branches:
            self.mark(branch, "aliased")  # judged where the name is called or handed on

    def aliased(self, name: str, line: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The imported names a local name read on ``line`` stands for, if any."""
        bound = self.local_functions.get(name)
        if bound is None or not bound[1] <= line <= bound[2]:
            return ()
        return bound[0]

    def probe(self, node: ast.If) -> None:
        names = probed_names(node.test)
        if names and node.body:
            end = node.body[-1].end_lineno or node.body[-1].lineno
            self.probes.append((node.body[0].lineno, end, names))

    def bound(self, node: ast.If) -> None:
        bounded = runs_below(node.test, self.flags)
        if bounded is None:
            return
        branch = node.body if bounded[0] == "body" else node.orelse
        if branch:
            end = branch[-1].end_lineno or branch[-1].lineno
            self.below.append((branch[0].lineno, end, bounded[1]))

    def returns_early(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """``if WITH_PT24: ... return new(f)`` then ``return old(f)``: the rest of the
        function runs only when the test fails, so below the release it tests. Read for the
        ``if``s of the function's own statements, which every later statement runs after."""
        body = function.body
        for position, statement in enumerate(body[:-1]):
            if type(statement) is not ast.If or statement.orelse or not exits(statement.body):
                continue
            bounded = runs_below(statement.test, self.flags)
            if bounded is not None and bounded[0] == "orelse":
                end = function.end_lineno or body[-1].lineno
                self.below.append((body[position + 1].lineno, end, bounded[1]))

    def expectation(self, node: ast.With | ast.AsyncWith) -> None:
        """``with pytest.raises(RuntimeError): torch.cat(...)``: the block's calls are expected
        to raise those types, read as a handler catching them (``catches``)."""
        expected = expected_names(node)
        if expected and node.body:
            end = node.body[-1].end_lineno or node.body[-1].lineno
            self.catches.append((node.body[0].lineno, end, expected, frozenset(),
                                 called_in(node.body)))

    def fallback(self, node: ast.Try | ast.TryStar) -> None:
        if node.body and node.handlers:
            end = node.body[-1].end_lineno or node.body[-1].lineno
            self.catches.append((node.body[0].lineno, end, caught_names(node.handlers),
                                 retried_calls(node, id(node) in self._looped),
                                 called_in(node.body)))
        handlers = [handler for handler in node.handlers
                    if handler.body and catches_type_error(handler.type)]
        tried = tried_keywords(node.body) if handlers else None
        if tried is None:
            return
        for handler in handlers:
            end = handler.body[-1].end_lineno or handler.body[-1].lineno
            self.fallbacks.append((handler.body[0].lineno, end, tried))

    def branches(self, node: ast.If) -> None:
        """``if c: d = {"a": 1} else: d = {}``: after the ``if``, ``d`` holds either branch's
        keys, so each branch's literal dict of ``d`` counts as their union (as a conditional
        expression's does)."""
        found: dict[str, list[tuple[ast.expr, set[str]]]] = {}
        for branch in (node.body, node.orelse):
            for statement in branch:
                if type(statement) is ast.Assign and len(statement.targets) == 1 \
                        and type(statement.targets[0]) is ast.Name:
                    keys = literal_keys(statement.value, self.returns_of)
                    if keys is not None:
                        found.setdefault(statement.targets[0].id, []).append(
                            (statement.value, keys))
        for assigned in found.values():
            if len(assigned) > 1:
                union = set().union(*(keys for _, keys in assigned))
                for value, _ in assigned:
                    self._branch_keys[id(value)] = set(union)  # each branch's own, updated apart

    def ends_in_dict(self, arguments: list[ast.expr], named: list[ast.keyword]) -> bool:
        """Whether a positional argument (or ``args=``) is a tuple written in the call whose last
        element is a dict: written there, a name the file binds to one, or a call of a module
        function that returns one (``sample_input = gen_random_batch()``)."""
        # Runs for every call: the arguments as they are, ``args=`` only where a keyword is.
        return any(self.dict_last(argument) for argument in arguments) or any(
            keyword.arg == "args" and self.dict_last(keyword.value) for keyword in named)

    def dict_last(self, argument: ast.expr) -> bool:
        if type(argument) is not ast.Tuple or not argument.elts:
            return False
        last = argument.elts[-1]
        return (type(last) is ast.Name and last.id in self._dicts) or \
            literal_keys(last, self.returns_of) is not None

    def double_starred(self, node: ast.Call) -> tuple[tuple[str, ...], bool]:
        """The keywords a call's ``**x`` pass when ``x`` is a dict the file builds literally;
        and whether some ``**`` may carry any option (a forwarded ``**kwargs``, a dict of
        unknown keys)."""
        keys: list[str] = []
        unknown = False
        for keyword in node.keywords:
            if keyword.arg is not None:
                continue
            value = keyword.value
            self.spreads.setdefault(node.lineno, []).append(
                value.id if type(value) is ast.Name else None)
            self.spread_roots.setdefault(node.lineno, []).append(root_name(value))
            if type(value) is ast.Name:
                known = self._dicts.get(value.id)
                if value.id in self._forwarded:
                    known = None
                elif known is not None and value.id in self._dict_defaults:
                    self.spread_defaults[node.lineno] = value.id
                unknown = unknown or value.id in self._open
            else:  # ``**({...} if c else {})``, ``**loader_kwargs(args)``
                known = literal_keys(value, self.returns_of)
            if known is not None:
                keys += sorted(known)
            else:
                unknown = True
        return tuple(keys), unknown

    def returns_of(self, name: str) -> set[str] | None:
        """The keys of the dicts a module function (or ``.method``) returns, when each return
        is literal."""
        if name not in self._returns:
            function = self._functions.get(name)
            self._returns[name] = None if function is None else returned_keys(function)
        return self._returns[name]

    def mark(self, tree: ast.expr, ref: Ref) -> None:
        """Notes ``ref`` for each name and attribute within ``tree`` (as ``ast.walk`` would
        find them, without its generator and deque per annotation)."""
        refs, pending = self._refs, [tree]
        while pending:
            node = pending.pop()
            kind = type(node)
            if kind is ast.Name:
                refs[id(node)] = ref
                continue
            if kind is ast.Attribute:
                refs[id(node)] = ref
            push_children(pending, node, kind)

    def reference(self, node: ast.expr, call: bool | None, keywords: tuple[str, ...],
                  kwargs: bool, extra: Any, ref: Ref = "", args: int = 0,
                  star: bool = False, values: tuple[tuple[str, Any], ...] = ()
                  ) -> ast.expr | None:
        """Records the chain ending at ``node``; returns the base left to visit, if any."""
        if call is None:  # a read, or (None) the target of an assignment or ``del``
            call = False if type(node.ctx) is ast.Load else None  # type: ignore[attr-defined]
            ref = self._refs.get(id(node), "") if call is False else "assign"
        attrs: list[str] = []
        while type(node) is ast.Attribute:
            attrs.append(node.attr)
            node = node.value
        if call is None and attrs:
            self.sets.add(attrs[0])
        if type(node) is ast.Name:
            if attrs or call is not None:
                attrs.reverse()
                self.raws.append((node.lineno, node.id, tuple(attrs), call, keywords, kwargs,
                                  extra, ref, args, star, values))
                if attrs and self.local_functions:  # ``F = torch.nn.functional``; ``F.relu``
                    for root, bound in self.aliased(node.id, node.lineno):
                        self.raws.append((node.lineno, root, (*bound, *attrs), call, keywords,
                                          kwargs, extra, ref, args, star, values))
            return None
        if attrs and call is not None:  # a method of a computed object: f(x).new_tensor(...)
            self.raws.append((node.lineno, "?", (attrs[0],), call, keywords, kwargs, None, ref,
                              args, star, values))
        return node

    def call(self, node: ast.Call) -> list[Any]:
        """Records the callee with its keywords; returns the nodes left to visit."""
        func, arguments, named = node.func, node.args, node.keywords
        rest: list[Any] = [*arguments, *(keyword.value for keyword in named)] if named \
            else arguments  # most calls pass no keyword: their arguments as they are
        if type(func) is not ast.Attribute and type(func) is not ast.Name:
            return [func, *rest]
        keywords: tuple[str, ...] = ()
        values: tuple[tuple[str, Any], ...] = ()
        kwargs = False
        if named:
            keywords = tuple(keyword.arg for keyword in named if keyword.arg is not None)
            if len(keywords) != len(named):
                spread, kwargs = self.double_starred(node)
                keywords += spread
            values = tuple((keyword.arg, keyword.value.value) for keyword in named
                           if keyword.arg is not None and type(keyword.value) is ast.Constant
                           and isinstance(keyword.value.value, CONSTANTS))
            if self.unset:  # ``opset_version=opset_version``, a parameter defaulting to None
                values += tuple((keyword.arg, (PARAMETER, keyword.value.id))
                                for keyword in named
                                if keyword.arg is not None and type(keyword.value) is ast.Name
                                and keyword.value.id in self.unset)
            self.sets.update(keywords)
        last = func.attr if isinstance(func, ast.Attribute) else func.id
        extra: Any = None
        if last == "partial" and node.args:
            extra = (PARTIAL, chain_of(node.args[0]))
            self.mark(node.args[0], "partial")
        elif last == "patch":
            extra = (CONFIG_PATCH, string_keys(node.args[0]) if node.args else ())
        elif last in TYPE_TESTS and type(func) is ast.Name and len(node.args) == 2:
            self.mark(node.args[1], "isinstance")
        if self.ends_in_dict(arguments, named):
            self.final_dicts.add((node.lineno, last))
        dicts = [position for position, argument in enumerate(arguments)
                 if type(argument) is ast.Dict or (type(argument) is ast.Name and
                                                   argument.id in self._dicts)]
        if dicts:
            self.dict_arguments[(node.lineno, last)] = tuple(dicts)
        positional = len(arguments)
        for argument in arguments:
            if type(argument) is ast.Starred:
                positional -= 1
        star = positional != len(arguments)
        written = string_head(arguments[0]) if arguments else None
        if written is not None and len(written) <= FIRST_LIMIT:
            # The first argument as written, when a string (``torch.hub.load("pytorch/vision",
            # ...)``): some changes depend on it (``config/impact.toml`` ``[[exempted_by]]``).
            values += ((FIRST, written),)
        if last == "update" and type(func) is ast.Attribute and type(func.value) is ast.Name \
                and func.value.id in self._dicts:  # d.update(b=2) adds keys; d.update(x): more
            self._dicts[func.value.id].update(keywords)
            # d.update({"a": 1}) or d.update(x) of a dict the file builds literally: its keys
            added = [literal_keys(argument, self.returns_of) if type(argument) is not ast.Name
                     else self._dicts.get(argument.id) for argument in node.args]
            if kwargs or any(keys is None or (type(argument) is ast.Name and argument.id in
                                              self._open)
                             for keys, argument in zip(added, node.args, strict=True)):
                self._open.add(func.value.id)
            else:
                for keys in added:
                    self._dicts[func.value.id].update(keys or ())
        if last == "__init__" and self._super_inits:
            constructed = self._super_inits.get(id(node))
            if constructed is not None:
                self.raws.append((node.lineno, constructed[0], constructed[1], True, keywords,
                                  kwargs, extra, "", positional, star, values))
                return rest
        if type(func) is ast.Name and self.local_functions:
            for root, attrs in self.aliased(func.id, node.lineno):
                self.raws.append((node.lineno, root, attrs, True, keywords, kwargs, extra,
                                  self._refs.get(id(node), ""), positional, star, values))
        base = self.reference(func, True, keywords, kwargs, extra,
                              self._refs.get(id(node), ""), positional, star, values)
        return rest if base is None else [base, *rest]

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        top = id(node) in self._top
        line = node.lineno
        if type(node) is ast.Import:
            for alias in node.names:
                bound = alias.asname or alias.name.partition(".")[0]
                self.bind(bound, alias.name if alias.asname else bound, top)
                self.raws.append((line, "", (alias.name,), False, (), False, None, "import",
                                  0, False, ()))
            return
        module = self.absolute(node)  # type: ignore[arg-type]
        if module is None:
            return
        for alias in node.names:
            if alias.name == "*":  # binds names this file cannot know (``starred``)
                if top:
                    self.stars.append(module)
                self.raws.append((line, "", (module,), False, (), False, None, "import", 0,
                                  False, ()))
                continue
            target = f"{module}.{alias.name}"
            self.bind(alias.asname or alias.name, target, top)
            self.raws.append((line, "", (target,), False, (), False, None, "import", 0, False,
                              ()))

    def bind(self, name: str, target: str, top: bool) -> None:
        self.aliases.setdefault(name, target)
        if top:
            self.exports.setdefault(name, target)

    def absolute(self, node: ast.ImportFrom) -> str | None:
        """The module an ``from X import`` names; relative ones from the file's package (None
        when they climb above the codebase root)."""
        if not node.level:
            return node.module
        parts = self.package.split(".") if self.package else []
        if node.level - 1 > len(parts):
            return None
        base = parts[:len(parts) - (node.level - 1)]
        if node.module:
            base.append(node.module)
        return ".".join(base) or None


def string_head(node: ast.expr) -> str | None:
    """A string constant, or the constant text an f-string starts with (``f"owner/{repo}"``:
    "owner/"); None for anything else."""
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value
    if type(node) is ast.JoinedStr and node.values and type(node.values[0]) is ast.Constant \
            and type(node.values[0].value) is str:
        return node.values[0].value
    return None
