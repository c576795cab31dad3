"""Measures `release-watch impact` on codebases its builders never looked at.

Runs ``impact --format json`` for every (release notes, codebase) pair, takes each BC-breaking or
deprecation item's files with a use in tier ``breaks`` or ``check`` as flagged (item, file) pairs
(``mentions`` are not claims that the change reaches the code), and compares them with a
hand-judged truth file: a JSON list of
``{"release", "item", "codebase", "path", "verdict": "true"|"false"|"unsure", "reason"}``
where ``item`` is the first 60 characters of the item's first line. ``unsure`` pairs count
neither way. Flagged pairs missing from the truth file are listed as unjudged (not counted).

Prints per codebase and overall: flagged pairs, right, precision, true pairs, found, recall, and
the same precision over the pairs whose surest tier is ``breaks`` (a pair with one use in
``breaks`` and others in ``check`` is a ``breaks`` pair).

    python scripts/eval_impact.py --heldout DIR --truth scripts/impact_truth/unseen.json \
        [--details] [--uses] [--releases v2.10.0,v2.11.0]

A file judged true both under a notes item and under a ``(package)`` key of the same release
(one use, judged twice) counts once, as the notes item's pair.

``--releases`` limits the run (and the truth it is measured against) to those notes.

``--uses`` prints every flagged use (tier, path:line, code, why) under its item, to judge from.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

NOTES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "releases" / "pytorch"
RELEASES = ("v2.5.0", "v2.6.0-torch-load", "v2.7.0", "v2.8.0", "v2.9.0", "v2.10.0", "v2.11.0")
KINDS = {"bc_breaking", "deprecation"}
TIERS = {"breaks", "check"}
PACKAGE_KEY = "(package)"  # a truth key for a change the package shows and no item names


def item_key(text: str) -> str:
    return text.splitlines()[0][:60]


def flagged_pairs(release: str, code: Path, uses: list[str] | None = None
                  ) -> dict[tuple[str, str, str, str], str]:
    """(release, item, codebase, path) -> surest tier, for every file the tool says an item
    touches; each use described into ``uses`` when given."""
    cmd = [sys.executable, "-m", "watcher", "impact", str(NOTES / f"{release}.md"),
           "--code", str(code), "--format", "json"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"impact failed on {release} / {code.name}:\n{run.stderr}")
    pairs: dict[tuple[str, str, str, str], str] = {}
    for item in json.loads(run.stdout)["items"]:
        if item["kind"] in KINDS:
            for use in item.get("affects") or []:
                tier = use.get("tier", "breaks")
                if tier not in TIERS:
                    continue
                pair = (release, item_key(item["text"]), code.name, use["path"])
                if pairs.get(pair) != "breaks":
                    pairs[pair] = tier
                if uses is not None:
                    uses.append(f"{release} | {item_key(item['text'])} | {code.name}/"
                                f"{use['path']}:{use['line']} [{use.get('tier')}] "
                                f"{use['code'][:90]}  -- {use.get('why', '')}")
    return pairs


def ratio(a: int, b: int) -> str:
    return f"{a / b:6.1%}" if b else "     -"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heldout", type=Path, required=True, help="directory of unpacked codebases")
    ap.add_argument("--truth", type=Path, required=True, help="judged (item, file) pairs")
    ap.add_argument("--details", action="store_true", help="list false alarms, misses, unjudged")
    ap.add_argument("--uses", action="store_true", help="print every flagged use, to judge")
    ap.add_argument("--releases", type=lambda s: tuple(s.split(",")), default=RELEASES,
                    help=f"comma-separated notes to run (default: {','.join(RELEASES)})")
    args = ap.parse_args()
    if unknown := set(args.releases) - set(RELEASES):
        ap.error(f"unknown release(s): {', '.join(sorted(unknown))}")

    truth = {(t["release"], t["item"], t["codebase"], t["path"]): t
             for t in json.loads(args.truth.read_text()) if t["release"] in args.releases}
    codebases = sorted(p.name for p in args.heldout.iterdir()
                       if p.is_dir() and not p.name.startswith("_"))
    tiers: dict[tuple[str, str, str, str], str] = {}
    described: list[str] = []
    for release in args.releases:
        for cb in codebases:
            tiers |= flagged_pairs(release, args.heldout / cb,
                                   described if args.uses else None)
    flagged = set(tiers)
    if args.uses:
        print("\n".join(sorted(described)), end="\n\n")

    def verdict(pair):
        return truth[pair]["verdict"] if pair in truth else None

    # A file judged true under a notes item and again under a "(package)" key of the same
    # release is one finding judged twice: the tool reports each use once, under the item that
    # speaks of it. The notes item's pair is the one counted.
    true_files = {(r, cb, path) for (r, item, cb, path), t in truth.items()
                  if t["verdict"] == "true" and not item.startswith(PACKAGE_KEY)}

    def double_key(pair):
        return pair[1].startswith(PACKAGE_KEY) and (pair[0], pair[2], pair[3]) in true_files

    rows = []
    for cb in [*codebases, "overall"]:
        scope = set(codebases) if cb == "overall" else {cb}
        judged = [p for p in flagged if p[2] in scope and verdict(p) in ("true", "false")]
        right = sum(verdict(p) == "true" for p in judged)
        true_pairs = [p for p, t in truth.items() if p[2] in scope and t["verdict"] == "true"
                      and not double_key(p)]
        found = sum(p in flagged for p in true_pairs)
        breaks = [p for p in judged if tiers[p] == "breaks"]
        breaks_right = sum(verdict(p) == "true" for p in breaks)
        rows.append((cb, len(judged), right, len(true_pairs), found, len(breaks), breaks_right))

    print(f"{'codebase':30} {'flagged':>7} {'right':>5} {'prec':>6} "
          f"{'true':>5} {'found':>5} {'recall':>6}   {'breaks':>6} {'right':>5} {'prec':>6}")
    for cb, n, right, t, found, nb, rb in rows:
        print(f"{cb:30} {n:7} {right:5} {ratio(right, n)} {t:5} {found:5} {ratio(found, t)}   "
              f"{nb:6} {rb:5} {ratio(rb, nb)}")

    unjudged = sorted(p for p in flagged if p not in truth)
    unsure = sorted(p for p in flagged if verdict(p) == "unsure")
    print(f"\nunsure flagged pairs (not counted): {len(unsure)}; "
          f"unjudged flagged pairs: {len(unjudged)}")
    if args.details:
        for title, pairs in (
            ("FALSE ALARMS", sorted(p for p in flagged if verdict(p) == "false")),
            ("MISSES", sorted(p for p, t in truth.items()
                              if t["verdict"] == "true" and p not in flagged
                              and not double_key(p))),
            ("UNJUDGED", unjudged),
        ):
            print(f"\n{title} ({len(pairs)})")
            for p in pairs:
                why = truth[p]["reason"] if p in truth else ""
                tier = f" [{tiers[p]}]" if p in tiers else ""
                print(f"  {p[0]} | {p[1]} | {p[2]}/{p[3]}{tier}\n      {why}")


if __name__ == "__main__":
    main()
