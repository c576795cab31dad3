"""``release-watch impact``: which items of one or more release-notes files (or of the releases
the store knows over a range) touch a codebase, every use as ``path:line`` with its tier;
offline, no state written. Exit 1 when a use is in tier ``breaks`` (``--fail-on check``: also
``check``), so CI can gate an upgrade on it, else 0."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, NamedTuple

from packaging.version import InvalidVersion, Version

from watcher.cli.commands.impact_report import Found, report_json, report_text, upgrade
from watcher.cli.inputs import read_text
from watcher.config import Config
from watcher.errors import ConfigError
from watcher.impact import (
    CodeRoot,
    ImpactAnalyzer,
    ReleaseAnalysis,
    Suppression,
    Suppressor,
    package_changes,
    read_baseline,
    write_baseline,
)
from watcher.notes import Analyzer, with_overrides
from watcher.present import plural

if TYPE_CHECKING:
    from watcher.impact.atlas import AtlasSource
    from watcher.impact.atlas.source import Shelf

DEFAULT_REPO = "pytorch/pytorch"
XLA_REPO = "pytorch/xla"
OPENING = 2_000  # characters of prose before the first heading read for whose notes they are
XLA_HEADING = re.compile(r"pytorch\s*/\s*xla|torch[_-]xla", re.IGNORECASE)
# "v2.7.0.md", "pytorch-v2.10.0-notes.md"; "# PyTorch 2.7.0 Release Notes", "## v2.7.0".
TAG_IN_NAME = re.compile(r"(?<![\w.])(v?\d+\.\d+(?:\.\d+)?(?:[-.]?rc\d+)?)(?![\w])")
HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.MULTILINE)


class Notes(NamedTuple):
    """One release's notes: its tag (None when it cannot be told) and body."""

    release: str | None
    body: str


def code_roots(dirs: list[str]) -> list[CodeRoot]:
    """Each ``--code`` directory, named in ``affects[].root`` as it was written."""
    roots = []
    for entry in dirs:
        path = Path(entry).expanduser()
        if not path.is_dir():
            problem = "not a directory" if path.exists() else "no such directory"
            raise ConfigError(f"--code {entry}: {problem}")
        roots.append(CodeRoot(entry, path, name=path.resolve().name))
    return roots


def run_impact(config: Config, out: IO[str], paths: list[str], code: list[str], *,
               repo: str | None, fmt: str, release: str | None = None,
               releases: list[Notes] | None = None, show_all: bool = False,
               fail_on: str = "breaks", baselines: tuple[str, ...] = (),
               write_baseline: str | None = None) -> bool:
    """Prints the report; True when a use is in a failing tier. ``releases``: the notes of a
    ``--range``, read from the store by the caller. ``baselines``: files of accepted uses;
    ``write_baseline``: write every use of ``breaks`` and ``check`` found to that file (and
    fail on none: the team accepts what is there now)."""
    notes = releases if releases is not None else notes_files(paths, release)
    suppressor = Suppressor.of(baseline=[entry for path in baselines
                                         for entry in read_baseline(path)])
    # The footer names unparsable files; one scan, so no per-file cache is made.
    analyzer = ImpactAnalyzer(code_roots(code), warn_unparsable=False, cached=False)
    # The taxonomy as ``watcher.app.taxonomy_for`` makes it, without importing the bot's
    # composition root (HTTP clients, notifiers): a CI run of this command pays for neither.
    taxonomy = with_overrides(config.classify.headings, config.classify.rule_patterns())
    reader = Analyzer(taxonomy, max_body_chars=config.poll.max_body_chars,
                      max_items=config.poll.max_items_per_release)
    with stored_atlases(config) as shelf:
        source = package_source(config, shelf) if any(entry.release for entry in notes) \
            else None
        found = analysed(notes, source, reader, analyzer, taxonomy.apis.owner, repo, suppressor)
    found = upgrade(found) if len(notes) > 1 else found
    if write_baseline is not None:
        written = write_baseline_file(write_baseline, found)
        out.write(f"{plural(written, 'use')} written to {write_baseline} (pass it as "
                  f"--baseline to keep them out of the tiers)\n")
        return False
    failing = {"breaks"} | ({"check"} if fail_on == "check" else set())
    fails = any(use.tier in failing for entry in found if entry.impact
                for use in entry.impact.affects)
    if fmt == "json":
        out.write(json.dumps(report_json(found, analyzer, show_all), ensure_ascii=False,
                             indent=2) + "\n")
    else:
        out.writelines(line + "\n" for line in report_text(found, analyzer, show_all))
    return fails


def analysed(notes: list[Notes], source: AtlasSource | None, reader: Analyzer,
             analyzer: ImpactAnalyzer, owner: Callable[[str], str | None], repo: str | None,
             suppressor: Suppressor) -> list[Found]:
    """Each release's items with their impact, its package joined where its atlases can be
    had; the repo is ``--repo``, else the one the notes name in their first heading."""
    found: list[Found] = []
    for entry in notes:
        whose = repo or repo_of(entry.body)
        package = (package_changes(source, whose, entry.release)
                   if source is not None and entry.release else None)
        analysis = ReleaseAnalysis(analyzer, entry.release, package, owner=owner,
                                   suppressor=suppressor)
        for item in reader.items(entry.body, repo=whose):
            found.append(Found(item, analysis.of(item), entry.release))
        found += [Found(item, impact, entry.release, "package")
                  for item, impact in analysis.unmentioned()]
    return found


def repo_of(body: str) -> str:
    """Whose notes these are: pytorch/xla where the first heading names PyTorch/XLA (or
    torch_xla), or where there is none naming PyTorch and the opening prose does ("Cloud TPUs
    now support the PyTorch 2.0 release, via PyTorch/XLA integration"); else pytorch/pytorch."""
    heading = first_heading(body)
    if XLA_HEADING.search(heading):
        return XLA_REPO
    first = HEADING.search(body)
    opening = body[:first.start()] if first is not None else body
    if "pytorch" not in heading.lower() and XLA_HEADING.search(opening[:OPENING]):
        return XLA_REPO
    return DEFAULT_REPO


@contextmanager
def stored_atlases(config: Config) -> Iterator[Shelf | None]:
    """The atlases the store keeps (a poll's, an ``atlas build``'s), read only; None where
    there is no store yet."""
    from watcher.store.atlases import StoredAtlases
    from watcher.store.db import DB_NAME

    url = config.store_url()
    if url is not None:
        from watcher.store import Store
        from watcher.store.tablekeys import TableKeys

        store = Store.connect(url, read_only=True)
        try:
            yield StoredAtlases(TableKeys(store.db))
        finally:
            store.close()
        return
    path = config.store_path()
    if not (path / DB_NAME).is_file():
        yield None
        return
    from watcher.store.cachekeys import CacheKeys

    keys = CacheKeys(path)
    try:
        yield StoredAtlases(keys)
    finally:
        keys.close()


def write_baseline_file(path: str, found: list[Found]) -> int:
    """Every use in ``breaks`` or ``check`` (those already suppressed too: a baseline written
    again keeps what the last one accepted), as baseline entries."""
    entries = [Suppression.of(entry.item, use) for entry in found if entry.impact
               for use in [*entry.impact.affects, *(s.use for s in entry.impact.suppressed)]
               if use.tier != "mentions"]
    return write_baseline(path, entries)


def package_source(config: Config, shelf: Shelf | None = None) -> AtlasSource:
    """Atlases for the offline command: bundled, stored (``shelf``), else built from the
    package index's wheel (``[impact] package_index``); nothing is kept, as the command
    writes no state."""
    from watcher.impact.atlas import AtlasSource, Budget, PackageIndex

    index = PackageIndex(config.impact.package_index, budget=Budget.of(config.impact),
                         hosts=tuple(config.impact.package_hosts))
    return AtlasSource(store=shelf, index=index, clock=lambda: datetime.now(UTC))


def notes_files(paths: list[str], release: str | None) -> list[Notes]:
    """Each file's notes with its release: ``--release`` for a single file, else read from
    the file's name or its first heading."""
    if release is not None and len(paths) > 1:
        raise ConfigError("--release names the release of a single notes file; with several, "
                          "each is read from its file name or first heading")
    notes = []
    for path in paths:
        body = read_text(path)
        notes.append(Notes(release or release_of(path, body), body))
    return notes


def release_of(path: str, body: str) -> str | None:
    """``v2.7.0`` from ``v2.7.0.md`` or from a first heading ``PyTorch 2.7.0 Release Notes``."""
    for text in (Path(path).name if path != "-" else "", first_heading(body)):
        match = TAG_IN_NAME.search(text)
        if match:
            tag = match.group(1)
            return tag if tag.startswith("v") else "v" + tag
    return None


def first_heading(body: str) -> str:
    match = HEADING.search(body)
    return match.group(1) if match else ""


def releases_in_range(records: list[tuple[str, str]], span: str) -> list[Notes]:
    """The releases (tag, body) whose version is within ``FROM..TO`` (both included), oldest
    first; ``ConfigError`` for a range that does not read or holds no known release."""
    start, dots, end = span.partition("..")
    if not dots or not start or not end:
        raise ConfigError(f"--range {span}: write FROM..TO, e.g. v2.5.0..v2.10.0")
    low, high = version_of(start), version_of(end)
    if low is None or high is None:
        raise ConfigError(f"--range {span}: FROM and TO must be versions, e.g. v2.5.0..v2.10.0")
    chosen = sorted(((version, tag, body) for tag, body in records
                     if (version := version_of(tag)) is not None and low <= version <= high),
                    key=lambda entry: entry[0])
    if not chosen:
        raise ConfigError(f"--range {span}: the store knows no release in it "
                          f"({len(records)} known; run `release-watch poll` first)")
    return [Notes(tag, body) for _, tag, body in chosen]


def version_of(tag: str) -> Version | None:
    try:
        return Version(tag.strip().removeprefix("v"))
    except InvalidVersion:
        return None


def stored_releases(config: Config, repo: str | None) -> list[tuple[str, str]]:
    """(tag, body) of every release of ``repo`` (pytorch/pytorch) the store knows, read
    without writing to it."""
    from watcher.store import Store

    store = Store.open(config.store_path(), read_only=True)
    try:
        records = store.release_records(repo or DEFAULT_REPO)
    finally:
        store.close()
    return [(record.release.tag_name, record.release.body or "") for record in records.values()]
