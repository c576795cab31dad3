"""What one file shows of the calls of its module-level functions: a function called only from
branches that run below a torch release (``if TORCH_VERSION < (2, 6): _old_load()``, or a
branch for 1.13 that the walk skips) runs only there, so no change of that release or a later
one reaches the uses in it. ``reach.callers`` joins what the other files show.

Each function is listed by the line it starts on (a use's ``scope``) unless a reference in
this file may run on any release, outside its other functions; a decorated function is not
listed (a decorator may register it to be called from anywhere). Its entry: the highest
release the guarded references run below, and the file's other functions that refer to it
unguarded (each bounded by its own callers, in turn).
"""

from __future__ import annotations

import ast

from watcher.impact.code.pywalk import Walker

__all__ = ["LocalCalls", "local_calls", "unreached_names"]

Version = tuple[int, int]
# (name, the release its guarded references run below or None, the functions calling it)
LocalCalls = tuple[str, Version | None, tuple[str, ...]]


def unreached_names(walker: Walker, tree: ast.Module, stdlib: frozenset[str]
                    ) -> dict[str, Version]:
    """The functions the file's dead branches refer to, each with the highest release it runs
    below: an imported name resolved through the file's imports, a module-level function of
    the file by its own name (other local names dropped)."""
    found: dict[str, Version] = {}
    aliases = walker.aliases
    local = {node.name for node in tree.body
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for name, version in walker.unreached:
        root, dot, rest = name.partition(".")
        target = aliases.get(root)
        if target is not None:
            if target.partition(".")[0] in stdlib:
                continue
            name = f"{target}{dot}{rest}"
        elif name not in local:
            continue
        if version > found.get(name, (0, 0)):
            found[name] = version
    return found


def local_calls(tree: ast.Module, walker: Walker, unreached: dict[str, Version]
                ) -> dict[int, LocalCalls]:
    """The file's module-level functions whose references here are all bounded or inside
    its other functions, by the line each starts on (see the module's docstring)."""
    spans = [(node.lineno, node.end_lineno or node.lineno, node.name,
              bool(node.decorator_list) or node.name in walker.aliases)
             for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not spans:
        return {}
    names = {name for _, _, name, _ in spans}
    referred: dict[str, list[int]] = {}
    for raw in walker.raws:
        if raw[1] in names:
            referred.setdefault(raw[1], []).append(raw[0])
    found: dict[int, LocalCalls] = {}
    for start, end, name, handed_on in spans:
        if handed_on:
            continue
        versions: list[Version] = []
        callers: set[str] = set()
        for line in referred.get(name, ()):
            if start <= line <= end:
                continue  # the function calling itself
            version = walker.below_at(line)
            caller = None if version is not None else within(spans, line)
            if version is None and caller is None:
                break  # a reference that may run on any release
            if version is not None:
                versions.append(version)
            else:
                callers.add(str(caller))
        else:
            if name in unreached:
                versions.append(unreached[name])
            found[start] = (name, max(versions) if versions else None, tuple(sorted(callers)))
    return found


def within(spans: list[tuple[int, int, str, bool]], line: int) -> str | None:
    """The module-level function ``line`` is in, or None."""
    return next((name for start, end, name, _ in spans if start <= line <= end), None)

