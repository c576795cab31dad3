"""``release-watch upgrade``: the check a CI job runs. The version of the package the code is on
(its own pins, or ``--from``; excluded) to ``--to`` (default the newest release; included):
every release in between read from GitHub, each (use, change) pair under the release that
makes that change, in the format CI reads. Exit codes as ``impact``.

The releases are listed through a cache of the store's own (``watcher/store/notes.py``), apart
from what the bot's polls record: a CI run sharing a store with a daemon never swallows an
announcement.
"""

from __future__ import annotations

from typing import IO, Any, NamedTuple

from packaging.version import InvalidVersion, Version

from watcher.cli.commands.impact import (
    Notes,
    Preamble,
    ReportOptions,
    new_analyzer,
    run_impact,
    version_of,
)
from watcher.cli.commands.impact_sources import DEFAULT_REPO
from watcher.config import Config
from watcher.errors import ConfigError
from watcher.impact import PACKAGES, ImpactAnalyzer
from watcher.impact.environment import Pin, PinDecision, current_version, find_pins
from watcher.models import Release

__all__ = ["UpgradePlan", "plan_upgrade", "run_upgrade"]

RELEASES_SHOWN = 8  # tags named on the text's first line before "and N more"


class UpgradePlan(NamedTuple):
    package: str
    start: Version
    end: Version
    how: str  # which pin decided, or --from
    pins: tuple[Pin, ...]
    notes: list[Notes]  # the releases in between, oldest first

    def line(self) -> str:
        tags = [entry.release or "" for entry in self.notes]
        shown = ", ".join(tags[:RELEASES_SHOWN])
        more = f" and {len(tags) - RELEASES_SHOWN} more" if len(tags) > RELEASES_SHOWN else ""
        read = f"{len(tags)} releases read ({shown}{more})" if len(tags) != 1 \
            else f"1 release read ({shown})"
        if not tags:
            read = "no release in between, nothing to check"
        how = self.how.removeprefix(f"{self.package} {self.start}, ")
        return f"{self.package} {self.start} -> {self.end}: {how}; {read}"

    def preamble(self, repo: str) -> Preamble:
        data: dict[str, object] = {"upgrade": {
            "repo": repo, "package": self.package, "from": str(self.start),
            "to": str(self.end), "decided_by": self.how,
            "pins": [{"root": pin.root, "path": pin.path, "line": pin.line, "code": pin.code,
                      "specifier": pin.specifier} for pin in self.pins],
            "releases": [entry.release for entry in self.notes]}}
        return Preamble((self.line(), ""), data)


def run_upgrade(config: Config, deps: Any, err: IO[str], code: list[str], *,
                start: str | None, end: str | None, repo: str | None,
                options: ReportOptions) -> bool:
    """Prints the report (and, for a format a machine reads, the plan's line on ``err``);
    True when a use is in a failing tier."""
    from watcher.cli.commands.upgrade_fetch import fetch_releases
    from watcher.store import open_store

    repo = repo or DEFAULT_REPO
    analyzer = new_analyzer(code)
    store = open_store(config.store_path(), config.store_url())
    try:
        releases = fetch_releases(config, deps, store, repo)
        plan = plan_upgrade(releases, analyzer, repo, start, end)
        if options.fmt != "text":
            err.write(f"release-watch: {plan.line()}\n")
        return run_impact(config, deps.stdout, plan.notes, analyzer, repo=repo,
                          options=options, preamble=plan.preamble(repo), atlases=store)
    finally:
        store.close()


def plan_upgrade(releases: list[Release], analyzer: ImpactAnalyzer, repo: str,
                 start: str | None, end: str | None) -> UpgradePlan:
    """Which releases to read: FROM (``start``, else the code's pins) excluded, TO (``end``,
    else the newest release) included; a pre-release only when TO names it."""
    package = PACKAGES.get(repo.lower())
    final = {version: release for release in releases if not release.draft
             and (version := version_of(release.tag_name)) is not None}
    known = sorted(version for version, release in final.items()
                   if not release.prerelease and not version.is_prerelease)
    if not known:
        raise ConfigError(f"{repo} has no release on GitHub with a version for a tag")
    high = known[-1] if end is None else _version("--to", end)
    if end is not None and high not in final:
        raise ConfigError(f"--to {end}: {repo} has no such release (the newest is "
                          f"{final[known[-1]].tag_name})")
    pins: tuple[Pin, ...] = ()
    if start is not None:
        low, how = _version("--from", start), "--from"
    elif package is None:
        raise ConfigError(f"--repo {repo}: no package of it is known whose pins could be "
                          "read; pass --from VERSION (the version the code is on)")
    else:
        decision = pinned(analyzer, package, known)
        low, how, pins = decision.version, decision.how, decision.pins
    chosen = sorted((version, release) for version, release in final.items()
                    if low < version <= high
                    and (version == high or not (release.prerelease or version.is_prerelease)))
    notes = [Notes(release.tag_name, release.body or "") for _, release in chosen]
    return UpgradePlan(package or repo, low, high, how, pins, notes)


def pinned(analyzer: ImpactAnalyzer, package: str, releases: list[Version]) -> PinDecision:
    """The version every codebase's pins put it on (``ConfigError`` when they disagree)."""
    pins = [pin for root, index in analyzer.indexes()
            for pin in find_pins(root.label, root.path, index.declarations, package)]
    return current_version(pins, releases, package)


def _version(option: str, text: str) -> Version:
    try:
        return Version(Version(text.strip().removeprefix("v")).public)
    except InvalidVersion:
        raise ConfigError(f"{option} {text}: not a version (write 2.5 or v2.5.0)") from None
