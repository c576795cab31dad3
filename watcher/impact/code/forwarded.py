"""Where a keyword's value comes from when it passes on a parameter of the calling function that
defaults to None (``def run_model(self, m, dynamic_axes=None): export(m, dynamic_axes=
dynamic_axes)``): the function, the parameter's position, and whether any call of the function
in this file may give it a value.

With that, the matcher can ask every visible caller (``reach.match``): when the function is
called and no call gives the parameter, the option only ever reaches the inner call as None.
Read only for the few uses that pass such a parameter, from what the walk already collected
(the file's functions and its raw references), with no second walk of the tree.
"""

from __future__ import annotations

from typing import Any

from watcher.impact.code.pywalk import NOT_CALLING, Function, Raw, Walker, enclosing

__all__ = ["mark_forwarded", "mark_spread", "mark_spread_default", "mark_spread_local"]

# References to a function that neither call it nor hand it on (a subclass, "base", may be
# constructed with anything; a name it is "aliased" to may be called with anything).
INERT = NOT_CALLING - {"base", "aliased"}


def mark_forwarded(rows: list[dict[str, Any]], walker: Walker) -> None:
    """Sets ``forwarded`` on each row whose keywords pass a None-default parameter
    (``unset_params``: option -> parameter): option -> ``[function, position, called,
    given]``: the position the parameter is passed at (-1: keyword only), whether this file
    calls the function, and whether such a call may give it (by keyword, by position, or
    through ``*``/``**``)."""
    for row in rows:
        unset = row.pop("unset_params", None)
        if not unset:
            continue
        forwarded: dict[str, list[Any]] = {}
        for option, parameter in unset.items():
            function = innermost(walker.functions, row["line"], parameter)
            if function is None:
                continue
            position = position_of(function, parameter)
            here = calls_of(walker.raws, function[0], walker.aliases)
            forwarded[option] = [function[0], position, bool(here),
                                 any(may_pass(call, parameter, position) for call in here)]
        if forwarded:
            row["forwarded"] = forwarded


def mark_spread(rows: list[dict[str, Any]], walker: Walker) -> None:
    """Sets ``spreads_kwargs_of`` on each call passing on its function's own ``**kwargs``
    and nothing else spread (``super().__init__(dataset, **kwargs)``): ``[name, keywords,
    open, calls]``: the name the function is called by (an ``__init__``'s class's), the
    keywords this file's calls of it pass, whether one of them spreads ``*``/``**`` or the
    file hands the function on (then any option may reach it), and how many calls there are.
    With every caller in view (``reach.match``), an option none of them passes never arrives
    through the ``**kwargs``."""
    for row in rows:
        if not row.get("passes_kwargs"):
            continue
        spread = walker.spreads.get(row["line"])
        if not spread or None in spread:
            continue
        around = [entry for entry in walker.var_keywords if entry[0] <= row["line"] <= entry[1]]
        if not around:
            continue
        _, _, parameter, name = max(around, key=lambda entry: entry[0])
        if any(spread_name != parameter for spread_name in spread):
            continue
        here = calls_of(walker.raws, name, walker.aliases)
        handed = any(raw[1] == name and not raw[2] and raw[3] is False and raw[7] not in INERT
                     for raw in walker.raws)
        keywords = sorted({keyword for call in here for keyword in call[4]})
        row["spreads_kwargs_of"] = [name, keywords,
                                    handed or any(call[5] or call[9] for call in here),
                                    len(here)]


def mark_spread_default(rows: list[dict[str, Any]], walker: Walker) -> None:
    """Sets ``spreads_default_of`` on each call spreading a parameter of its function that
    defaults to a literal dict (``def save(self, path, params={"opset_version": 12}): ...
    export(m, x, path, **params)``): ``[function, parameter, position, called, given]``, as
    ``forwarded`` has them. The call passes the default's keys and those the function assigns
    (its ``keywords``) unless a caller gives the parameter another dict (``reach.match``)."""
    for row in rows:
        parameter = walker.spread_defaults.get(row["line"])
        if parameter is None or not row.get("is_call"):
            continue
        function = innermost(walker.functions, row["line"], parameter)
        if function is None:
            continue
        position = position_of(function, parameter)
        here = calls_of(walker.raws, function[0], walker.aliases)
        row["spreads_default_of"] = [function[0], parameter, position, bool(here),
                                     any(may_pass(call, parameter, position) for call in here)]


def mark_spread_local(rows: list[dict[str, Any]], walker: Walker) -> None:
    """Sets ``spreads_local`` on each call whose every ``**`` spreads a dict starting from a
    name that no function around the call takes as a parameter (``**config_scheduler`` read
    from a YAML file, ``**hparams["scheduler_params"]``, a module's dict): its keys come from
    the codebase's own code and configs, not from a caller's arguments as a library's
    forwarded ``**kwargs`` or ``**options`` do (``reach.match.never_spelled``)."""
    for row in rows:
        if not row.get("passes_kwargs") or not row.get("is_call"):
            continue
        roots = walker.spread_roots.get(row["line"])
        if not roots or None in roots:
            continue
        around = enclosing(walker.functions, row["line"])
        taken = {parameter for function in around for parameter in function[4]}
        taken |= {entry[2] for entry in walker.var_keywords
                  if entry[0] <= row["line"] <= entry[1]}
        if not taken.intersection(roots):
            row["spreads_local"] = True


def innermost(functions: list[Function], line: int, parameter: str) -> Function | None:
    """The innermost function around ``line`` that takes ``parameter``."""
    return next((function for function in enclosing(functions, line)
                 if parameter in function[4]), None)


def position_of(function: Function, parameter: str) -> int:
    """The position a caller passes ``parameter`` at, ``self``/``cls`` of a method left out
    (a method is called on its object); -1 when it can only be passed by keyword."""
    positional = list(function[3])
    if positional and positional[0] in ("self", "cls"):
        positional = positional[1:]
    return positional.index(parameter) if parameter in positional else -1


def calls_of(raws: list[Raw], name: str, aliases: dict[str, str]) -> list[Raw]:
    """The calls of ``name`` in the file: ``name(...)`` and ``x.name(...)``, not a function of
    an imported module with the same name (``torch.onnx.export`` beside a helper ``export``)."""
    return [raw for raw in raws if raw[3] and (
        (raw[1] == name and not raw[2])
        or (raw[2] and raw[2][-1] == name and raw[1] not in aliases))]


def may_pass(call: Raw, parameter: str, position: int) -> bool:
    """Whether a call passes ``parameter`` by keyword or position, or may through ``**`` or
    ``*``."""
    keywords, spread, positional, starred = call[4], call[5], call[8], call[9]
    return parameter in keywords or spread or starred or 0 <= position < positional
