"""An atlas as what the impact analysis may know of torch's API (``watcher.impact.knowledge``):
the names users write, subclasses, signatures and deprecation markers of one release.

The analysis is given the atlas of the release the code is written against, the one before the
change (where a removed parameter still has its position).
"""

from __future__ import annotations

from watcher.impact.atlas.model import Atlas
from watcher.impact.knowledge import Parameter, ParameterKind, Signature

__all__ = ["AtlasKnowledge"]

_KINDS: dict[str, ParameterKind] = {
    kind: kind for kind in ("positional_only", "positional_or_keyword", "var_positional",
                            "keyword_only", "var_keyword")}


class AtlasKnowledge:
    """``subclasses``: False for knowledge of names and signatures alone (a package's change
    of each class is a change of its own, so none is followed from a base)."""

    def __init__(self, atlas: Atlas, *, subclasses: bool = True) -> None:
        self.atlas = atlas
        self.follows_subclasses = subclasses

    def resolve(self, name: str) -> str | None:
        return self.atlas.resolve(name)

    def names_of(self, api: str) -> list[str]:
        return self.atlas.names_of(api)

    def subclasses(self, cls: str) -> set[str]:
        return set(self.atlas.subclasses(cls)) if self.follows_subclasses else set()

    def signature(self, api: str) -> Signature | None:
        params = self.atlas.signature(api)
        if params is None:
            return None
        return Signature(tuple(Parameter(param.name, _KINDS.get(param.kind,
                                                                "positional_or_keyword"),
                                         param.default) for param in params))

    def deprecated(self, api: str) -> str | None:
        return self.atlas.deprecated(api)

    def module_of(self, api: str) -> str | None:
        return self.atlas.module_of(api)
