"""The report as a SARIF 2.1.0 log (OASIS, "Static Analysis Results Interchange Format
Version 2.1.0", errata 01): what GitHub code scanning, GitLab and most CI dashboards read.

One rule per item (a release-notes item or an API change of the package), one result per use:
``level`` from the tier (``error`` breaks, ``warning`` check, ``note`` mentions), the use's
``why`` as its message, the line of code as the region's snippet, the path relative to its
codebase's root (``uriBaseId`` names the root, ``originalUriBaseIds`` says where it is). A
suppressed use is a result with SARIF ``suppressions`` (§3.35: ``inSource`` for an ignore
comment, ``external`` for a baseline or the store's "Not us"). ``partialFingerprints`` name a
use by what survives an edit elsewhere in its file (its rule, codebase, path, API and line of
code, and which of the same lines it is), so code scanning keeps an alert across line moves.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from watcher.models import Affect, Tier
from watcher.present import KIND_NAMES
from watcher.report.found import Found, Scope, change_id, shown_uses

__all__ = ["SCHEMA", "sarif_log"]

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/release-watch"
LEVELS: dict[Tier, str] = {"breaks": "error", "check": "warning", "mentions": "note"}
SUPPRESSION_KINDS = {"inline": "inSource", "baseline": "external", "store": "external"}
JUSTIFICATIONS = {"inline": "an ignore comment on the line",
                  "baseline": "listed in a baseline file (--baseline)",
                  "store": "\"Not us\" kept in the store (--suppressions store)"}
FINGERPRINT = "releaseWatchUse/v1"
DESCRIPTION_LIMIT = 1000  # characters of an item's text a rule's full description keeps


def sarif_log(found: list[Found], scope: Scope) -> dict[str, Any]:
    """The whole log: one run of release-watch over every codebase."""
    rules: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    seen: Counter[str] = Counter()
    for entry in found:
        uses: list[tuple[Affect, str | None]] = [
            (use, None) for use in shown_uses(entry, scope.show_all)]
        uses += [(use, how) for use, how in entry.impact.suppressed] if entry.impact else []
        if not uses:
            continue
        rule = change_id(entry)
        if rule not in rules:
            rules[rule] = _rule(rule, entry, scope)
        index = list(rules).index(rule)
        for use, how in uses:
            results.append(_result(rule, index, use, how, seen))
    driver: dict[str, Any] = {"name": "release-watch", "informationUri": INFORMATION_URI,
                              "rules": list(rules.values())}
    if scope.tool_version:
        driver["semanticVersion"] = scope.tool_version
    run: dict[str, Any] = {"tool": {"driver": driver}, "results": results,
                           "columnKind": "unicodeCodePoints"}
    bases = _bases(scope)
    if bases:
        run["originalUriBaseIds"] = bases
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def _rule(rule: str, entry: Found, scope: Scope) -> dict[str, Any]:
    item = entry.item
    first = item.text.split("\n", 1)[0].strip()
    kind = KIND_NAMES.get(item.kind, item.kind)
    when = f" in {entry.release}" if entry.release else ""
    found: dict[str, Any] = {
        "id": rule,
        "name": f"{kind}{when}",
        "shortDescription": {"text": f"{kind}{when}: {first}"[:DESCRIPTION_LIMIT]},
        "fullDescription": {"text": item.text[:DESCRIPTION_LIMIT]},
        "defaultConfiguration": {"level": "error" if item.kind == "bc_breaking"
                                 else "warning"},
        "properties": {"tags": [item.kind, item.subsystem, entry.origin],
                       "apis": list(entry.impact.apis) if entry.impact else [],
                       **({"release": entry.release} if entry.release else {})},
    }
    if entry.release:
        found["helpUri"] = f"https://github.com/{scope.repo}/releases/tag/{entry.release}"
    return found


def _result(rule: str, index: int, use: Affect, how: str | None, seen: Counter[str]
            ) -> dict[str, Any]:
    place = "\n".join((rule, use.codebase or use.root, use.path, use.api, use.code.strip()))
    seen[place] += 1  # the same call on two lines: the first, the second, ...
    digest = hashlib.sha256(f"{place}\n{seen[place]}".encode()).hexdigest()
    result: dict[str, Any] = {
        "ruleId": rule,
        "ruleIndex": index,
        "level": LEVELS[use.tier],
        "message": {"text": use.why or f"uses {use.api}, which this change touches"},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": use.path, "uriBaseId": _base_id(use.root)},
            "region": {"startLine": use.line, "snippet": {"text": use.code}}}}],
        "partialFingerprints": {FINGERPRINT: digest[:32]},
        "properties": {"tier": use.tier, "api": use.api, "source": use.source,
                       "codebase": use.codebase or use.root,
                       **({"release": use.release} if use.release else {})},
    }
    if how is not None:
        result["suppressions"] = [{"kind": SUPPRESSION_KINDS[how], "status": "accepted",
                                   "justification": JUSTIFICATIONS[how]}]
    return result


def _base_id(label: str) -> str:
    """The name a codebase's root goes by in the log (``%SRCROOT%`` style, SARIF §3.14.14)."""
    return "CODE_" + hashlib.sha256(label.encode()).hexdigest()[:8].upper()


def _bases(scope: Scope) -> dict[str, Any]:
    """Each codebase's root as an absolute ``file:`` URI ending in ``/`` (SARIF §3.14.14)."""
    return {_base_id(root.label): {"uri": root.path.resolve().as_uri().rstrip("/") + "/",
                                   "description": {"text": f"the codebase {root.codebase}"}}
            for root in scope.roots}
