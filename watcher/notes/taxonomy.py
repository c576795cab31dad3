"""The subsystem and kind taxonomy, loaded from ``config/subsystems.toml`` and ``kinds.toml``.

Headings are matched by their normalised keys (``watcher.notes.headings``): "## **Bug fixes**",
"# Bug Fixes" and "Bug fix:" are one heading, "torch.nn API" is "nn", "[Beta] FlexAttention" is
"FlexAttention", and "FullyShardedDataParallel2 (FSDP2)" also matches on either part alone.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watcher.errors import ConfigError
from watcher.models import KINDS, SUBSYSTEMS, top_level
from watcher.notes.apis import ApiOwners
from watcher.notes.headings import (
    CATCH_ALL,
    TYPO_MIN_CHARS,
    close_key,
    heading_key,
    heading_keys,
    spelled_keys,
)
from watcher.notes.prefilter import LazyPattern, RuleIndex, any_of, literal_hint
from watcher.resources import apis_path, kinds_path, short_names_path, subsystems_path

if TYPE_CHECKING:
    from watcher.config import Config

HEADINGS_KEPT = 4096  # headings whose meaning is remembered; a release has a few hundred
DECISIVE = 6.0  # the score of a `decisive` pattern: enough to decide without the model
USER_RULE = 100.0  # the score of a user's own rule ([classify] rules): it always decides


@dataclass(frozen=True)
class TextRule:
    subsystem: str
    pattern: LazyPattern  # compiled when a text gets past ``hint``
    weight: float
    hint: str | None = None

    @classmethod
    def make(cls, subsystem: str, pattern: LazyPattern | re.Pattern[str], weight: float
             ) -> TextRule:
        lazy = pattern if isinstance(pattern, LazyPattern) else LazyPattern.of(pattern)
        return cls(subsystem, lazy, weight, literal_hint(lazy.pattern))

    def matches(self, text: str, lowered: str) -> bool:
        if self.hint is not None and self.hint not in lowered:
            return False
        return self.pattern.search(text) is not None


@dataclass(frozen=True)
class KindRule:
    kind: str
    pattern: LazyPattern  # compiled when the kind rules tried at once match (``kinds``)
    strong: bool = False
    # A pattern that must match at the start of a line. Asked for every rule of every item, so
    # set once here (a cached_property would take a lock on each read).
    anchored: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "anchored", self.pattern.pattern.startswith("^"))


@dataclass
class Taxonomy:
    """Everything the classifier knows, as data; built by ``load_taxonomy``."""

    names: dict[str, str] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    area_headings: dict[str, list[str]] = field(default_factory=dict)  # key → ids, file order
    context_only: set[str] = field(default_factory=set)
    text_rules: list[TextRule] = field(default_factory=list)
    kind_headings: dict[str, str] = field(default_factory=dict)
    kind_rules: list[KindRule] = field(default_factory=list)
    lead_rules: list[KindRule] = field(default_factory=list)
    apis: ApiOwners = field(default_factory=lambda: ApiOwners({}))  # config/apis.toml
    patch_rules: list[KindRule] = field(default_factory=list)  # kinds a patch's item may say
    patch_kind: str = "bug_fix"  # what a patch release's items are unless they say otherwise

    _found: dict[str, tuple[list[str], str | None]] = field(default_factory=dict, repr=False)
    _by_length: tuple[tuple[tuple[int, int], ...], dict[int, list[str]]] | None = field(
        default=None, repr=False)
    # Built on first use, again if text_rules is replaced or grows.
    _index: tuple[tuple[int, int], RuleIndex, dict[str, list[TextRule]],
                  re.Pattern[str] | None] | None = field(default=None, repr=False)

    def meaning(self, heading: str) -> tuple[list[str], str | None]:
        """(area ids, kind) a heading means; a name one typo from a known one means the same.
        Its keys are computed once per heading, however many items stand under it."""
        if heading in self._found:
            return self._found[heading]
        keys = heading_keys(heading)
        ids = next((self.area_headings[k] for k in keys if k in self.area_headings), [])
        kind = next((self.kind_headings[k] for k in keys if k in self.kind_headings), None)
        if not ids and kind is None and keys:
            typo = close_key(keys[0], self._keys_near(len(keys[0])))
            if typo is not None:
                ids, kind = self.area_headings.get(typo, []), self.kind_headings.get(typo)
            else:
                ids, kind = self._by_words(keys[0])
        if len(self._found) >= HEADINGS_KEPT:
            self._found.clear()  # a body of 30,000 made-up headings must not stay in memory
        self._found[heading] = ids, kind
        return ids, kind

    def _by_words(self, key: str) -> tuple[list[str], str | None]:
        """What a name made of known names means (``spelled_keys``), when they are all area
        names or all section names (a mix, "Compile time improvements" under Performance,
        names a topic: its section says the kind). Areas: the first named first (``CUDA /
        ROCm`` is CUDA's; the classifier then takes the finer id of that area, so
        ``torch.compile + Inductor`` is compile/inductor). Sections: the first kind named
        (``BC-Breaking changes and deprecations`` holds BC-breaking changes). A catch-all
        ("Other") beside a name that says more names nothing."""
        def known(phrase: str) -> bool:
            return phrase in self.area_headings or phrase in self.kind_headings
        spelled = spelled_keys(key, known, self._longest_key())
        if spelled and all(k in self.kind_headings for k in spelled):
            kinds = [self.kind_headings[k] for k in spelled]
            return [], next((k for k in kinds if k != CATCH_ALL), kinds[0])
        if spelled and all(k in self.area_headings for k in spelled):
            ids = list(dict.fromkeys(i for k in spelled for i in self.area_headings[k]))
            return [i for i in ids if i != CATCH_ALL] or ids, None
        return [], None

    def _longest_key(self) -> int:
        return max((len(k.split()) for k in [*self.area_headings, *self.kind_headings]),
                   default=1)

    def _keys_near(self, length: int) -> list[str]:
        """The known keys a typo of a ``length``-character key can be (one letter more, less
        or swapped: one shorter to one longer), in file order; indexed by length once."""
        source = self.area_headings, self.kind_headings
        shape = tuple((id(keys), len(keys)) for keys in source)
        if self._by_length is None or self._by_length[0] != shape:
            by_length: dict[int, list[str]] = {}
            for key in [*self.area_headings, *self.kind_headings]:
                by_length.setdefault(len(key), []).append(key)
            self._by_length = shape, by_length
        index = self._by_length[1]
        if length < TYPO_MIN_CHARS:  # too short for a letter more or less: only a swap
            return list(index.get(length, []))
        return [key for size in (length - 1, length, length + 1) for key in index.get(size, [])]

    def area_ids(self, heading: str) -> list[str]:
        return self.meaning(heading)[0]

    def kind_of_heading(self, heading: str) -> str | None:
        return self.meaning(heading)[1]

    def heading_area(self, section: Iterable[str]) -> str | None:
        """The top-level id of the first heading above an item that owns an area (a topic-only
        heading such as "Dynamic Shapes" does not; a catch-all, "Miscellaneous", only when no
        heading below it names one): the notes' own label for the item."""
        catch_all = None
        for heading in section:
            ids = [i for i in self.area_ids(heading) if i not in self.context_only]
            if ids == [CATCH_ALL]:
                catch_all = CATCH_ALL
            elif ids:
                return top_level(ids[0])
        return catch_all

    def matching_rules(self, text: str, finer_of: str | None = None) -> Iterator[TextRule]:
        """The text rules that match ``text``, in order; with ``finer_of``, only the rules of
        that subsystem's finer ids (what refines an item under its area heading).

        All ~600 rules go through the prefilter's index; one subsystem's few dozen are cheaper
        to check literal by literal."""
        rules = self.text_rules
        key = id(rules), len(rules)
        if self._index is None or self._index[0] != key:
            finer: dict[str, list[TextRule]] = {}
            for rule in rules:
                if "/" in rule.subsystem:
                    finer.setdefault(top_level(rule.subsystem), []).append(rule)
            prefilter = RuleIndex(rules)
            self._index = key, prefilter, finer, any_of(
                [rules[number].pattern for number in prefilter.always])
        lowered = text.lower()
        if finer_of is not None:
            yield from (r for r in self._index[2].get(finer_of, []) if r.matches(text, lowered))
            return
        # The rules with no literal to look for are tried at once first: most texts match none.
        together = self._index[3]
        always = together is None or together.search(text) is not None
        for index in self._index[1].candidates(lowered, always=always):
            if rules[index].pattern.search(text):
                yield rules[index]

    def is_known_heading(self, heading: str) -> bool:
        return bool(self.area_ids(heading)) or self.kind_of_heading(heading) is not None

    def add_heading(self, heading: str, subsystem: str, *, first: bool = False) -> None:
        self._found.clear()
        self._by_length = None
        ids = self.area_headings.setdefault(heading_key(heading), [])
        if subsystem in ids:
            ids.remove(subsystem)
        ids.insert(0, subsystem) if first else ids.append(subsystem)


def _check_subsystem(subsystem: str, where: str) -> str:
    if top_level(subsystem) not in SUBSYSTEMS or not re.fullmatch(r"[a-z_]+(?:/[a-z0-9_]+)?",
                                                                 subsystem):
        raise ConfigError(f"{where}: {subsystem!r} is not a subsystem id "
                          f"(one of {', '.join(SUBSYSTEMS)}, optionally /finer)")
    return subsystem


def _compile(pattern: str, where: str) -> LazyPattern:
    """A user's pattern, compiled now: one that does not compile is a configuration error."""
    try:
        return LazyPattern.of(re.compile(pattern, re.IGNORECASE))
    except re.error as error:
        raise ConfigError(f"{where}: pattern {pattern!r} is not a valid regex: {error}") from None


def _shipped(pattern: str) -> LazyPattern:
    """A built-in pattern, compiled on first use (``tests/test_taxonomy`` compiles them all)."""
    return LazyPattern(pattern, re.IGNORECASE)


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"cannot load {path}: {error}") from None


def _load_subsystems(taxonomy: Taxonomy, table: Mapping[str, Any], where: str) -> None:
    for subsystem, entry in table.items():
        _check_subsystem(subsystem, where)
        taxonomy.names[subsystem] = entry.get("name", subsystem)
        taxonomy.descriptions[subsystem] = entry.get("description", "")
        if entry.get("context_only"):
            taxonomy.context_only.add(subsystem)
        for heading in entry.get("headings", []):
            taxonomy.add_heading(heading, subsystem)
        weight = float(entry.get("weight", 1))
        taxonomy.text_rules.extend(
            TextRule.make(subsystem, _shipped(p), weight)
            for p in entry.get("patterns", []))
        taxonomy.text_rules.extend(
            TextRule.make(subsystem, _shipped(p), DECISIVE)
            for p in entry.get("decisive", []))


def _load_kinds(taxonomy: Taxonomy, table: Mapping[str, Any], where: str) -> None:
    for kind, entry in table.items():
        if kind not in KINDS:
            raise ConfigError(f"{where}: {kind!r} is not a kind ({', '.join(KINDS)})")
        for heading in entry.get("headings", []):
            taxonomy.kind_headings[heading_key(heading)] = kind
        strong = bool(entry.get("strong", False))
        taxonomy.kind_rules.extend(KindRule(kind, _shipped(p), strong)
                                   for p in entry.get("patterns", []))
        taxonomy.lead_rules.extend(KindRule(kind, _shipped(p))
                                   for p in entry.get("lead_patterns", []))
        taxonomy.patch_rules.extend(KindRule(kind, _shipped(p))
                                    for p in entry.get("patch_patterns", []))
        if entry.get("patch_default"):
            taxonomy.patch_kind = kind


def _load_apis(table: Mapping[str, Any], where: str) -> ApiOwners:
    return ApiOwners({prefix: _check_subsystem(subsystem, f"{where} {prefix}")
                      for prefix, subsystem in table.items()})


@cache
def builtin_taxonomy() -> Taxonomy:
    taxonomy = Taxonomy()
    _load_subsystems(taxonomy, _read(subsystems_path())["subsystems"], "subsystems.toml")
    _load_kinds(taxonomy, _read(kinds_path())["kinds"], "kinds.toml")
    owners = _read(apis_path())
    taxonomy.apis = _load_apis(owners["apis"], "apis.toml").with_short_names(
        owners.get("aliases", {}), short_names_path())
    return taxonomy


def with_overrides(headings: Mapping[str, str], rules: Iterable[tuple[str, list[str]]]) -> Taxonomy:
    """The built-in taxonomy with a user's headings and rules put in front of the built-in ones."""
    base = builtin_taxonomy()
    headings, rules = dict(headings), list(rules)
    if not headings and not rules:
        return base
    taxonomy = Taxonomy(
        names=dict(base.names), descriptions=dict(base.descriptions),
        area_headings={key: list(ids) for key, ids in base.area_headings.items()},
        context_only=set(base.context_only), text_rules=[], kind_headings=dict(base.kind_headings),
        kind_rules=list(base.kind_rules), lead_rules=list(base.lead_rules), apis=base.apis,
        patch_rules=list(base.patch_rules), patch_kind=base.patch_kind)
    for heading, subsystem in headings.items():
        _check_subsystem(subsystem, "classify.headings")
        taxonomy.add_heading(heading, subsystem, first=True)
        taxonomy.context_only.discard(subsystem)
    # User rules outweigh any built-in combination, so they decide whenever they match.
    for subsystem, patterns in rules:
        _check_subsystem(subsystem, "classify.rules")
        taxonomy.text_rules.extend(
            TextRule.make(subsystem, _compile(p, "classify.rules"), USER_RULE) for p in patterns)
    taxonomy.text_rules.extend(base.text_rules)
    return taxonomy


def taxonomy_for(config: Config) -> Taxonomy:
    """The taxonomy a configuration classifies with: its ``[classify]`` headings and rules in
    front of the built-in ones (a ConfigError where a rule does not compile or names no
    subsystem). The same for the bot, ``config check`` and the offline commands."""
    return with_overrides(config.classify.headings, config.classify.rule_patterns())
