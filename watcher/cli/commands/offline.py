"""``release-watch classify`` and ``diff``: offline, no network, no state."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import PurePath
from typing import IO

from watcher.cli.inputs import read_text
from watcher.cli.outputs import item_json
from watcher.config import Config
from watcher.delivery import event_item
from watcher.notes import (
    Analyzer,
    Classifier,
    Decision,
    diff_items,
    is_patch_release,
    parse_notes,
    taxonomy_for,
)
from watcher.present import CHANGE_SIGNS, UNSURE_BELOW, hyperlinks_for, plural, show_links
from watcher.untrusted import clean_line

logger = logging.getLogger(__name__)


def _footer(decisions: list[Decision], repo: str | None) -> str:
    """``512 items (pytorch/pytorch): 505 by heading, 0 by PR label, 3 by rule, 4 by model``."""
    deciders: Counter[str] = Counter(d.item.decided_by for d in decisions)
    names = {"heading": "heading", "label": "PR label", "rule": "rule", "model": "model"}
    parts = [f"{deciders[key]} by {name}" for key, name in names.items()]
    unsure = sum(1 for d in decisions if d.item.confidence < UNSURE_BELOW)
    where = f" ({repo})" if repo else ""
    return (f"{plural(len(decisions), 'item')}{where}: {', '.join(parts)}"
            + (f"; {unsure} unsure (confidence < {UNSURE_BELOW})" if unsure else ""))


def _first_line(text: str, repo: str | None, out: IO[str]) -> str:
    """An item's first line as the console shows it: controls escaped, ``[#123](url)`` as
    ``#123`` (an OSC 8 hyperlink on a terminal; bare ``#123`` linked only when the repo is
    known, else it would point into the wrong repository)."""
    return show_links(clean_line(text.split("\n", 1)[0]), repo or "",
                      hyperlinks=bool(repo) and hyperlinks_for(out))


def run_classify(config: Config, out: IO[str], path: str, *, repo: str | None, fmt: str,
                 explain: bool) -> None:
    taxonomy = taxonomy_for(config)
    body = read_text(path)
    notes = parse_notes(body, lookup=taxonomy, max_chars=config.poll.max_body_chars)
    if notes.truncated:
        logger.warning("%s is %s characters; items were taken from the first %s "
                       "(poll.max_body_chars)", path, f"{len(body):,}",
                       f"{config.poll.max_body_chars:,}")
    classifier = Classifier(taxonomy)
    patch = is_patch_release(PurePath(path).stem)  # "v2.7.1.md": a patch release's notes
    decisions = [classifier.explain(item, repo=repo, patch=patch) for item in notes.items]
    if fmt == "json":
        items = []
        for decision in decisions:
            entry = item_json(decision.item)
            if explain:
                entry["why"] = {"subsystem": decision.subsystem_reason,
                                "kind": decision.kind_reason}
            items.append(entry)
        extra = {"unknown_headings": notes.unknown_headings} if explain else {}
        out.write(json.dumps({"items": items, **extra}, ensure_ascii=False, indent=2) + "\n")
        return
    for decision in decisions:
        item = decision.item
        first = _first_line(item.text, repo, out)
        decider = f"{item.decided_by} {item.confidence:.2f}"
        out.write(f"{item.subsystem:<28} {item.kind:<12} {decider:<13} {first}\n")
        if explain:
            out.write(f"{'':<28} subsystem: {decision.subsystem_reason}\n")
            out.write(f"{'':<28} kind: {decision.kind_reason}\n")
    if explain and notes.unknown_headings:
        out.write("\nheadings the taxonomy does not know (add them under [classify] headings "
                  "if they name an area):\n")
        out.writelines(f"  {clean_line(heading)}\n" for heading in notes.unknown_headings)
    out.write(f"\n{_footer(decisions, repo)}\n")


def run_diff(config: Config, out: IO[str], old_path: str, new_path: str, *, fmt: str) -> int:
    """Prints the item-level diff; returns how many items were added, removed or changed."""
    analyzer = Analyzer(taxonomy_for(config), max_body_chars=config.poll.max_body_chars,
                        max_items=config.poll.max_items_per_release)
    changes = diff_items(analyzer.items(read_text(old_path)), analyzer.items(read_text(new_path)))
    items = [event_item(change) for change in changes]
    if fmt == "json":
        data = [item.model_dump(mode="json", exclude_none=True) for item in items]
        out.write(json.dumps({"items": data}, ensure_ascii=False, indent=2) + "\n")
        return len(items)
    for item in items:
        first = _first_line(item.text, None, out)
        out.write(f"{CHANGE_SIGNS[item.change]} [{item.subsystem}] {first}\n")
        if item.old_text is not None:
            out.write(f"    was: {_first_line(item.old_text, None, out)}\n")
    out.write(f"\n{plural(len(items), 'item')} changed\n" if items else "no item changed\n")
    return len(items)
