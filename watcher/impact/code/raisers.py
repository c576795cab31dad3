"""The exception types a file's functions raise themselves, directly or through the file's other
functions: ``get_filename`` raises ``RuntimeError("weight ... does not exist")``, and
``get_sharded`` calls ``get_partial_sharded``, which calls ``get_filename``, so all three raise
it.

A handler around a torch call that catches such a type may be there for the codebase's own
error rather than torch's (``try: torch.cat([weights.get_sharded(p) ...]) except RuntimeError:
raise RuntimeError("make sure the model is already quantized")``): when torch changes which
type it raises for bad input, that handler still runs for what it was written for. The scan
joins every file's list by function name (``CodeIndex.raisers``); ``reach.match`` reads it for
the calls a ``try`` makes besides the torch one.
"""

from __future__ import annotations

from bisect import bisect_right

from watcher.impact.code.pywalk import Function, Raw

__all__ = ["raisers"]

# An abstract method's ``raise NotImplementedError`` says the method is to be overridden, not
# that calling it fails; a handler is never written for it, though it is a RuntimeError.
NOT_AN_ERROR = frozenset({"NotImplementedError"})


def raisers(functions: list[Function], raised: list[tuple[int, str]], raws: list[Raw]
            ) -> dict[str, tuple[str, ...]]:
    """Each of the file's functions (by name; methods too) that raises a type itself or
    calls one of the file's functions that does, with the types, sorted. ``raised``: (line,
    type) of each ``raise``; ``raws``: the walk's references, whose calls link the functions."""
    kinds = [(line, kind) for line, kind in raised if kind and kind not in NOT_AN_ERROR]
    if not kinds or not functions:
        return {}
    spans = sorted((start, end, name) for name, start, end, *_ in functions)
    starts = [start for start, _, _ in spans]

    def innermost(line: int) -> str | None:
        """The function ``line`` is in: the latest-starting one that has not ended yet."""
        for position in range(bisect_right(starts, line) - 1, -1, -1):
            _, end, name = spans[position]
            if end >= line:
                return name
        return None

    direct: dict[str, set[str]] = {}
    for line, kind in kinds:
        owner = innermost(line)
        if owner is not None:
            direct.setdefault(owner, set()).add(kind)
    names = {name for _, _, name in spans}
    calls: dict[str, set[str]] = {}
    for raw in raws:
        if raw[3] is not True:
            continue
        callee = raw[2][-1] if raw[2] else raw[1]
        if callee in names:
            caller = innermost(raw[0])
            if caller is not None and caller != callee:
                calls.setdefault(caller, set()).add(callee)
    found = {name: set(types) for name, types in direct.items()}
    changed = True
    while changed:  # to a fixed point: a chain of calls through the file's own functions
        changed = False
        for caller, callees in calls.items():
            for callee in callees:
                more = found.get(callee)
                if more and not more <= found.get(caller, set()):
                    found.setdefault(caller, set()).update(more)
                    changed = True
    return {name: tuple(sorted(types)) for name, types in found.items()}
