"""What the impact analysis may know of torch's API beyond the notes' words: the protocol an
API atlas answers (the names users write, subclasses, signatures, deprecation markers), and
``NoKnowledge``, which knows nothing, for when no atlas is at hand.

The matcher asks it two things: which classes derive from a class a note names (so
``ReduceLROnPlateau(opt, verbose=True)`` is a use of "the LRScheduler constructor"'s
``verbose``), and at which position a parameter can be passed (so a removed parameter passed
by position is found too). Knowledge is of the release the code is written against: the one
before the change, where a removed parameter still has its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["ApiKnowledge", "NoKnowledge", "Parameter", "ParameterKind", "Signature"]

ParameterKind = Literal["positional_only", "positional_or_keyword", "var_positional",
                        "keyword_only", "var_keyword"]
POSITIONAL = ("positional_only", "positional_or_keyword")


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: ParameterKind = "positional_or_keyword"
    default: str | None = None  # the default as source text ("True", "None"); None: required


@dataclass(frozen=True)
class Signature:
    """A function's parameters in order; a class's are its constructor's, ``self`` left out."""

    parameters: tuple[Parameter, ...] = ()

    def position(self, name: str) -> int | None:
        """The 0-based position ``name`` takes when passed positionally; None when it cannot
        be (keyword-only, ``*args``/``**kwargs``) or is no parameter."""
        for index, parameter in enumerate(self.parameters):
            if parameter.kind not in POSITIONAL:
                return None  # ``*args`` or keyword-only: no position from here on
            if parameter.name == name:
                return index
        return None

    def default(self, name: str) -> str | None:
        """The default ``name`` has, as source text; None when it has none or is no parameter."""
        return next((parameter.default for parameter in self.parameters
                     if parameter.name == name), None)


class ApiKnowledge(Protocol):
    """Names are canonical: where the API is defined (``torch.serialization.load``)."""

    def resolve(self, name: str) -> str | None:
        """Any spelling users write (``torch.load``) → the API's canonical name."""
        ...

    def names_of(self, api: str) -> list[str]:
        """Every spelling of one API: where it is defined and each re-export."""
        ...

    def subclasses(self, cls: str) -> set[str]:
        """Every class deriving from ``cls``, transitively, by canonical name."""
        ...

    def signature(self, api: str) -> Signature | None: ...

    def deprecated(self, api: str) -> str | None:
        """The deprecation marker's message, or None."""
        ...

    def module_of(self, api: str) -> str | None: ...


class NoKnowledge:
    """Knows nothing: the notes' own words are all there is."""

    def resolve(self, name: str) -> str | None:
        return None

    def names_of(self, api: str) -> list[str]:
        return []

    def subclasses(self, cls: str) -> set[str]:
        return set()

    def signature(self, api: str) -> Signature | None:
        return None

    def deprecated(self, api: str) -> str | None:
        return None

    def module_of(self, api: str) -> str | None:
        return None
