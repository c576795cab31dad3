"""APIs the linker makes from what several modules say, where no ``def`` spells them out: the
constructor a dataclass gets from its own and its bases' fields, a name bound to a call of a
deprecation helper (``xrt_world_size = deprecated(this_module, ..., "...")``), and a message
held in a constant another module defines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher.impact.atlas.classes import NAMEDTUPLE
from watcher.impact.atlas.facts import Definition
from watcher.impact.atlas.model import FUNCTION, KEYWORD_ONLY, Param

if TYPE_CHECKING:
    from watcher.impact.atlas.link import Linker


def deprecated_wrapper(linker: Linker, module: str, definition: Definition) -> Definition:
    """``xrt_world_size = deprecated(this_module, torch_xla.runtime.world_size, "...")``: a
    function deprecated with the call's strings as its message, taking what the function it
    wraps takes, where the helper called is a deprecation helper; else the data it was."""
    assert definition.wrapper is not None
    helper, passed, message = definition.wrapper
    target = linker.dotted(module, helper)
    found = linker.definition(target[1]) if target is not None and target[0] == "api" else None
    if found is None or not found.deprecates:
        return definition
    params = None
    for name in passed:
        wrapped = linker.dotted(module, name)
        inner = linker.definition(wrapped[1]) if wrapped and wrapped[0] == "api" else None
        if inner is not None and inner.kind == FUNCTION:
            params = inner.params
            break
    return Definition(FUNCTION, params, message)


def generated(linker: Linker, module: str, qualname: str, members: list[str]
               ) -> tuple[str, tuple[Param, ...]] | None:
    """The constructor a dataclass (``__init__``) or NamedTuple (``__new__``) gets from its
    fields, unless its body defines one: a dataclass's bases' fields first, as
    ``dataclasses`` orders them (a field named again keeps its first place)."""
    facts = linker.facts(module)
    definition = facts.definitions.get(qualname) if facts is not None else None
    if definition is None or definition.generated is None or "__init__" in members \
            or "__new__" in members:
        return None
    kind, own = definition.generated
    if kind == NAMEDTUPLE:
        return "__new__", own
    fields: dict[str, Param] = {}
    for base in reversed(definition.bases):
        target = linker.dotted(module, base)
        if target is not None and target[0] == "api":
            inherited = generated(linker, *linker.split(target[1]), [])
            fields.update((param.name, param) for param in (inherited or ("", ()))[1])
    fields.update((param.name, param) for param in own)
    # Keyword-only fields go after the others (``dataclasses``' rule since 3.10).
    ordered = sorted(fields.values(), key=lambda param: param.kind == KEYWORD_ONLY)
    return "__init__", tuple(ordered)


def imported_text(linker: Linker, module: str, message: str | None) -> str | None:
    """A message that is the name of a string constant the module imports (``@deprecated(
    DEPRECATION_WARNING)``, from ``torch.ao.quantization.utils``): the constant's text. The
    module's own constants were read with it (``markers.message_text``)."""
    if message is None or not message.isidentifier():
        return message
    target = linker.lookup(module, message)
    if target is None or target[0] != "api":
        return message
    home, name = linker.split(target[1])
    facts = linker.facts(home) if home else None
    return facts.constants.get(name, message) if facts is not None else message
