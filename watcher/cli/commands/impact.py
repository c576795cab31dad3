"""``release-watch impact``: which items of a release-notes file touch a codebase, with every
use as ``path:line``; offline, no state. Exit 1 when a BC-breaking or deprecation item touches
the code (CI can gate an upgrade on it, as with ``diff --exit-code``), else 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from watcher.app import taxonomy_for
from watcher.cli.commands.offline import item_json
from watcher.cli.inputs import read_text
from watcher.config import Config
from watcher.errors import ConfigError
from watcher.impact import CodeRoot, ImpactAnalyzer, ItemImpact
from watcher.models import ClassifiedItem
from watcher.notes import Analyzer
from watcher.present import (
    KIND_NAMES,
    by_name_note,
    plural,
    unparsable_note,
    use_place,
    uses_in_files,
)
from watcher.untrusted import clean_line


def code_roots(dirs: list[str]) -> list[CodeRoot]:
    """Each ``--code`` directory, named in ``affects[].root`` as it was written."""
    roots = []
    for entry in dirs:
        path = Path(entry).expanduser()
        if not path.is_dir():
            problem = "not a directory" if path.exists() else "no such directory"
            raise ConfigError(f"--code {entry}: {problem}")
        roots.append(CodeRoot(entry, path))
    return roots


def run_impact(config: Config, out: IO[str], path: str, code: list[str], *,
               repo: str | None, fmt: str) -> bool:
    """Prints the report; True when a BC-breaking or deprecation item touches the code."""
    analyzer = ImpactAnalyzer(code_roots(code), warn_unparsable=False)  # the footer says it
    items = Analyzer(taxonomy_for(config), max_body_chars=config.poll.max_body_chars,
                     max_items=config.poll.max_items_per_release).items(read_text(path), repo=repo)
    found = [(item, analyzer.impact(item)) for item in items]
    breaking = any(impact is not None and impact.affects for _, impact in found)
    if fmt == "json":
        out.write(json.dumps(_json(found, analyzer), ensure_ascii=False, indent=2) + "\n")
    else:
        out.writelines(line + "\n" for line in _text(found, analyzer))
    return breaking


def _json(found: list[tuple[ClassifiedItem, ItemImpact | None]], analyzer: ImpactAnalyzer
          ) -> dict[str, object]:
    items = []
    for item, impact in found:
        entry = item_json(item)
        if impact is not None:
            entry["apis"] = impact.apis
            entry["affects"] = [use.to_json_dict() for use in impact.affects]
        items.append(entry)
    return {"items": items, "scanned": _scanned(analyzer)}


def _scanned(analyzer: ImpactAnalyzer) -> list[dict[str, object]]:
    return [{"root": root.label, "files": len(index.records),
             "unparsable": [{"path": path, "error": why} for path, why in index.unparsable]}
            for root, index in analyzer.indexes()]


def _text(found: list[tuple[ClassifiedItem, ItemImpact | None]], analyzer: ImpactAnalyzer
          ) -> list[str]:
    touching = [(item, impact) for item, impact in found if impact is not None and impact.affects]
    lines: list[str] = []
    for item, impact in touching:
        first = clean_line(item.text.split("\n", 1)[0])
        lines.append(f"{KIND_NAMES[item.kind]} [{item.subsystem}] {first}")
        lines.append(f"  changes: {', '.join(clean_line(api) for api in impact.apis)}")
        for use in impact.affects:
            where = f"{use.root}/{use_place(use)}" if len(analyzer.roots) > 1 else use_place(use)
            lines.append(f"  {clean_line(where)}  {clean_line(use.code)}{by_name_note(use)}")
        lines.append("")
    named = [impact for _, impact in found if impact is not None]
    uses = [use for _, impact in touching for use in impact.affects]
    lines.append(f"{plural(len(touching), 'BC-breaking or deprecation item')} touch the code "
                 f"({uses_in_files(uses)}); "
                 f"{len(named)} of {plural(len(found), 'item')} name an API that was looked for")
    for root, index in analyzer.indexes():
        note = f"{root.label}: {plural(len(index.records), 'file')} read"
        if index.unparsable:
            paths = [clean_line(path) for path, _ in index.unparsable]
            note += f"; {unparsable_note(len(paths), paths)}"
        lines.append(note)
    return lines
