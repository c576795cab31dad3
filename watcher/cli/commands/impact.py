"""``release-watch impact``: which items of one or more release-notes files (or of the releases
the store knows over a range) touch a codebase, every use as ``path:line`` with its tier;
offline, no state written. Exit 1 when a use is in tier ``breaks`` (``--fail-on check``: also
``check``), so CI can gate an upgrade on it, else 0."""

from __future__ import annotations

import json
import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, NamedTuple

from packaging.version import InvalidVersion, Version

from watcher.cli.commands.impact_report import report_json, report_text
from watcher.cli.commands.impact_sources import (
    DEFAULT_REPO,
    first_heading,
    repo_of,
    stored_atlases,
)
from watcher.cli.inputs import read_text
from watcher.config import Config
from watcher.errors import ConfigError
from watcher.impact import (
    CodeRoot,
    ImpactAnalyzer,
    ReleaseAnalysis,
    Suppression,
    Suppressor,
    own_knowledge,
    package_changes,
    read_baseline,
    write_baseline,
)
from watcher.models import Tier
from watcher.notes import Analyzer, with_overrides
from watcher.present import plural
from watcher.report import Found, Scope, sarif_log, under_releases, workflow_commands

if TYPE_CHECKING:
    from watcher.impact.atlas import AtlasSource, Shelf

# "v2.7.0.md", "pytorch-v2.10.0-notes.md"; "# PyTorch 2.7.0 Release Notes", "## v2.7.0".
TAG_IN_NAME = re.compile(r"(?<![\w.])(v?\d+\.\d+(?:\.\d+)?(?:[-.]?rc\d+)?)(?![\w])")


@dataclass(frozen=True)
class Preamble:
    """What a command says before the report: text lines, and keys the JSON report gains."""

    text: tuple[str, ...] = ()
    json: dict[str, object] = field(default_factory=dict)


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


@dataclass(frozen=True)
class ReportOptions:
    """How a run reports: ``fmt`` text, json, sarif or github; ``fail_on`` the surest tier
    that still fails; ``baselines`` files of accepted uses; ``suppressions`` "store": the
    store's "Not us" too; ``write_baseline``: write every use of ``breaks`` and ``check``
    found to that file (and fail on none: the team accepts what is there now);
    ``only_affecting``: JSON lists only the items with a use."""

    fmt: str = "text"
    show_all: bool = False
    fail_on: str = "breaks"
    baselines: tuple[str, ...] = ()
    suppressions: str | None = None
    write_baseline: str | None = None
    only_affecting: bool = False

    @property
    def failing(self) -> frozenset[Tier]:
        return frozenset({"breaks", "check"} if self.fail_on == "check" else {"breaks"})


def new_analyzer(code: list[str]) -> ImpactAnalyzer:
    """The analyzer of a one-off run over ``--code`` directories: one scan, no cache made; the
    footer names unparsable files."""
    return ImpactAnalyzer(code_roots(code), warn_unparsable=False, cached=False)


def run_impact(config: Config, out: IO[str], notes: list[Notes], analyzer: ImpactAnalyzer, *,
               repo: str | None, options: ReportOptions, preamble: Preamble | None = None,
               atlases: Shelf | None = None) -> bool:
    """Prints the report; True when a use is in a failing tier. ``notes``: of the files given,
    or of the releases of a ``--range`` or an upgrade, oldest first. ``preamble``: what the
    caller says first (the text's opening lines, the JSON's extra keys); ``atlases``: a store
    whose atlases are read too (else the configured store's, read only)."""
    with stored_atlases(config) if atlases is None else nullcontext(atlases) as shelf:
        source = package_source(config, shelf) if any(entry.release for entry in notes) \
            else None
        found = find_impact(config, notes, analyzer, repo, suppressor_of(config, options),
                            source)
    found = under_releases(found) if len(notes) > 1 else found
    if options.write_baseline is not None:
        written = write_baseline_file(options.write_baseline, found)
        out.write(f"{plural(written, 'use')} written to {options.write_baseline} (pass it as "
                  f"--baseline to keep them out of the tiers)\n")
        return False
    fails = any(use.tier in options.failing for entry in found if entry.impact
                for use in entry.impact.affects)
    whose = repo or (repo_of(notes[0].body) if notes else DEFAULT_REPO)
    scope = Scope(whose, tuple(analyzer.roots), options.show_all, tool_version(),
                  options.failing)
    write_report(out, found, analyzer, scope, options, preamble or Preamble())
    return fails


def find_impact(config: Config, notes: list[Notes], analyzer: ImpactAnalyzer,
                repo: str | None, suppressor: Suppressor, source: AtlasSource | None
                ) -> list[Found]:
    """Each release's items with their impact, and the API changes of its package no item
    speaks of, release by release in the order given; the repo is ``repo``, else the one the
    notes name."""
    # The taxonomy as ``watcher.app.taxonomy_for`` makes it, without importing the bot's
    # composition root (HTTP clients, notifiers): a CI run of this command pays for neither.
    taxonomy = with_overrides(config.classify.headings, config.classify.rule_patterns())
    reader = Analyzer(taxonomy, max_body_chars=config.poll.max_body_chars,
                      max_items=config.poll.max_items_per_release)
    found: list[Found] = []
    for entry in notes:
        whose = repo or repo_of(entry.body)
        package = (package_changes(source, whose, entry.release)
                   if source is not None and entry.release else None)
        own = (own_knowledge(source, whose, entry.release)
               if package is None and source is not None and entry.release else None)
        analysis = ReleaseAnalysis(analyzer, entry.release, package, owner=taxonomy.apis.owner,
                                   suppressor=suppressor, knowledge=own)
        for item in reader.items(entry.body, repo=whose):
            found.append(Found(item, analysis.of(item), entry.release))
        found += [Found(item, impact, entry.release, "package")
                  for item, impact in analysis.unmentioned()]
    return found


def suppressor_of(config: Config, options: ReportOptions) -> Suppressor:
    """Ignore comments always; the baseline files' entries; the store's "Not us" when asked
    (read without writing to the store)."""
    stored: list[Suppression] = []
    if options.suppressions == "store":
        from watcher.store import open_store

        store = open_store(config.store_path(), config.store_url(), read_only=True)
        try:
            stored = store.suppressions()
        finally:
            store.close()
    return Suppressor.of(baseline=[entry for path in options.baselines
                                   for entry in read_baseline(path)], store=stored)


def write_report(out: IO[str], found: list[Found], analyzer: ImpactAnalyzer, scope: Scope,
                 options: ReportOptions, preamble: Preamble) -> None:
    if options.fmt == "json":
        data = {**preamble.json, **report_json(found, analyzer, options.show_all,
                                               options.only_affecting)}
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    elif options.fmt == "sarif":
        out.write(json.dumps(sarif_log(found, scope), ensure_ascii=False, indent=2) + "\n")
    elif options.fmt == "github":
        out.writelines(line + "\n" for line in workflow_commands(found, scope))
    else:
        out.writelines(line + "\n" for line in [*preamble.text,
                                                *report_text(found, analyzer, scope.show_all)])


def tool_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("release-watch")
    except PackageNotFoundError:
        return ""


def write_baseline_file(path: str, found: list[Found]) -> int:
    """Every use in ``breaks`` or ``check`` (those already suppressed too: a baseline written
    again keeps what the last one accepted), as baseline entries."""
    entries = [Suppression.of(entry.item, use) for entry in found if entry.impact
               for use in [*entry.impact.affects, *(s.use for s in entry.impact.suppressed)]
               if use.tier != "mentions"]
    return write_baseline(path, entries)


def package_source(config: Config, store: Shelf | None = None) -> AtlasSource:
    """Atlases for a one-off run: bundled, else those ``store`` keeps, else built from the
    package index's wheel (``[impact] package_index``), kept in ``store`` when there is one
    (``upgrade``; ``impact`` writes no state)."""
    from watcher.impact.atlas import AtlasSource, Budget, PackageIndex

    index = PackageIndex(config.impact.package_index, budget=Budget.of(config.impact),
                         hosts=tuple(config.impact.package_hosts))
    return AtlasSource(store=store, index=index, clock=lambda: datetime.now(UTC))


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
