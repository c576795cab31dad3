"""What a classification weighs and says: the verdict on a subsystem (what decided, how sure,
why), what the headings above an item say, the rules' scores, and the decision handed out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from watcher.models import ClassifiedItem, DecidedBy
from watcher.notes.model import RULE_CUE

DECIDERS: tuple[DecidedBy, ...] = ("heading", "label", "rule", "model")  # strongest first
HEADING_REASON = "heading "  # how a reason decided by the notes' own headings begins
LABEL_REASON = "PR label "


class Builtin(Enum):
    """Stands for the shipped model, loaded on first use (``builtin_model``)."""

    MODEL = "builtin"


@dataclass(frozen=True)
class Verdict:
    """A subsystem, what set it (the contract's ``decided_by``), how sure that is, and why."""

    subsystem: str
    decided_by: DecidedBy
    confidence: float
    reason: str
    candidates: tuple[tuple[str, float], ...] = ()  # where a guess may also belong

    def refined(self, finer: str | None, rule: str) -> Verdict:
        if not finer:
            return self
        return replace(self, subsystem=finer, reason=f"{self.reason}, refined by rule {rule!r}")


@dataclass(frozen=True)
class Headings:
    """What the headings above an item say, read once per heading path: the area verdict, else a
    context-only heading's (id, heading); the headings that are neither areas nor sections (a BC
    entry's title); and the kind the sections give, with the heading that gave it."""

    area: Verdict | None
    fallback: tuple[str, str] | None
    extra: tuple[str, ...]
    kind: tuple[str, str] | None


@dataclass(frozen=True)
class Decision:
    item: ClassifiedItem
    subsystem_reason: str
    kind_reason: str


@dataclass(frozen=True)
class RuleScores:
    tops: dict[str, float]
    finer: dict[str, float]
    strongest_rule: dict[str, str]

    def best(self, order: dict[str, int]) -> tuple[str | None, float]:
        if not self.tops:
            return None, 0.0
        top = max(self.tops, key=lambda s: (self.tops[s], -order.get(s, 0)))
        return top, self.tops[top]

    def cues(self, order: dict[str, int]) -> list[str]:
        """The model's view of the rules: which subsystems matched and which matched best."""
        best, _ = self.best(order)
        matched = [f"{RULE_CUE}{top}" for top in sorted(self.tops)]
        return matched + ([f"rule_best:{best}"] if best else [])


NO_RULE = RuleScores({}, {}, {})
