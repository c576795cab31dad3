"""Which text rules can match a text, found without trying each of the ~600 rules.

Every rule whose pattern has a literal part (``literal_hint``: ``\\bPJRT\\b`` → "pjrt")
can only match a text that contains that literal, lower-cased. Rather than test ~600 literals
one by one per item, the rules are indexed by the first three characters of their literal: an
item's distinct three-character substrings (one pass over its text) pick out the few literals
worth looking for, and only their rules' regexes run. The outcome is exactly that of trying every
rule (a test compares the two over every real release): a literal in the text always has its
first three characters there too. Literals of two characters, and rules with none, are few and
are tried on every text. Linear in the text: one pass, then a bounded number of substring tests.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Protocol

_LITERAL = re.compile(r"(?:\\[.\-_/ +]|[A-Za-z0-9_ ])+")


def _has_top_level_alternation(pattern: str) -> bool:
    depth, escaped = 0, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
    return False


def literal_hint(pattern: str) -> str | None:
    """A lower-case substring every match of ``pattern`` must contain, or None if unsure.

    Checking ``hint in text`` first skips the regex for the ~95% of rules that cannot match an
    item, which is what keeps classifying a 700-item release well under 0.2 s.
    """
    if _has_top_level_alternation(pattern) or pattern.startswith(("(?=", "(?!", "\\b(?")):
        return None
    body = pattern.removeprefix("^")
    groups = 0
    while body.startswith(("\\b", "(?:")):
        groups += body.startswith("(?:")
        body = body[3:] if body.startswith("(?:") else body[2:]
    match = _LITERAL.match(body)
    if not match:
        return None
    literal = match.group(0)
    following = body[match.end():match.end() + 2]
    optional = {"?", "*", "{"}
    if following[:1] == "|" or (groups and following[:1] == ")" and following[1:] in optional):
        return None  # "(?:Update|Bump)" or "(?:foo)?bar": the literal is only one option
    if following[:1] in optional:  # the last character (or escape, "\\.?") is optional
        literal = literal[:-2] if literal[-2:-1] == "\\" else literal[:-1]
    hint = re.sub(r"\\(.)", r"\1", literal).lower()
    return hint if len(hint) >= 2 else None



PREFIX = 3


class Hinted(Protocol):
    @property
    def hint(self) -> str | None: ...


class RuleIndex:
    """Positions in ``rules`` worth trying on a text, in rule order."""

    def __init__(self, rules: Sequence[Hinted]) -> None:
        self.size = len(rules)
        self.by_prefix: dict[str, list[tuple[str, int]]] = {}
        self.short: list[tuple[str, int]] = []  # literals shorter than PREFIX
        self.always: list[int] = []  # rules with no literal
        for index, rule in enumerate(rules):
            hint = rule.hint
            if hint is None:
                self.always.append(index)
            elif len(hint) < PREFIX:
                self.short.append((hint, index))
            else:
                self.by_prefix.setdefault(hint[:PREFIX], []).append((hint, index))

    def candidates(self, lowered: str, *, always: bool = True) -> list[int]:
        """Indexes of the rules whose literal ``lowered`` (the text, lower-cased) contains, and
        (unless ``always`` is false) of the rules with none."""
        found = list(self.always) if always else []
        found += [index for hint, index in self.short if hint in lowered]
        by_prefix = self.by_prefix
        for gram in {lowered[start:start + PREFIX] for start in range(len(lowered) - PREFIX + 1)}:
            hinted = by_prefix.get(gram)  # (not grams & keys(), which copies the 300 keys)
            if hinted is not None:
                found += [index for hint, index in hinted if hint in lowered]
        found.sort()
        return found


class LazyPattern:
    """A regular expression compiled on its first search, as ``re.Pattern`` reads (``pattern``
    its source, ``flags``, ``search``): the taxonomy's ~600 rules cost their compile only when
    a text gets past a rule's literal (``RuleIndex``), so a command that classifies one file
    compiles the few its items need, not all of them on every run. The built-in rules are
    checked to compile by a test; a user's are compiled when read (``LazyPattern.of``), so a
    broken one is a configuration error at once."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        # As ``re.compile`` reports them: a text pattern is Unicode unless said ASCII.
        self.flags = flags if flags & re.ASCII else flags | re.UNICODE
        self._compiled: re.Pattern[str] | None = None

    @classmethod
    def of(cls, compiled: re.Pattern[str]) -> LazyPattern:
        lazy = cls(compiled.pattern, compiled.flags)
        lazy._compiled = compiled
        return lazy

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(text, pos, endpos)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"


class Source(Protocol):
    """A pattern as ``any_of`` joins it: its source and flags (a ``re.Pattern`` or a
    ``LazyPattern``, which need not be compiled for it)."""

    @property
    def pattern(self) -> str: ...

    @property
    def flags(self) -> int: ...


# What joining patterns into one would change: group references by number or name, and
# conditionals on a group.
_REFERS = re.compile(r"\\[1-9]|\\g<|\(\?P=|\(\?\(")


def any_of(patterns: Sequence[Source]) -> re.Pattern[str] | None:
    """One pattern that finds a match in a text exactly where one of ``patterns`` would (their
    alternation, each in its own group), so that a text none of them matches, most texts,
    costs one search instead of one each; None when they cannot be joined (different flags,
    group references, names used twice)."""
    flags = {pattern.flags for pattern in patterns}
    sources = [pattern.pattern for pattern in patterns]
    if len(flags) != 1 or any(_REFERS.search(source) for source in sources):
        return None
    try:
        return re.compile("|".join(f"(?:{source})" for source in sources), flags.pop())
    except re.error:
        return None
