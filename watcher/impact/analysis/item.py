"""The impact step of the pipeline behind one call: an item in, the APIs it changes and their
uses in the configured codebases out.

Only BC-breaking and deprecation items are read for subjects: they are the changes that can
break a caller, and a bug fix that names ``torch.compile`` would otherwise flag every compile
call of a codebase (precision is the promise). Each codebase is scanned once per analyzer, on
the first item that needs it, through a per-file cache the caller keeps (the store, in the
bot), so a poll that announces nothing never walks the code and a re-scan reads only the files
that changed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from watcher.impact.analysis.suppress import Suppressed
from watcher.impact.code import CodeIndex, scan_codebase
from watcher.impact.knowledge import ApiKnowledge, NoKnowledge
from watcher.impact.model import Subjects
from watcher.impact.reach import Ladder, Weigh, find_affects
from watcher.impact.subjects import read_subjects
from watcher.models import ATTENTION_KINDS, Affect, ClassifiedItem
from watcher.present import unparsable_note

logger = logging.getLogger(__name__)

IndexCache = MutableMapping[str, str]


@dataclass(frozen=True)
class CodeRoot:
    """A codebase as configured: ``label`` is how ``affects[].root`` names it (as written in
    the config or on the command line), ``path`` where it is, ``name`` how
    ``affects[].codebase`` names it (its ``[[impact.codebases]]`` name; else its folder's
    name), ``link`` the template of a link to one of its lines."""

    label: str
    path: Path
    name: str = ""
    link: str | None = None

    @property
    def codebase(self) -> str:
        return self.name or self.path.name or self.label


class ItemImpact(NamedTuple):
    """What one item changes (``apis``), where the code uses it (``affects``), and the uses a
    team suppressed (an ignore comment, a baseline, a "Not us"), kept to be counted."""

    apis: list[str]
    affects: list[Affect]
    suppressed: tuple[Suppressed, ...] = ()


@dataclass
class ImpactAnalyzer:
    """``load_cache``/``save_cache``: a codebase's per-file index cache, read before its scan
    and written back after it when it changed (the store's diskcache in the bot; nothing for
    the offline command, which scans once)."""

    roots: list[CodeRoot]
    load_cache: Callable[[str], dict[str, str]] = lambda label: {}
    save_cache: Callable[[str, dict[str, str]], None] = lambda label, cache: None
    warn_unparsable: bool = True  # a warning per scan; the offline command says it itself
    # Told of each scan: the root's label, the files it found, the seconds it took (/metrics).
    on_scan: Callable[[str, int, float], None] = lambda label, files, seconds: None
    knowledge: ApiKnowledge = field(default_factory=NoKnowledge)
    # Each codebase's last index by label, kept between analyzers (the daemon's polls): an
    # unchanged tree is then answered from it without decoding a cache entry.
    kept: MutableMapping[str, CodeIndex] | None = None
    cached: bool = True  # False: a one-off scan (the offline command), no cache entry made
    _indexes: list[tuple[CodeRoot, CodeIndex]] | None = field(default=None, repr=False)

    def indexes(self) -> list[tuple[CodeRoot, CodeIndex]]:
        if self._indexes is None:
            self._indexes = [(root, index) for root in self.roots
                             if (index := self._scan(root)) is not None]
        return self._indexes

    def _scan(self, root: CodeRoot) -> CodeIndex | None:
        """A codebase that cannot be read is left out with one warning, never fatal: the
        release is still announced, without its impact on that codebase."""
        cache = self.load_cache(root.label) if self.cached else None
        started = time.perf_counter()
        try:
            index = scan_codebase(str(root.path), cache,
                                  None if self.kept is None else self.kept.get(root.label))
        except OSError as error:
            logger.warning("impact: cannot read the codebase %s: %s", root.label,
                           error.strerror or error)
            return None
        if index.unparsable and self.warn_unparsable:
            logger.warning("impact: in %s, %s", root.label, unparsable_note(
                len(index.unparsable), [path for path, _ in index.unparsable]))
        if index.counts.cache_changed and cache is not None:
            self.save_cache(root.label, cache)
        if self.kept is not None:
            self.kept[root.label] = index
        self.on_scan(root.label, index.counts.files, time.perf_counter() - started)
        return index

    def impact(self, item: ClassifiedItem, release: str | None = None,
               knowledge: ApiKnowledge | None = None,
               weigh: Weigh | None = None) -> ItemImpact | None:
        """None for an item that names nothing a codebase could use (or is not BC-breaking or
        a deprecation); else its APIs and their uses, possibly none. ``release``: the release
        the item is of, named in each use's ``why`` and ``release``. Its package unread, the
        words alone stand (``evidence``: only a stated removal is ``breaks``); ``weigh``
        says so (else ``Ladder(None, release)``)."""
        if item.kind not in ATTENTION_KINDS:
            return None
        subjects = read_subjects(item)
        if not subjects:
            return None
        return ItemImpact(subjects.apis, self.affects(subjects, release, knowledge, weigh))

    def affects(self, subjects: Subjects, release: str | None = None,
                knowledge: ApiKnowledge | None = None,
                weigh: Weigh | None = None) -> list[Affect]:
        """``knowledge``: of the release the code is written against (else the analyzer's);
        ``weigh``: the evidence of each subject (else the notes' words alone)."""
        weigh = weigh or Ladder(None, release).weigh
        found: list[Affect] = []
        for root, index in self.indexes():
            found += find_affects(subjects, index, root.label, codebase=root.codebase,
                                  release=release, knowledge=knowledge or self.knowledge,
                                  weigh=weigh)
        return found

    def links(self) -> dict[str, str]:
        """Each codebase's link template, by its name (``affects[].codebase``)."""
        return {root.codebase: root.link for root in self.roots if root.link}


def cache_in(store: MutableMapping[str, dict[str, str]]) -> tuple[
        Callable[[str], dict[str, str]], Callable[[str, dict[str, str]], None]]:
    """``load_cache`` and ``save_cache`` over a plain mapping (tests, benchmarks)."""
    return (lambda label: dict(store.get(label, {})),
            lambda label, cache: store.__setitem__(label, cache))
