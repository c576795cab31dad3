"""Reads what one Python file uses: every reference rooted at an import, resolved to a dotted
name through the file's imports, with the keywords of each call.

One ``ast.parse`` and one walk. The walk collects imports and raw references side by side and
resolves the references at the end, so an import below its use (a function above a late
import) still resolves. Standard-library names are dropped: no release note of PyTorch changes
them, and they would be most of the index.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from bisect import bisect_right
from collections.abc import Iterator
from typing import Any, NamedTuple

from watcher.impact.code.aliasing import aliasing_rows
from watcher.impact.code.callers import LocalCalls, local_calls, unreached_names
from watcher.impact.code.forwarded import (
    mark_forwarded,
    mark_spread,
    mark_spread_default,
    mark_spread_local,
)
from watcher.impact.code.madekeys import made_key_rows
from watcher.impact.code.masks import MASKED_CALL, MaskReader
from watcher.impact.code.newsyntax import downgraded
from watcher.impact.code.pywalk import CONFIG_PATCH, DEFINITIONS, PARTIAL, Raw, Walker
from watcher.impact.code.raisers import raisers
from watcher.impact.code.starred import STAR, free_names
from watcher.impact.model import UnparsableError

__all__ = ["UNSET", "PythonIndex", "UnparsableError", "UseRow", "module_name",
           "read_python"]

STDLIB = frozenset(sys.stdlib_module_names)
CODE_LIMIT = 200
FUNCTOOLS_PARTIAL = "functools.partial"


# A Use as FileIndex's JSON has it, defaults left out: the scan caches and matches these
# without building a model per use (the models cost more than the walk).
UseRow = dict[str, Any]
# The value of a keyword that passes a parameter of the calling function defaulting to None
# (``opset_version=opset_version``): None unless the caller gives one.
UNSET = "<a parameter defaulting to None>"


class PythonIndex(NamedTuple):
    """A file's uses as rows, plus what the scan needs to follow re-exports across the tree:
    the names its module binds at top level by import (``{"load": "torch.serialization.load"}``),
    its number of lines, and the names it sets (attributes assigned, keywords passed)."""

    uses: list[UseRow]
    exports: dict[str, str]
    lines: int
    sets: tuple[str, ...] = ()
    stars: tuple[str, ...] = ()  # modules star-imported, whose names rows ``*.x`` await
    # Names only branches for releases older than any read refer to, with the release each
    # runs below (``code.callers``)
    unreached: dict[str, tuple[int, int]] | None = None
    # Its module-level functions a call here may not run on every release, by the line each
    # starts on (``code.callers``)
    functions: dict[int, LocalCalls] | None = None
    # Its functions raising an exception type themselves or through its other functions, by
    # name, with the types (``code.raisers``)
    raisers: dict[str, tuple[str, ...]] | None = None
    # The string keys it makes that lookups in other files may use: (api, key, line)
    # (``code.madekeys``)
    made_keys: tuple[tuple[str, str, int], ...] = ()
    # A use looks up a string key another file may make (``keyed_by``, ``code.madekeys``)
    awaits_keys: bool = False


def read_python(path: str, source: str | bytes) -> PythonIndex:
    """What the scan keeps of one Python file; ``UnparsableError`` if it does not parse."""
    written = decode(source)
    tree, text = parsed(path, written)
    walker = Walker(package_of(path))
    walker.walk(tree)
    if walker.stars:
        bind_starred(walker, tree)
    lines = split_lines(written)  # what a use shows is the line as written
    exports = {name: target for name, target in walker.exports.items()
               if root_of(target) not in STDLIB}
    count = len(lines) - (lines[-1] == "")  # a final newline ends the last line
    rows = resolve(walker, lines)
    made = made_key_rows(tree, text, walker, lines)
    aliasing = aliasing_rows(tree, text, walker.aliases, lines)
    if made.rows or aliasing:
        rows = sorted([*rows, *made.rows, *aliasing], key=line_of)
    mark_scopes(rows, tree)
    mark_mask_rows(rows, tree)
    unreached = unreached_names(walker, tree, STDLIB) if walker.unreached else {}
    functions = local_calls(tree, walker, unreached) if rows else {}
    mark_forwarded(rows, walker)
    mark_spread(rows, walker)
    mark_spread_local(rows, walker)
    if walker.spread_defaults:
        mark_spread_default(rows, walker)
    raising = raisers(walker.functions, walker.raised, walker.raws) if walker.raised else {}
    return PythonIndex(rows, exports, count, tuple(sorted(walker.sets)), tuple(walker.stars),
                       unreached or None, functions or None, raising or None,
                       tuple(made.made), any("keyed_by" in row for row in made.rows))


def mark_mask_rows(rows: list[UseRow], tree: ast.Module) -> None:
    """Notes on each SDPA call whose masks, as far as the file shows, keep a key in every row
    (``code.masks``); the file's masks are read only when it has such a call."""
    calls = [row for row in rows if row.get("is_call") and
             str(row["name"]).endswith("." + MASKED_CALL)]
    if not calls:
        return
    reader = MaskReader(tree)
    for row in calls:
        found = reader.masked_calls(row["line"])
        if found and all(reader.keeps_rows(call) for call in found):
            row["keeps_rows"] = True


def parsed(path: str, text: str) -> tuple[ast.Module, str]:
    """The file's syntax tree and the text it was read from: a file in a newer Python's syntax
    than the running one (type parameters, ``type`` aliases, ``except A, B:``) is read through
    its 3.11 spelling, on the same lines (``newsyntax``). ``UnparsableError`` if it still does
    not parse."""
    try:
        return ast.parse(text, filename=path), text
    except SyntaxError as error:
        older = downgraded(text)
        if older is not None:
            try:
                return ast.parse(older, filename=path), older
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                pass  # the first error is the one to report
        where = f"line {error.lineno}: " if error.lineno else ""
        raise UnparsableError(one_line(where + str(error.msg))) from None
    except ValueError as error:  # NUL bytes, on Python 3.11
        raise UnparsableError(one_line(str(error))) from None
    except (RecursionError, MemoryError) as error:  # absurdly deep nesting
        raise UnparsableError(f"too deeply nested ({type(error).__name__})") from None


def mark_scopes(rows: list[UseRow], tree: ast.Module) -> None:
    """Notes on each use inside a module-level function or class the line it starts on (its
    first decorator's): an input kind made ``within = "definition"`` reaches only uses there."""
    spans = [(min([node.lineno, *(d.lineno for d in node.decorator_list)]),
              node.end_lineno or node.lineno)
             for node in tree.body if isinstance(node, DEFINITIONS)]
    if not spans:
        return
    starts = [start for start, _ in spans]
    for row in rows:  # in file order, as the spans are
        at = bisect_right(starts, row["line"]) - 1
        if at >= 0 and row["line"] <= spans[at][1]:
            row["scope"] = spans[at][0]


def bind_starred(walker: Walker, tree: ast.Module) -> None:
    """Binds each name only a star import can have bound to ``*.<name>`` (``starred``)."""
    aliases = walker.aliases
    referenced = {raw[1] for raw in walker.raws
                  if raw[1] and raw[1] not in aliases and (raw[2] or raw[3])}
    for name in free_names(tree, referenced):
        aliases[name] = f"{STAR}.{name}"


def decode(source: str | bytes) -> str:
    """Text as Python reads it: a PEP 263 coding cookie or BOM decides, else UTF-8."""
    if isinstance(source, str):
        return source
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as error:
        raise UnparsableError(one_line(f"cannot decode: {error}")) from None


def one_line(message: str) -> str:
    return " ".join(message.split())[:300]


def split_lines(text: str) -> list[str]:
    # ast counts \r\n, \r and \n as line ends, and nothing else (str.splitlines also breaks
    # on form feeds and other separators, which would shift every line after them).
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


def module_name(path: str) -> str:
    """The dotted module a file is, from the codebase root: "pkg/io.py" -> "pkg.io"."""
    stem = path.removesuffix(".py").replace("/", ".")
    return stem.removesuffix(".__init__") if stem != "__init__" else ""


def package_of(path: str) -> str:
    """The package relative imports start from: the module itself for an ``__init__.py``."""
    name = module_name(path)
    return name if path.endswith("__init__.py") else name.rpartition(".")[0]


def root_of(name: str) -> str:
    return name.partition(".")[0]


def resolve(walker: Walker, lines: list[str]) -> list[UseRow]:
    """The raw references of a walk as uses, each once, in the order of the file."""
    seen: dict[UseTuple, UseRow] = {}
    aliases = walker.aliases
    count = len(lines)
    rebound = walker.rebound
    parameters = bool(walker.unset)  # a keyword may pass a None-default parameter
    for raw in walker.raws:
        root = raw[1]
        if root and root not in aliases and not (raw[2] and raw[3] is not None):
            continue  # a local read or assigned, most references: no use (``uses_of``)
        for use in uses_of(raw, aliases):
            if use not in seen:
                line, name, method, call, keywords, kwargs, ref, args, star, values = use
                unset: dict[str, str] = {}
                if parameters and values and any(type(v) is tuple for _, v in values):
                    values, unset = parameter_values(values, rebound)
                row: UseRow = {"line": line, "code": lines[line - 1].strip()[:CODE_LIMIT]
                               if line <= count else "", "name": name}
                # Defaults left out, as FileIndex's JSON has them (one test each: this runs
                # for every use of every file).
                if method:
                    row["method"] = method
                if call:
                    row["is_call"] = call
                if keywords:
                    row["keywords"] = list(keywords)
                if kwargs:
                    row["passes_kwargs"] = kwargs
                if ref:
                    row["ref"] = ref
                if args:
                    row["args"] = args
                if star:
                    row["passes_args"] = star
                if values:
                    row["values"] = dict(values)
                if unset:
                    row["unset_params"] = unset  # read by ``forwarded``, then dropped
                seen[use] = row
    rows = sorted(seen.values(), key=line_of)
    mark_contexts(rows, walker)
    return rows


def mark_contexts(rows: list[UseRow], walker: Walker) -> None:
    """Notes on each use what a guard around it asks first (a feature check's names) or tried
    before it (the keywords an ``except TypeError:`` fallback's ``try`` passed), the exception
    types handlers around a call catch, unless they retry it (``caught``), the torch
    version it runs only below (``below``), and a call's arguments ending in a dict
    (``Walker.final_dicts``)."""
    for start, end, names in walker.probes:
        for row in rows:
            if start <= row["line"] <= end:
                row["probed"] = sorted({*row.get("probed", ()), *names})
    if walker.below:
        for row in rows:
            version = walker.below_at(row["line"])
            if version is not None:
                row["below"] = version
    for start, end, tried in walker.fallbacks:
        for row in rows:
            if start <= row["line"] <= end and row.get("is_call"):
                tried_with = tried.get(called_name(row))
                refused = tried_with.difference(row.get("keywords", ())) if tried_with else ()
                if refused:
                    row["fallback"] = sorted({*row.get("fallback", ()), *refused})
    for start, end, caught, retried, called in walker.catches:
        for row in rows:
            if start <= row["line"] <= end and row.get("is_call") and \
                    (name := called_name(row)) not in retried:
                row["caught"] = sorted({*row.get("caught", ()), *caught})
                # the other functions the ``try`` calls: the handler may be for one of them
                if others := called.difference((name,)):
                    row["tried"] = sorted({*row.get("tried", ()), *others})
    if walker.final_dicts:
        for row in rows:
            if row.get("is_call") and (row["line"], called_name(row)) in walker.final_dicts:
                row["final_dict"] = True
    if walker.dict_arguments:
        for row in rows:
            if row.get("is_call") and (
                    positions := walker.dict_arguments.get((row["line"], called_name(row)))):
                row["dict_at"] = list(positions)


def called_name(row: UseRow) -> str:
    """The last name of what a use calls, as ``versions.callee_name`` reads it from the call."""
    return str(row["name"].rpartition(".")[2] or row.get("method", ""))


def parameter_values(values: tuple[tuple[str, Any], ...], rebound: set[str]
                     ) -> tuple[tuple[tuple[str, Any], ...], dict[str, str]]:
    """A keyword passing a parameter that defaults to None, never assigned in the file, passes
    ``UNSET`` (None unless the caller gives a value); one assigned passes a value unknown.
    With the values, the parameter each ``UNSET`` keyword passes (``forwarded`` reads it)."""
    found = []
    unset: dict[str, str] = {}
    for key, value in values:
        if type(value) is tuple:
            if value[1] in rebound:
                continue
            unset[key] = value[1]
            value = UNSET
        found.append((key, value))
    return tuple(found), unset


def line_of(row: UseRow) -> int:
    return row["line"]  # type: ignore[no-any-return]


# (line, name, method, call, keywords, passes **kwargs, ref, positional arguments, *args,
# constant keyword values)
UseTuple = tuple[int, str, str, bool, tuple[str, ...], bool, str, int, bool,
                 tuple[tuple[str, Any], ...]]


def uses_of(raw: Raw, aliases: dict[str, str]) -> Iterator[UseTuple]:
    line, root, attrs, call, keywords, kwargs, extra, ref, args, star, values = raw
    if not root:  # an import, already a full name
        if root_of(attrs[0]) not in STDLIB:
            yield line, attrs[0], "", False, (), False, ref, 0, False, ()
        return
    target = aliases.get(root)
    if target is None:
        # A local object: its methods may still be a "method" subject (scheduler.print_lr()).
        if attrs and call is not None:
            yield line, "", attrs[-1], call, keywords, kwargs, ref, args, star, values
        return
    name = ".".join((target, *attrs)) if attrs else target
    if root_of(name) in STDLIB:
        if extra is not None and extra[0] == PARTIAL and name == FUNCTOOLS_PARTIAL:
            yield from partial_use(line, extra[1], aliases, keywords, kwargs)
        return
    yield line, name, "", bool(call), keywords, kwargs, ref, args, star, values
    if extra is not None and extra[0] == CONFIG_PATCH and is_config_patch(name):
        config = name.rpartition(".")[0]
        for key in (*keywords, *extra[1]):
            yield line, f"{config}.{key}", "", False, (), False, "assign", 0, False, ()


def partial_use(line: int, argument: tuple[str, tuple[str, ...]] | None,
                aliases: dict[str, str], keywords: tuple[str, ...],
                kwargs: bool) -> Iterator[UseTuple]:
    """``functools.partial(torch.load, weights_only=True)`` is a call of ``torch.load`` with
    those keywords, made later: the matcher sees it as one."""
    if argument is None:
        return
    root, attrs = argument
    target = aliases.get(root)
    if target is None:
        return
    called = ".".join((target, *attrs)) if attrs else target
    if root_of(called) not in STDLIB:
        # Its positional arguments after the callee are not counted: a partial is rare, and
        # an unknown count never claims a parameter passed by position.
        yield line, called, "", True, keywords, kwargs, "", 0, False, ()


def is_config_patch(name: str) -> bool:
    """``torch._inductor.config.patch`` and the like: a ``patch`` of a module named config."""
    module, _, last = name.rpartition(".")
    return last == "patch" and module.rpartition(".")[2].endswith("config")
