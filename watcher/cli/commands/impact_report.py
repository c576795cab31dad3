"""What ``release-watch impact`` prints: breaks first, then check, each item with its uses and
why, then one line counting the mentions (``--all`` lists them); or the JSON the contract
gives. Over several releases, each use once, with the first release that breaks it."""

from __future__ import annotations

from typing import NamedTuple

from watcher.cli.outputs import item_json
from watcher.impact import ImpactAnalyzer, ItemImpact
from watcher.models import TIERS, Affect, ClassifiedItem, Tier
from watcher.present import (
    KIND_NAMES,
    by_name_note,
    mentions_line,
    plural,
    tier_title,
    unparsable_note,
    use_place,
    uses_in_files,
)
from watcher.untrusted import clean_line

APIS_SHOWN = 6  # an item's APIs named on its "changes:" line (a base class's change reaches
# every subclass: the JSON lists them all)


class Found(NamedTuple):
    item: ClassifiedItem
    impact: ItemImpact | None
    release: str | None
    origin: str = "notes"  # "package": an API change the notes do not mention


def upgrade(found: list[Found]) -> list[Found]:
    """Over releases read oldest first: each use (codebase, path, line, API) kept once, in the
    item of the first release that reaches it with its surest tier; an item left with no use
    keeps its APIs."""
    best: dict[tuple[str, str, int, str], tuple[int, int]] = {}  # use -> (tier rank, entry)
    for number, entry in enumerate(found):
        for use in entry.impact.affects if entry.impact else ():
            key = (use.root, use.path, use.line, use.api)
            rank = TIERS.index(use.tier)
            if key not in best or rank < best[key][0]:
                best[key] = (rank, number)
    kept = []
    for number, entry in enumerate(found):
        if entry.impact is None:
            kept.append(entry)
            continue
        uses = [use for use in entry.impact.affects
                if best[(use.root, use.path, use.line, use.api)][1] == number]
        kept.append(entry._replace(impact=entry.impact._replace(affects=uses)))
    return kept


def report_json(found: list[Found], analyzer: ImpactAnalyzer, show_all: bool
                ) -> dict[str, object]:
    """``{"items": [...], "scanned": [...]}``; ``affects`` holds every tier (mentions only with
    ``--all``), each use with its tier, why and release."""
    items = []
    for entry in found:
        data = item_json(entry.item)
        data["origin"] = entry.origin
        if entry.release is not None:
            data["release"] = entry.release
        if entry.impact is not None:
            data["apis"] = entry.impact.apis
            data["affects"] = [use.to_json_dict() for use in shown(entry.impact, show_all)]
            if entry.impact.suppressed:
                data["suppressed"] = [{**use.to_json_dict(), "suppressed": how}
                                      for use, how in entry.impact.suppressed]
        items.append(data)
    return {"items": items, "summary": summary(found), "scanned": scanned(analyzer)}


def summary(found: list[Found]) -> dict[str, object]:
    """The counts a CI job reads without walking the items: uses by tier, the items that
    touch the code, and the uses suppressed, by how."""
    suppressed: dict[str, int] = {"inline": 0, "baseline": 0, "store": 0}
    for entry in found:
        for _, how in entry.impact.suppressed if entry.impact else ():
            suppressed[how] += 1
    return {"uses": {tier: len(uses_of(found, tier)) for tier in TIERS},
            "items_touching": len(touching(found)),
            "suppressed": {"total": sum(suppressed.values()), **suppressed}}


def touching(found: list[Found]) -> list[Found]:
    """The items with a use in ``breaks`` or ``check`` (a mention alone is no claim)."""
    return [entry for entry in found if entry.impact is not None and any(
        use.tier != "mentions" for use in entry.impact.affects)]


def shown(impact: ItemImpact, show_all: bool) -> list[Affect]:
    return [use for use in impact.affects if show_all or use.tier != "mentions"]


def scanned(analyzer: ImpactAnalyzer) -> list[dict[str, object]]:
    return [{"root": root.label, "codebase": root.codebase, "files": len(index.records),
             "unparsable": [{"path": path, "error": why} for path, why in index.unparsable]}
            for root, index in analyzer.indexes()]


def report_text(found: list[Found], analyzer: ImpactAnalyzer, show_all: bool) -> list[str]:
    several = len(analyzer.roots) > 1
    releases = len({entry.release for entry in found}) > 1
    lines: list[str] = []
    for tier in TIERS:
        if tier == "mentions" and not show_all:
            continue
        lines += tier_section(found, tier, several, releases)
    mentions = uses_of(found, "mentions")
    if mentions and not show_all:
        files = len({(use.root, use.path) for use in mentions})
        lines.append(f"{mentions_line(len(mentions), files)}; --all lists them")
    suppressed = [how for entry in found if entry.impact for _, how in entry.impact.suppressed]
    if suppressed:
        hows = ", ".join(f"{suppressed.count(how)} {how}" for how in ("inline", "baseline", "store")
                         if how in suppressed)
        lines.append(f"{plural(len(suppressed), 'use')} suppressed ({hows}), not in the tiers")
    uses = uses_of(found, "breaks") + uses_of(found, "check")
    named = [entry for entry in found if entry.impact is not None]
    items = plural(len(touching(found)), "BC-breaking or deprecation item")
    lines.append(f"{items} touch the code "
                 f"({uses_in_files(uses)}: {len(uses_of(found, 'breaks'))} break, "
                 f"{len(uses_of(found, 'check'))} to check); "
                 f"{len(named)} of {plural(len(found), 'item')} name an API that was looked for")
    for root, index in analyzer.indexes():
        note = f"{root.label}: {plural(len(index.records), 'file')} read"
        if index.unparsable:
            paths = [clean_line(path) for path, _ in index.unparsable]
            note += f"; {unparsable_note(len(paths), paths)}"
        lines.append(note)
    return lines


def uses_of(found: list[Found], tier: Tier) -> list[Affect]:
    return [use for entry in found if entry.impact for use in entry.impact.affects
            if use.tier == tier]


def tier_section(found: list[Found], tier: Tier, several: bool, releases: bool) -> list[str]:
    """``Breaks (3 uses in 2 files)`` and each item with a use in that tier."""
    uses = uses_of(found, tier)
    if not uses:
        return []
    lines = [tier_title(tier, len(uses), len({(use.root, use.path) for use in uses})), ""]
    for entry in found:
        mine = [use for use in entry.impact.affects if use.tier == tier] if entry.impact else []
        if not mine or entry.impact is None:
            continue
        first = clean_line(entry.item.text.split("\n", 1)[0])
        when = f"{clean_line(entry.release)} " if releases and entry.release else ""
        lines.append(f"{when}{KIND_NAMES[entry.item.kind]} [{entry.item.subsystem}] {first}")
        apis = entry.impact.apis
        more = f" and {len(apis) - APIS_SHOWN} more" if len(apis) > APIS_SHOWN else ""
        lines.append(f"  changes: {', '.join(clean_line(api) for api in apis[:APIS_SHOWN])}"
                     f"{more}")
        for use in mine:
            where = f"{use.root}/{use_place(use)}" if several else use_place(use)
            lines.append(f"  {clean_line(where)}  {clean_line(use.code)}{by_name_note(use)}")
            if use.why:
                lines.append(f"      {clean_line(use.why)}")
        lines.append("")
    return lines
