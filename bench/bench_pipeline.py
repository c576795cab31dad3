"""Parse, classify and diff the largest release notes, stage by stage (median of 7 runs).

Notes: PyTorch v2.7.0 (the largest real fixture), and a synthetic one made by concatenating the
v2.7.0 and v2.8.0 notes. Baseline: markdown-it tokenizing the same text with the parser's own
preset, the floor under any parse. The analyzer is built as ``build_runtime`` builds it (the
built-in taxonomy, the shipped model) and warmed once, so one-off loading is not timed.

Also shows that a poll where nothing changed parses nothing: ``parse_notes`` calls counted
during a 304 poll of the two default repos on the loopback fake GitHub.
"""

from __future__ import annotations

import io
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from run_all import (
    TOKEN,
    Row,
    fake_github,
    median_time,
    print_table,
    release_notes,
    seconds,
    times,
    verdict,
)

import watcher.notes.parse
from watcher.app import Dependencies, build_runtime
from watcher.config import Secrets, config_from_dict
from watcher.models import ClassifiedItem
from watcher.notes import taxonomy_for
from watcher.notes.analyze import Analyzer
from watcher.notes.diff import diff_items
from watcher.notes.parse import parse_notes

REPEAT = 7
TARGET = 0.2  # seconds for parse + classify of one release


def analyzer() -> Analyzer:
    config = config_from_dict({}, base_dir=Path.cwd(), source="bench_pipeline")
    return Analyzer(taxonomy_for(config), max_body_chars=config.poll.max_body_chars)


def edited(body: str) -> str:
    """The same notes after a typical edit: every 20th bullet reworded, every 50th removed,
    three bullets added near the top."""
    lines = body.split("\n")
    bullets = [index for index, line in enumerate(lines) if line.startswith("- ")]
    for count, index in enumerate(bullets):
        if count % 50 == 49:
            lines[index] = ""
        elif count % 20 == 19:
            lines[index] += " (clarified after release)"
    first = bullets[0]
    added = [f"- Added a note about case {n} that was missing (#{99990 + n})" for n in range(3)]
    return "\n".join([*lines[:first], *added, *lines[first:]])


def stage_rows(label: str, body: str, analyze: Analyzer) -> tuple[list[Row], list[ClassifiedItem]]:
    tokenizer = MarkdownIt("commonmark", {"html": True})  # the preset watcher/notes.py uses

    def parse() -> Any:
        return parse_notes(body, lookup=analyze.taxonomy,
                           max_chars=analyze.max_body_chars)

    parsed = parse().items
    items = analyze.items(body)
    changed = analyze.items(edited(body))
    tokenize = median_time(lambda: tokenizer.parse(body), repeat=REPEAT)
    parsing = median_time(parse, repeat=REPEAT)
    classify = median_time(lambda: analyze.classifier.classify_all(parsed), repeat=REPEAT)
    both = median_time(lambda: analyze.items(body), repeat=REPEAT)
    diff = median_time(lambda: diff_items(items, changed), repeat=REPEAT)
    changes = len(diff_items(items, changed))
    floor = f"{seconds(tokenize)} tokenize"
    rows = [
        Row(f"{label}: markdown-it tokenize only", seconds(tokenize), "-",
            f"{len(body) / 1024:.0f} KB, {len(items)} items"),
        Row(f"{label}: parse", seconds(parsing), floor, times(parsing / tokenize)),
        Row(f"{label}: classify", seconds(classify), floor,
            f"{times(classify / tokenize)}; {len(parsed) / classify:,.0f} items/s"),
        Row(f"{label}: parse + classify", seconds(both), floor,
            f"{times(both / tokenize)}; {len(items) / both:,.0f} items/s; "
            + verdict(both <= TARGET, f"<= {TARGET:g} s")),
        Row(f"{label}: diff against an edited copy", seconds(diff), floor,
            f"{times(diff / tokenize)}; {changes} changes found"),
    ]
    return rows, items


@contextmanager
def counting_parse_notes() -> Iterator[list[int]]:
    """Counts ``parse_notes`` calls wherever a module imported it by name."""
    original = watcher.notes.parse.parse_notes
    calls = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    holders = [module for name, module in list(sys.modules.items())
               if name.split(".")[0] in {"watcher", "handlers"}
               and getattr(module, "parse_notes", None) is original]
    for module in holders:
        module.parse_notes = counted  # type: ignore[attr-defined]
    try:
        yield calls
    finally:
        for module in holders:
            module.parse_notes = original  # type: ignore[attr-defined]


def parses_per_poll() -> tuple[int, int, int]:
    """``parse_notes`` calls in a first poll, a no-change (304) poll, and an edit poll."""
    fake = fake_github()
    try:
        fake.set_token(TOKEN)
        fake.add_release("pytorch/pytorch", tag="v2.7.0", body=release_notes("pytorch/v2.7.0.md"))
        newest = fake.add_release("pytorch/pytorch", tag="v2.8.0",
                                  body=release_notes("pytorch/v2.8.0.md"))
        fake.add_release("pytorch/xla", tag="v2.0.0", body=release_notes("xla/v2.0.0.md"))
        with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
            config = config_from_dict({"github": {"api_url": fake.url},
                                       "store": {"path": "store"}, "notifiers": []},
                                      base_dir=Path(tmp), source="bench_pipeline")
            deps = Dependencies(stdout=io.StringIO(), secrets=Secrets(GITHUB_TOKEN=TOKEN))
            runtime = build_runtime(config, deps)

            def counted_poll() -> int:
                with counting_parse_notes() as calls:
                    report = runtime.poller.poll(runtime.poller.watched()[0])
                if report.failed:
                    raise RuntimeError(f"bench poll failed: {report.failed[0].error}")
                return calls[0]

            try:
                first, unchanged = counted_poll(), counted_poll()
                fake.edit_release("pytorch/pytorch", newest["id"], body=edited(newest["body"]))
                edit = counted_poll()
            finally:
                runtime.close()
    finally:
        fake.stop()
    return first, unchanged, edit


def run() -> list[Row]:
    analyze = analyzer()
    analyze.items(release_notes("xla/v2.0.0.md"))  # loads the model once, outside the timings
    v27, v28 = release_notes("pytorch/v2.7.0.md"), release_notes("pytorch/v2.8.0.md")
    rows, items_27 = stage_rows("notes v2.7.0", v27, analyze)
    rows += stage_rows("notes v2.7.0 + v2.8.0", f"{v27}\n\n{v28}", analyze)[0]
    items_28 = analyze.items(v28)
    worst = median_time(lambda: diff_items(items_27, items_28), repeat=REPEAT)
    tokenize = median_time(lambda: MarkdownIt("commonmark", {"html": True}).parse(v27),
                           repeat=REPEAT)
    rows.append(Row("diff v2.7.0 -> v2.8.0 notes (nothing matches)", seconds(worst),
                    f"{seconds(tokenize)} tokenize v2.7.0",
                    f"{times(worst / tokenize)}; {len(items_27)} x {len(items_28)} items"))
    first, unchanged, edit = parses_per_poll()
    rows.append(Row("no-change poll (2 repos, real notes): parse_notes calls", str(unchanged),
                    f"{first} in the first poll, {edit} in an edit poll",
                    "ok: a 304 parses nothing" if unchanged == 0 else "MISSED: parsed"))
    return rows


if __name__ == "__main__":
    print_table(run())
