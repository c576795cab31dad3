"""What ``release-watch impact`` prints: breaks first, then check, each item with its uses and
why, then one line counting the mentions (``--all`` lists them); or the JSON the contract
gives, with a summary a CI job reads without walking the items. Over several releases, every
(use, change) pair, each change under its release (``watcher.report.under_releases``)."""

from __future__ import annotations

from watcher.cli.outputs import item_json
from watcher.impact import ImpactAnalyzer, ItemImpact
from watcher.models import TIERS, Affect, Tier
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
from watcher.report import Found
from watcher.untrusted import clean_line

APIS_SHOWN = 6  # an item's APIs named on its "changes:" line (a base class's change reaches
# every subclass: the JSON lists them all)


def report_json(found: list[Found], analyzer: ImpactAnalyzer, show_all: bool,
                only_affecting: bool = False) -> dict[str, object]:
    """``{"items": [...], "summary": {...}, "scanned": [...]}``; ``affects`` holds every tier
    (mentions only with ``--all``), each use with its tier, why and release;
    ``only_affecting``: only the items with a use listed (the summary still counts all)."""
    items = []
    for entry in found:
        uses = shown(entry.impact, show_all) if entry.impact is not None else []
        if only_affecting and not uses:
            continue
        data = item_json(entry.item)
        data["origin"] = entry.origin
        if entry.release is not None:
            data["release"] = entry.release
        if entry.impact is not None:
            data["apis"] = entry.impact.apis
            data["affects"] = [use.to_json_dict() for use in uses]
            if entry.impact.suppressed:
                data["suppressed"] = [{**use.to_json_dict(), "suppressed": how}
                                      for use, how in entry.impact.suppressed]
        items.append(data)
    return {"items": items, "summary": summary(found), "scanned": scanned(analyzer)}


def summary(found: list[Found]) -> dict[str, object]:
    """The counts a CI job reads without walking the items: uses by tier, and by release and
    tier (oldest release first); the items read, those naming an API, those touching the
    code; the uses suppressed, by how."""
    suppressed: dict[str, int] = {"inline": 0, "baseline": 0, "store": 0}
    releases: dict[str, dict[str, int]] = {}
    for entry in found:
        for _, how in entry.impact.suppressed if entry.impact else ():
            suppressed[how] += 1
        if entry.release is not None:
            counts = releases.setdefault(entry.release, dict.fromkeys(TIERS, 0))
            for use in entry.impact.affects if entry.impact else ():
                counts[use.tier] += 1
    return {"uses": {tier: len(uses_of(found, tier)) for tier in TIERS},
            "releases": releases,
            "items": len(found),
            "items_naming_an_api": sum(entry.impact is not None for entry in found),
            "items_touching": len(touching(found)),
            "files_touched": len({(use.root, use.path) for tier in ("breaks", "check")
                                  for use in uses_of(found, tier)}),
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
