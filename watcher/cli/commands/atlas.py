"""``release-watch atlas build`` and ``atlas diff``: the API atlas of a package release, built
from a wheel (or fetched from the package index and built) and kept in the store; and the API
changes between two releases, each given as a wheel, an atlas file or a version. A wheel is
built as the daemon builds one, in a child process within the ``[impact]`` budget (a wheel of
another version than asked for refused); SIGTERM leaves nothing of a fetch behind."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watcher.errors import ConfigError
from watcher.impact.atlas import (
    CHANGES,
    ApiChange,
    Atlas,
    AtlasError,
    AtlasSource,
    BoundedBuilder,
    bundled_diff,
    configured_source,
    diff,
    loads,
    normal_version,
    removed_on_sigterm,
    span_diff,
)
from watcher.present import plural
from watcher.untrusted import clean_line

if TYPE_CHECKING:
    from watcher.config import Config
    from watcher.deps import Dependencies
    from watcher.store import Store

_ATLAS_SUFFIXES = (".json.gz", ".atlas")


class _OpenedOnUse:
    """The store, opened only when an atlas is looked for there (``atlas diff`` of two
    bundled releases touches no store)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._store: Store | None = None

    def _open(self) -> Store:
        if self._store is None:
            from watcher.store import Store

            self._store = Store.open(self.path)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._open(), name)


def _source(config: Config, deps: Dependencies, store: _OpenedOnUse) -> AtlasSource:
    return configured_source(config.impact, store, deps.clock, deps.transport)


def run_atlas_build(config: Config, deps: Dependencies, what: str, package: str) -> int:
    """Builds (or fetches and builds) one atlas, keeps it in the store, prints its summary."""
    store = _OpenedOnUse(config.store_path())
    source = _source(config, deps, store)
    try:
        path = Path(what).expanduser()
        with removed_on_sigterm():
            if path.is_file():
                atlas = _built(source, path, package, store)
                origin = f"built from {path.name}"
            else:
                version = _version(what)
                atlas = source.get(package, version, force=True)
                origin = {"bundled": "bundled with release-watch", "store": "from the store",
                          "index": "fetched from the package index and built"}[
                    source.origin[(package, version)]]
        deps.stdout.writelines(line + "\n" for line in summary(atlas, origin))
    finally:
        store.close()
    return 0


def _built(source: AtlasSource, path: Path, package: str, store: _OpenedOnUse | None
           ) -> Atlas:
    """A wheel file's atlas, built in a child process within the budget; kept in ``store``."""
    builder = source.builder or BoundedBuilder(
        source.index.budget if source.index is not None else None)
    built = builder.build(path, package)
    if store is not None:
        store.put_atlas(package, built.atlas.version, built.data)
    return built.atlas


def summary(atlas: Atlas, origin: str) -> list[str]:
    public = list(atlas.public_apis())
    modules = sum(1 for api in public if atlas.kind(api) == "module")
    classes = sum(1 for api in public if atlas.kind(api) == "class")
    deprecated = sum(1 for api in public if atlas.deprecated(api) is not None)
    lines = [f"{atlas.package} {atlas.version}: {origin}",
             f"  {plural(modules, 'public module')}, {plural(len(atlas.names), 'public name')}"
             f" for {plural(len(public) - modules, 'API')} ({plural(classes, 'class', 'classes')}"
             f", {len(atlas.apis):,} definitions kept with the methods and bases they reach)",
             f"  {plural(deprecated, 'API')} carrying a deprecation marker"]
    if atlas.skipped:
        shown = ", ".join(clean_line(name) for name in atlas.skipped[:5])
        lines.append(f"  {plural(len(atlas.skipped), 'module')} skipped, too deeply nested or "
                     f"too large to read ({shown}{', ...' if len(atlas.skipped) > 5 else ''})")
    return lines


class _Atlases:
    """Where ``atlas diff`` takes each release from: a version bundled with release-watch is
    read from its file, with neither the configuration nor the store (a diff of two bundled
    releases is an offline command: nothing of the bot loaded); anything else (a wheel, a
    version the store or the package index has) through the configured source, the
    configuration read and the store opened only then."""

    def __init__(self, config: Callable[[], Config], deps: Dependencies) -> None:
        self._config = config
        self._deps = deps
        self._store: _OpenedOnUse | None = None
        self._configured: AtlasSource | None = None
        self.bundled = AtlasSource(store=None, index=None, clock=deps.clock)

    def configured(self) -> AtlasSource:
        if self._configured is None:
            config = self._config()
            self._store = _OpenedOnUse(config.store_path())
            self._configured = _source(config, self._deps, self._store)
        return self._configured

    def get(self, what: str, package: str) -> Atlas:
        path = Path(what).expanduser()
        if path.is_file():
            if path.name.endswith(".whl"):
                return _built(self.configured(), path, package, None)
            return loads(path.read_bytes(), origin=str(path))
        if path.name.endswith((".whl", *_ATLAS_SUFFIXES)):
            raise ConfigError(f"{what}: no such file")
        version = _version(what)
        known = self.bundled.known(package, version)
        return known if known is not None else self.configured().get(package, version,
                                                                      force=True)

    def both_bundled(self, before: Atlas, after: Atlas) -> bool:
        return all(self.bundled.origin.get((atlas.package, atlas.version)) == "bundled"
                   for atlas in (before, after))

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def run_atlas_diff(config: Callable[[], Config], deps: Dependencies, old: str, new: str, *,
                   package: str, fmt: str) -> int:
    """``config`` is read only where a release is not bundled."""
    atlases = _Atlases(config, deps)
    try:
        with removed_on_sigterm():
            before, after = (atlases.get(what, package) for what in (old, new))
    finally:
        atlases.close()
    changes = _changes(atlases.both_bundled(before, after), before, after)
    out = deps.stdout
    if fmt == "json":
        # The contract's shape, nothing more: the versions are the caller's own arguments.
        out.write(json.dumps({"changes": [change.to_json_dict() for change in changes]},
                             ensure_ascii=False, indent=2) + "\n")
    else:
        out.writelines(line + "\n" for line in _text(before, after, changes))
    return 0


def _changes(bundled: bool, before: Atlas, after: Atlas) -> list[ApiChange]:
    """The diff of two bundled releases is bundled too, whichever two (the tests hold each to
    the diff computed): read, not computed. Where a pair's diff is missing (an atlas bundled
    without ``scripts/build_atlases.py --diffs``), computed over the APIs the bundled diffs
    between them name (``span_diff``); any other pair is diffed whole."""
    if not bundled:
        return diff(before, after)
    found = bundled_diff(after.package, before.version, after.version)
    if found is None:
        found = span_diff(before, after)
    return found if found is not None else diff(before, after)


def _version(what: str) -> str:
    """A version as typed (``2.7.0``, ``v2.7.0``); a usage error when it is none."""
    try:
        return normal_version(what)
    except AtlasError:
        raise ConfigError(f"{what!r} is neither a file nor a version (e.g. 2.7.0)") from None


def _text(before: Atlas, after: Atlas, changes: list[ApiChange]) -> list[str]:
    lines = [f"{after.package} {before.version} -> {after.version}: "
             f"{plural(len(changes), 'API change')}"]
    # A package's internal kernels last, under a heading of their own: counted, out of the way.
    for inside in (False, True):
        for kind in CHANGES:
            group = [change for change in changes
                     if change.change == kind and change.internal == inside]
            if not group:
                continue
            lines.append("")
            lines.append(f"{'internal kernels: ' if inside else ''}{kind.replace('_', ' ')} "
                         f"({len(group)})")
            lines.extend(f"  {clean_line(_line(change))}" for change in group)
    return lines


def _line(change: ApiChange) -> str:
    text = change.api if change.parameter is None else f"{change.api}({change.parameter}=)"
    if change.change == "default_changed":
        text += f": {change.old} -> {change.new}"
    elif change.change == "default_removed":
        text += f": default {change.old} removed, now required"
    elif change.change == "parameter_moved":
        text += f": argument {change.old} -> {change.new}"
    elif change.raises:
        text += f": now only raises: {change.new}"
    elif change.new:
        text += f": {change.new}"
    if change.names:
        extra = len(change.names) - 3
        text += f"  (also {', '.join(change.names[:3])}{f' +{extra} more' if extra > 0 else ''})"
    return text
