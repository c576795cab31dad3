"""``release-watch classify`` and ``diff``: offline, no network, no state."""

from __future__ import annotations

import json
from typing import IO

from watcher.app import taxonomy_for
from watcher.cli import read_text
from watcher.config import Config
from watcher.events import event_item
from watcher.models import ClassifiedItem
from watcher.notes.analyze import Analyzer
from watcher.notes.classify import Classifier
from watcher.notes.diff import diff_items
from watcher.notes.parse import parse_notes


def _item_json(item: ClassifiedItem) -> dict[str, object]:
    return dict(item.model_dump(mode="json",
                                include={"subsystem", "kind", "text", "section", "prs"}))


def run_classify(config: Config, out: IO[str], path: str, *, repo: str | None, fmt: str,
                 explain: bool) -> None:
    taxonomy = taxonomy_for(config)
    notes = parse_notes(read_text(path), lookup=taxonomy,
                        max_chars=config.poll.max_body_chars)
    classifier = Classifier(taxonomy)
    decisions = [classifier.explain(item) for item in notes.items]
    if fmt == "json":
        items = []
        for decision in decisions:
            entry = _item_json(decision.item)
            if explain:
                entry["why"] = {"subsystem": decision.subsystem_reason,
                                "kind": decision.kind_reason}
            items.append(entry)
        out.write(json.dumps({"items": items}, ensure_ascii=False, indent=2) + "\n")
        return
    for decision in decisions:
        item = decision.item
        first = item.text.split("\n", 1)[0]
        out.write(f"{item.subsystem:<28} {item.kind:<12} {first}\n")
        if explain:
            out.write(f"{'':<28} subsystem: {decision.subsystem_reason}\n")
            out.write(f"{'':<28} kind: {decision.kind_reason}\n")
    where = f" ({repo})" if repo else ""
    out.write(f"\n{len(decisions)} items{where}\n")


def run_diff(config: Config, out: IO[str], old_path: str, new_path: str, *, fmt: str) -> int:
    """Prints the item-level diff; returns how many items were added, removed or changed."""
    analyzer = Analyzer(taxonomy_for(config), max_body_chars=config.poll.max_body_chars)
    changes = diff_items(analyzer.items(read_text(old_path)), analyzer.items(read_text(new_path)))
    items = [event_item(change) for change in changes]
    if fmt == "json":
        data = [item.model_dump(mode="json", exclude_none=True) for item in items]
        out.write(json.dumps({"items": data}, ensure_ascii=False, indent=2) + "\n")
        return len(items)
    signs = {"added": "+", "removed": "-", "changed": "~"}
    for item in items:
        out.write(f"{signs[item.change]} [{item.subsystem}] {item.text.split(chr(10), 1)[0]}\n")
        if item.old_text is not None:
            out.write(f"    was: {item.old_text.split(chr(10), 1)[0]}\n")
    out.write(f"\n{len(items)} items changed\n" if items else "no item changed\n")
    return len(items)
