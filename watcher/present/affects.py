"""What of an event affects the configured code, decided once for every notifier: the uses
the changes reach (``breaks``) first, then those they may reach (``check``), each BC-breaking
or deprecation item listed under a tier with its uses of that tier, and the mentions (imports,
annotations, ``isinstance``, marking decorators) counted in one line, never listed.

``affects_of`` is part of the event's plan (``plan``); a digest counts the uses of its whole
queue (``AffectsTally``) and plans what it shows from the items it kept. Where the uses come
from more than one codebase, every use names its codebase (``named``). The renderers draw the
result (Slack mrkdwn, console text, Atom HTML) and decide nothing of it again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from watcher.models import ATTENTION_KINDS, Affect, EventItem, Tier
from watcher.present.words import affects_title, breaking, mentions_line, tier_title

LISTED_TIERS: tuple[Tier, ...] = ("breaks", "check")  # listed use by use; mentions counted


@dataclass
class UseTally:
    """The uses of a set of BC-breaking and deprecation items, counted per tier: how many
    items touch the code (a use in ``breaks`` or ``check``), the uses and files per tier, and
    the codebases they are in. Small, whatever the number of items added."""

    items: int = 0
    uses: Counter[str] = field(default_factory=Counter)
    files: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    codebases: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, items: Iterable[EventItem]) -> UseTally:
        tally = cls()
        for item in items:
            tally.add(item)
        return tally

    def add(self, item: EventItem) -> None:
        if item.kind not in ATTENTION_KINDS:
            return
        self.items += item.touches_code
        for use in item.affects or ():
            self.uses[use.tier] += 1
            self.files.setdefault(use.tier, set()).add((use.root, use.path))
            self.codebases.add(use.codebase or use.root)

    def files_of(self, *tiers: str) -> int:
        return len(set().union(*(self.files.get(tier, set()) for tier in tiers)))


@dataclass(frozen=True)
class TierEntry:
    """An item under a tier, with its uses of that tier (in the analysis' order)."""

    item: EventItem
    uses: list[Affect]


@dataclass(frozen=True)
class TierGroup:
    tier: Tier
    title: str  # ``Breaks (3 uses in 2 files)``
    entries: list[TierEntry]


@dataclass(frozen=True)
class AffectsPlan:
    """What "Affects your code" shows: its title with the counts, the tiers in order (a tier
    with no use left out; an item with uses in both is under both), the line counting the
    mentions, and whether each use names its codebase. False when nothing touches the code."""

    items: list[EventItem]  # the BC-breaking and deprecation items that touch the code
    title: str
    tiers: list[TierGroup]
    mentions: str | None  # the one line counting the mentions, if any
    named: bool  # uses from several codebases: every use names its codebase

    def __bool__(self) -> bool:
        return bool(self.items)


def affects_of(items: list[EventItem], tally: UseTally | None = None) -> AffectsPlan:
    """The plan of "Affects your code" for ``items``; ``tally``: the counts, when they cover
    more than the items listed (a digest's whole queue)."""
    counts = tally if tally is not None else UseTally.of(items)
    picked = breaking(items)
    tiers = []
    for tier in LISTED_TIERS:
        entries = [TierEntry(item, mine) for item in picked
                   if (mine := [use for use in item.affects or () if use.tier == tier])]
        if entries:
            tiers.append(TierGroup(tier, tier_title(tier, counts.uses[tier],
                                                    counts.files_of(tier)), entries))
    mentions = counts.uses["mentions"]
    return AffectsPlan(
        items=picked,
        title=affects_title(counts.items, counts.uses, counts.files_of(*LISTED_TIERS)),
        tiers=tiers,
        mentions=mentions_line(mentions, counts.files_of("mentions")) if mentions else None,
        named=len(counts.codebases) > 1,
    )


@dataclass
class AffectsTally:
    """What of a digest's queue touches the configured code: its BC-breaking and deprecation
    items' uses counted per tier over the whole queue (``UseTally``), and the first of the
    items that touch the code (at most the digest's item cap), to list."""

    uses: UseTally = field(default_factory=UseTally)
    items: list[EventItem] = field(default_factory=list)

    def add(self, item: EventItem, keep: int) -> None:
        self.uses.add(item)
        if item.breaks_code and len(self.items) < keep:
            self.items.append(item)

    @property
    def count(self) -> int:
        """The items that touch the code (a use in ``breaks`` or ``check``)."""
        return self.uses.items

    def plan(self) -> AffectsPlan:
        """What "Affects your code" shows, as for an event: counted over the queue."""
        return affects_of(self.items, self.uses)
