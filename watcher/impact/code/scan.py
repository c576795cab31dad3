"""Walks a codebase and indexes each Python and environment file, through a per-file cache:
an unchanged file (same size and mtime) is not read, a touched one with the same content
(same SHA-256) is not parsed again.

The cache maps a file's path (relative, "/"-separated) to a JSON string: its size, mtime_ns,
sha256, line count, the module-level names it binds by import, and its ``FileIndex`` (or the
reason it does not parse). Entries of files no longer in the tree are dropped. The index
keeps uses as the JSON's plain rows and builds ``FileIndex`` models only when asked for
``files``: decoding a model per use would cost a warm re-scan more than the rest of it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import MutableMapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from watcher.impact.code.callers import LocalCalls
from watcher.impact.code.gcpause import gc_paused
from watcher.impact.code.ignores import MARKER, line_markers
from watcher.impact.code.madekeys import join_made_keys
from watcher.impact.code.pyindex import UseRow, read_python
from watcher.impact.code.reexport import resolve_reexports
from watcher.impact.code.spelled import spelled_in_tree
from watcher.impact.code.tree import MAX_BYTES, walk
from watcher.impact.code.usetable import UseTable
from watcher.impact.environment import environment_kind
from watcher.impact.model import Declaration, FileIndex, UnparsableError

__all__ = ["CodeIndex", "ScanCounts", "index_python", "scan_codebase"]

FORMAT = 71  # bump when the index of a file would come out differently: old entries miss


@dataclass(frozen=True)
class ScanCounts:
    files: int = 0  # Python and environment files found (unparsable ones included)
    read: int = 0  # read from disk (changed, new, or touched)
    cached: int = 0  # index taken from the cache (unchanged, or touched with the same content)
    lines: int = 0  # lines of Python
    dropped: int = 0  # cache entries of files that are gone

    @property
    def cache_changed(self) -> bool:
        """Whether the cache was written to: only then is it worth saving."""
        return bool(self.read or self.dropped)


@dataclass
class FileRecord:
    """One file's index as plain rows (``FileIndex`` JSON, defaults left out)."""

    path: str
    uses: list[UseRow] = field(default_factory=list)
    declarations: list[dict[str, Any]] = field(default_factory=list)
    exports: dict[str, str] = field(default_factory=dict)
    sets: list[str] = field(default_factory=list)  # attributes it assigns, keywords it passes
    stars: list[str] = field(default_factory=list)  # modules it star-imports
    # names only its branches for releases older than any read refer to -> [major, minor]
    unreached: dict[str, list[int]] = field(default_factory=dict)
    # its module-level functions no call here runs on every release: [start line, name,
    # [major, minor] or None, [functions calling it]] (``code.callers``)
    functions: list[list[Any]] = field(default_factory=list)
    # its functions raising an exception type, by name, with the types (``code.raisers``)
    raisers: dict[str, list[str]] = field(default_factory=dict)
    # the string keys it makes that other files may look up: [api, key, line] (``madekeys``)
    made_keys: list[list[Any]] = field(default_factory=list)
    awaits_keys: bool = False  # a use row looks up a string key another file may make


@dataclass(frozen=True)
class CodeIndex:
    """A scanned codebase: its files' indexes (``records``; ``files`` as models, built on
    first use), the files that do not parse, and what the scan read. ``table`` and
    ``declarations`` are the matcher's look-ups, built once."""

    root: str
    records: list[FileRecord]
    unparsable: list[tuple[str, str]]  # (path, one-line reason)
    counts: ScanCounts
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (size, mtime_ns)

    @cached_property
    def files(self) -> list[FileIndex]:
        return [FileIndex.model_validate({"path": record.path, "uses": record.uses,
                                          "declarations": record.declarations})
                for record in self.records]

    @cached_property
    def table(self) -> UseTable:
        with gc_paused():  # a tuple and a list entry per use, no cycle (see ``gc_paused``)
            return UseTable((record.path, record.uses) for record in self.records)

    @cached_property
    def sets(self) -> frozenset[str]:
        """Every attribute name the codebase assigns and keyword name it passes."""
        return frozenset(name for record in self.records for name in record.sets)

    @cached_property
    def _spelled(self) -> dict[str, bool]:
        return {}

    def spells(self, word: str) -> bool:
        """Whether any text file of the codebase (code, configs, docs) writes ``word`` as a
        word; read from disk on first asking, and True when the tree cannot be read."""
        if word not in self._spelled:
            self._spelled[word] = spelled_in_tree(self.root, word)
        return self._spelled[word]

    @cached_property
    def unreached(self) -> dict[str, tuple[int, int]]:
        """Every name only branches for releases older than any read refer to, in any file,
        with the highest release it runs below."""
        found: dict[str, tuple[int, int]] = {}
        for record in self.records:
            for name, (major, minor) in record.unreached.items():
                found[name] = max(found.get(name, (0, 0)), (major, minor))
        return found

    @cached_property
    def functions(self) -> dict[tuple[str, int], LocalCalls]:
        """(path, start line) -> a module-level function no call in its file runs on every
        release: its name, the release its guarded calls there run below, its callers there."""
        return {(record.path, start): (name, tuple(below) if below else None, tuple(calls))
                for record in self.records for start, name, below, calls in record.functions}

    @cached_property
    def raisers(self) -> dict[str, frozenset[str]]:
        """Every function of the codebase (by name) that raises an exception type itself or
        through its file's other functions, with the types of all functions of that name."""
        found: dict[str, set[str]] = {}
        for record in self.records:
            for name, types in record.raisers.items():
                found.setdefault(name, set()).update(types)
        return {name: frozenset(types) for name, types in found.items()}

    @cached_property
    def declarations(self) -> list[tuple[str, Declaration]]:
        return [(record.path, Declaration.model_validate(row)) for record in self.records
                for row in record.declarations]


def scan_codebase(root: str, cache: MutableMapping[str, str] | None = None,
                  previous: CodeIndex | None = None) -> CodeIndex:
    """Indexes the codebase at ``root`` (an ``OSError`` if it cannot be listed). ``previous``:
    its last index, kept in memory (the daemon): when no file was added, removed or touched
    since, it is the answer, and no cache entry is decoded. Without a ``cache`` (a one-off
    scan: the offline command) no entry is encoded either."""
    unparsable: list[tuple[str, str]] = []
    entries = list(walk(root, unparsable, wanted))
    # DirEntry keeps its stat result, so the per-file cache below does not stat again.
    stats = {relative: stat_key(entry) for relative, entry in entries}
    if previous is not None and previous.root == root and previous.stats == stats and not (
            unparsable):
        return unchanged(previous)
    with gc_paused():
        return index_entries(root, entries, stats, cache, unparsable)


def stat_key(entry: os.DirEntry[str]) -> tuple[int, int]:
    stat = entry.stat()  # a symlinked file's target's (``walk`` yields only those inside)
    return stat.st_size, stat.st_mtime_ns


def unchanged(previous: CodeIndex) -> CodeIndex:
    """The last index again, counted as a scan that read nothing; the look-ups it built (the
    use table) come along, so matching costs no rebuild either."""
    counts = ScanCounts(files=previous.counts.files, cached=previous.counts.files,
                        lines=previous.counts.lines)
    index = replace(previous, counts=counts)
    for name in ("files", "table", "sets", "declarations", "unreached", "functions"):
        if name in previous.__dict__:  # cached_property values: plain instance attributes
            index.__dict__[name] = previous.__dict__[name]
    return index


def index_entries(root: str, entries: list[tuple[str, os.DirEntry[str]]],
                  stats: dict[str, tuple[int, int]], cache: MutableMapping[str, str] | None,
                  unparsable: list[tuple[str, str]]) -> CodeIndex:
    tally = {"files": 0, "read": 0, "cached": 0, "lines": 0, "dropped": 0}
    records: list[FileRecord] = []
    seen: set[str] = set()
    packages: set[str] = set()
    for relative, entry in entries:
        seen.add(relative)
        tally["files"] += 1
        if relative.rpartition("/")[2] == "__init__.py":
            packages.add(relative.rpartition("/")[0])
        data = cached_entry(relative, entry, cache, tally)
        tally["lines"] += data.get("lines", 0)
        if "error" in data:
            unparsable.append((relative, data["error"]))
        else:
            index = data["index"]
            records.append(FileRecord(relative, index.get("uses", []),
                                      index.get("declarations", []), data.get("exports", {}),
                                      data.get("sets", []), data.get("stars", []),
                                      data.get("unreached", {}), data.get("functions", []),
                                      data.get("raisers", {}), data.get("made_keys", []),
                                      data.get("awaits_keys", False)))
    if cache is not None:
        for stale in [key for key in cache if key not in seen]:
            del cache[stale]
            tally["dropped"] += 1
    resolve_reexports(records, packages)
    join_made_keys(records)
    records.sort(key=lambda record: record.path)
    unparsable.sort()
    return CodeIndex(root, records, unparsable, ScanCounts(**tally), stats)


def index_python(path: str, source: str | bytes) -> FileIndex:
    """The uses of one Python file; ``path`` is relative to the codebase, with "/". Read
    alone, a name a star import bound is settled as the codebase's only file would have it."""
    python = read_python(path, source)
    record = FileRecord(path, python.uses, exports=python.exports, stars=list(python.stars),
                        made_keys=[list(made) for made in python.made_keys],
                        awaits_keys=python.awaits_keys)
    if python.stars:
        resolve_reexports([record], set())
    join_made_keys([record])
    return FileIndex.model_validate({"path": path, "uses": python.uses})


def wanted(path: str) -> bool:
    return path.endswith(".py") or environment_kind(path) is not None


def cached_entry(relative: str, entry: os.DirEntry[str], cache: MutableMapping[str, str] | None,
                 tally: dict[str, int]) -> dict[str, Any]:
    """The file's cache entry, made anew only when its content changed."""
    stat = entry.stat()
    old = decoded(cache.get(relative)) if cache is not None else None
    if old is not None and old["size"] == stat.st_size and old["mtime_ns"] == stat.st_mtime_ns:
        tally["cached"] += 1
        return old
    try:
        with open(entry.path, "rb") as handle:
            content = handle.read(MAX_BYTES + 1)
    except OSError as error:
        return {"error": f"cannot read: {error.strerror or error}"}
    tally["read"] += 1
    if cache is None:
        return index_content(relative, content)
    digest = hashlib.sha256(content).hexdigest()
    if old is not None and old["sha256"] == digest:
        tally["cached"] += 1
        data = old
    else:
        data = index_content(relative, content)
    data.update(v=FORMAT, size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=digest)
    cache[relative] = json.dumps(data, separators=(",", ":"))
    return data


def decoded(value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        data = json.loads(value)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("v") != FORMAT:
        return None
    return data if {"size", "mtime_ns", "sha256"} <= data.keys() else None


def index_content(relative: str, content: bytes) -> dict[str, Any]:
    """The new cache entry of one file's content (without its size, mtime and hash)."""
    if len(content) > MAX_BYTES:
        return {"error": f"larger than {MAX_BYTES // 1_000_000} MB, not read"}
    data: dict[str, Any] = {"index": {"path": relative}}
    try:
        if relative.endswith(".py"):
            python = read_python(relative, content)
            data["index"]["uses"], data["lines"] = python.uses, python.lines
            if python.exports:
                data["exports"] = python.exports
            if python.sets:
                data["sets"] = list(python.sets)
            if python.stars:
                data["stars"] = list(python.stars)
            if python.functions:
                data["functions"] = [[start, name, list(below) if below else None, list(calls)]
                                     for start, (name, below, calls) in python.functions.items()]
            if python.made_keys:
                data["made_keys"] = [list(made) for made in python.made_keys]
            if python.awaits_keys:
                data["awaits_keys"] = True
            if python.raisers:
                data["raisers"] = {name: list(types) for name, types in python.raisers.items()}
            if python.unreached:
                data["unreached"] = {name: list(version)
                                     for name, version in python.unreached.items()}
        if environment_kind(relative) is not None:
            # Imported here: a scan whose files are all cached needs no TOML or PEP 508.
            from watcher.impact.environment import index_environment

            text = content.decode("utf-8", errors="replace")
            found = index_environment(relative, text).declarations
            if found:
                data["index"]["declarations"] = [declaration.model_dump(exclude_defaults=True)
                                                 for declaration in found]
    except UnparsableError as error:
        return {"error": str(error), "lines": data.get("lines", 0)}
    if MARKER.encode() in content:
        mark_ignored(data["index"], line_markers(content.decode("utf-8", errors="replace")))
    return data


def mark_ignored(index: dict[str, Any], markers: dict[int, tuple[str, ...]]) -> None:
    """The uses and declarations on a line an ignore comment covers carry the items it names
    (``watcher.impact.analysis.suppress``)."""
    for row in (*index.get("uses", ()), *index.get("declarations", ())):
        names = markers.get(row["line"])
        if names:
            row["ignore"] = list(names)
