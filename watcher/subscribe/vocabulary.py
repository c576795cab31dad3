"""The words ``/release-watch subscribe`` understands: subsystem ids (top-level, ``top/finer``
and the names readers see, such as ``FSDP``), kinds (``bc_breaking``, ``BC-breaking``,
``deprecations``), and the watched repositories; and, for a word it does not know, the
nearest ones it does ("did you mean ...?").

Pure: built from the configuration and the shipped taxonomy file, read once.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from watcher.models import KIND_TITLES, KINDS, SUBSYSTEMS
from watcher.resources import subsystems_path

WordKind = Literal["subsystem", "kind", "repo"]

# How people write kinds besides their ids and headings ("deprecations", "bug fixes").
KIND_ALIASES = {
    "breaking": "bc_breaking",
    "bc": "bc_breaking",
    "bcbreaking": "bc_breaking",
    "bc_break": "bc_breaking",
    "deprecated": "deprecation",
    "feature": "new_feature",
    "features": "new_feature",
    "fix": "bug_fix",
    "fixes": "bug_fix",
    "bugfix": "bug_fix",
    "bugfixes": "bug_fix",
    "perf": "performance",
    "doc": "docs",
    "documentation": "docs",
    "developer": "developers",
    "regressions": "regression",
    "highlights": "highlight",
    "improvements": "improvement",
    "vulnerability": "security",
}
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


def normal(word: str) -> str:
    """Case, hyphens and spaces do not matter: ``BC-Breaking`` is ``bc_breaking``."""
    return re.sub(r"[\s-]+", "_", word.strip().lower())


@cache
def _taxonomy_names() -> dict[str, str]:
    """Every subsystem id the shipped taxonomy knows → the name readers see."""
    with subsystems_path().open("rb") as handle:
        table = tomllib.load(handle)["subsystems"]
    return {key: str(entry.get("name", key)) for key, entry in table.items()}


@dataclass(frozen=True)
class Word:
    kind: WordKind
    value: str  # the id (``distributed/fsdp``, ``bc_breaking``) or OWNER/NAME


@dataclass
class Vocabulary:
    """What the words of a command may mean here. ``repos``: the watched OWNER/NAMEs;
    ``orgs``: watched organisations, any of whose repositories may be named."""

    repos: list[str]
    orgs: list[str] = field(default_factory=list)
    extra_subsystems: Iterable[str] = ()  # finer ids the config's [classify] adds
    _words: dict[str, Word] = field(default_factory=dict, init=False)
    _kinds: dict[str, str] = field(default_factory=dict, init=False)
    _subsystems: dict[str, str] = field(default_factory=dict, init=False)
    _shared: dict[str, list[str]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        names = dict(_taxonomy_names())
        names.update(
            {sub: sub.rsplit("/", 1)[-1] for sub in self.extra_subsystems if sub not in names}
        )
        aliases: dict[str, set[str]] = {}
        for sub, name in names.items():
            for alias in (name, sub.rsplit("/", 1)[-1]):
                aliases.setdefault(normal(alias), set()).add(sub)
        for alias, subs in aliases.items():  # "fsdp", "torch.compile", "inductor"
            if len(subs) == 1:
                self._subsystems[alias] = next(iter(subs))
            else:  # "dynamic_shapes": compile's and export's
                self._shared[alias] = sorted(subs)
        self._subsystems.update({normal(sub): sub for sub in names})  # ids win over names
        self._kinds = {normal(kind) + "s": kind for kind in KINDS}
        self._kinds.update({normal(title): kind for kind, title in KIND_TITLES.items()})
        self._kinds.update(KIND_ALIASES)
        self._kinds.update({normal(kind): kind for kind in KINDS})
        self._words = {alias: Word("subsystem", sub) for alias, sub in self._subsystems.items()}
        self._words.update({alias: Word("kind", kind) for alias, kind in self._kinds.items()})
        self._words.update({normal(sub): Word("subsystem", sub) for sub in names})
        for repo in self.repos:
            self._words[repo.lower()] = Word("repo", repo)

    def ambiguous(self, word: str) -> bool:
        """A word that is a subsystem id and a kind id alike (``other``)."""
        return normal(word) in set(SUBSYSTEMS) & set(KINDS)

    def shared(self, word: str) -> list[str]:
        """The subsystems a finer name belongs to when it belongs to several, else []."""
        return [] if normal(word) in self._words else self._shared.get(normal(word), [])

    def meaning(self, word: str) -> Word | None:
        """What ``word`` means, or None. ``subsystem:X``, ``kind:X`` and ``repo:X`` say
        which they are."""
        prefix, _, rest = word.partition(":")
        prefix = prefix.lower()
        if rest and prefix == "subsystem" and normal(rest) in self._subsystems:
            return Word("subsystem", self._subsystems[normal(rest)])
        if rest and prefix == "kind" and normal(rest) in self._kinds:
            return Word("kind", self._kinds[normal(rest)])
        if rest and prefix == "repo":
            word = rest
        if self.ambiguous(word):
            return None
        return (
            self._words.get(word.lower()) or self._words.get(normal(word)) or self._org_repo(word)
        )

    def _org_repo(self, word: str) -> Word | None:
        """A repository of a watched organisation, named OWNER/NAME."""
        if _REPO.fullmatch(word) and word.split("/", 1)[0].lower() in {
            o.lower() for o in self.orgs
        }:
            return Word("repo", word)
        return None

    def looks_like_repo(self, word: str) -> bool:
        owner = word.split("/", 1)[0]
        return bool(_REPO.fullmatch(word)) and normal(owner) not in self._words

    def suggestions(self, word: str, count: int = 3) -> list[str]:
        """The known words nearest to ``word``, as ids (or OWNER/NAME), one per meaning."""
        candidates = {
            alias: meaning
            for alias, meaning in self._words.items()
            if ("/" in alias) == ("/" in word)
        }
        found: dict[str, None] = {}
        for alias in difflib.get_close_matches(
            normal(word), list(candidates), n=3 * count, cutoff=0.7
        ):
            found.setdefault(candidates[alias].value)
        return list(found)[:count]

    def subsystem_ids(self) -> list[str]:
        return sorted({w.value for w in self._words.values() if w.kind == "subsystem"})
