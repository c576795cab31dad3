"""What the APIs an item names say about its subsystem (``config/apis.toml``): a verdict of their
own where they name one subsystem's only, and the subsystems an unsure item may also belong to.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from watcher.models import top_level
from watcher.notes.apis import Named
from watcher.notes.classify.evidence import Verdict

# How often an item that names one subsystem's APIs, by their dotted names or the short names
# of its code spans, stands under that subsystem's heading: 212 of 273 such items of the shared
# notes (each text once; 92 of 127 with dotted names alone), README "Classification".
API_CONFIDENCE = 0.78


def api_verdict(named: list[Named], finer: Callable[[str], str | None]) -> Verdict | None:
    """The subsystem of the APIs an item names (``ApiOwners.named``), when they are one
    subsystem's (``torch.export.Dim``, "with `torch.export`"); APIs of two subsystems (the ONNX
    exporter naming ``torch.export``) say nothing. An API namespace is its owner's own name, so
    it outranks a decisive rule that names another subsystem's feature ("automatic dynamic
    shapes" is Dynamo's words), and the model's guess unless the model is surer than
    ``API_CONFIDENCE`` (README "Classification"). ``finer``: the finer id the rules give a
    top-level subsystem, when no API named one."""
    if not named or len({top_level(n.subsystem) for n in named}) > 1:
        return None
    top = top_level(named[0].subsystem)
    precise = next((n for n in named if "/" in n.subsystem), None)
    chosen = precise.subsystem if precise is not None else (finer(top) or top)
    return Verdict(chosen, "rule", API_CONFIDENCE, f"names {(precise or named[0]).api!r}")


def with_apis(guess: Verdict, named: list[Named]) -> Verdict:
    """The guess's candidates and the subsystems of the APIs the item names (each top-level
    subsystem once, probability 0.0: named, not guessed): where an unsure item may belong."""
    listed = {top_level(name) for name, _ in guess.candidates}
    extra = tuple((api.subsystem, 0.0) for api in named
                  if top_level(api.subsystem) not in listed)
    return replace(guess, candidates=guess.candidates + extra) if extra else guess
