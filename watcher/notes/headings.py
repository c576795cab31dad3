"""Heading names, normalised so that the next release's spelling still finds its meaning.

Release notes name the same area many ways over the years: ``torch.nn``, ``nn``, ``torch.nn
API``, ``NN Frontend``; ``Bug fixes``, ``## **Bug Fixes:**``; ``[Beta] FlexAttention``,
``FlexAttention (Prototype)``; ``Compostability`` (sic). A name is looked up by its key (case,
emphasis, backticks and punctuation dropped, words singular), then by the key without release
qualifiers, the ``torch.`` prefix and ``API``/``Frontend`` suffixes, then by either side of a
parenthesised part, then by a close spelling (one typo in a long name), and last by its words
(``spelled_keys``): a name that combines known names in a new way (``CUDA / ROCm``,
``torch.compile + Inductor``, ``BC-Breaking changes and deprecations``) means what they mean.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Protocol

# What a catch-all heading ("Miscellaneous", "Other") names, as a kind and as an area: nothing in
# particular. It keeps the kind of the section above it, and an area named below it still decides
# (``Performance > Miscellaneous > - c10d`` is a performance change in distributed/c10d).
CATCH_ALL = "other"


class HeadingLookup(Protocol):
    """What a heading's name means (the taxonomy answers; the parser and its checks ask)."""

    def area_ids(self, heading: str) -> list[str]: ...

    def kind_of_heading(self, heading: str) -> str | None: ...


_PUNCT = re.compile(r"[^\w.+/#]+")
_PAREN = re.compile(r"\(([^()]{0,80})\)|\[([^\[\]]{0,80})\]")  # where qualifiers stand
_ROUND = re.compile(r"\(([^()]{0,80})\)")  # "Distributed (c10d)": either part names it
_QUALIFIERS = frozenset({"beta", "prototype", "stable", "experimental", "wip", "unstable",
                         "new", "preview"})
_SUFFIXES = ("api", "apis", "frontend", "front end", "front-end", "interface")
_QUALIFIED = re.compile(r"^\s*(?:beta|prototype|stable|experimental)\s*[:\-\u2013]\s*",
                        re.IGNORECASE)


def _singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")) or not word.endswith("s"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("xes", "ches", "shes", "sses")):
        return word[:-2]
    return word[:-1]


def heading_key(text: str) -> str:
    """``"## **Bug fixes:**"`` → ``"bug fix"``; ``"torch.compile"`` keeps its dot."""
    text = text.replace("&", " and ").replace("`", " ")
    words = _PUNCT.sub(" ", text.lower()).split()
    return " ".join(_singular(word.strip(".")) for word in words if word.strip("."))


def _without_qualifiers(text: str) -> str:
    """``[Beta] X``, ``X (Prototype)``, ``Prototype: X`` → ``X``."""
    def keep(match: re.Match[str]) -> str:
        inner = (match.group(1) or match.group(2) or "").strip().lower()
        return " " if inner in _QUALIFIERS else match.group(0)
    text = _PAREN.sub(keep, text)
    return _QUALIFIED.sub("", text)


def _trimmed(key: str) -> Iterator[str]:
    """The key without a ``torch.`` prefix and without an API/Frontend-like suffix."""
    forms = [key]
    if key.startswith("torch.") and len(key) > 6:
        forms.append(key[6:])
    for form in list(forms):
        for suffix in _SUFFIXES:
            if form.endswith(" " + suffix):
                forms.append(form[: -len(suffix) - 1])
    yield from forms


@lru_cache(maxsize=4096)
def heading_keys(text: str) -> tuple[str, ...]:
    """Every key a heading may be known by, most literal first."""
    if "(" not in text and "[" not in text and not _QUALIFIED.match(text):
        # No qualifier and no parenthesised part (most headings): one variant, the text.
        return tuple(key for key in dict.fromkeys(_trimmed(heading_key(text))) if key)
    plain = _without_qualifiers(text)
    outside = _ROUND.sub(" ", plain)
    inside = _ROUND.findall(plain)
    keys: list[str] = []
    for variant in (text, plain, outside, *inside):
        keys.extend(_trimmed(heading_key(variant)))
    return tuple(key for key in dict.fromkeys(keys) if key)


def _swapped_pair(a: str, b: str) -> bool:
    """One pair of neighbouring letters swapped (``FDSP`` for ``FSDP``)."""
    if len(a) != len(b) or a == b:
        return False
    first = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    # The pair swapped, and the rest alike: no list of every difference needed.
    return a[first + 1:first + 2] == b[first:first + 1] and \
        a[first:first + 1] == b[first + 1:first + 2] and a[first + 2:] == b[first + 2:] and \
        first + 1 < len(a)


def _within_one_edit(a: str, b: str) -> bool:
    """Levenshtein distance ≤ 1 (a typo: one letter missing, extra, wrong or swapped)."""
    if a == b:
        return True
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            if len(a) == len(b):
                swapped = a[index + 1:index + 2] == b[index:index + 1] and \
                    a[index:index + 1] == b[index + 1:index + 2]
                return a[index + 1:] == b[index + 1:] or (
                    swapped and a[index + 2:] == b[index + 2:])
            return a[index:] == b[index + 1:]
    return True


TYPO_MIN_CHARS = 8  # shorter names differ by one letter too often (CPU/GPU, mps/mpi)
SWAP_MIN_CHARS = 4  # but two swapped letters in an acronym are still a typo (FDSP)


def close_key(key: str, known: Iterable[str]) -> str | None:
    """A known key one typo away from ``key`` (``compostability`` → ``composability``)."""
    if len(key) < SWAP_MIN_CHARS:
        return None
    # One typo in a word of 4 letters or more leaves its first or its last letter in place:
    # the other known keys are passed over without spelling them out (every title of a body
    # of made-up entries is looked up here).
    first, last = key[0], key[-1]
    matches = [other for other in known if (other[:1] == first or other[-1:] == last) and ((
        len(key) >= TYPO_MIN_CHARS and len(other) >= TYPO_MIN_CHARS
        and _within_one_edit(key, other)) or _swapped_pair(key, other))]
    return matches[0] if len(set(matches)) == 1 else None


# Words that join names in a heading without naming anything ("CUDA / ROCm", "Improvements &
# fixes": ``heading_key`` spells "&" as "and").
_JOINERS = frozenset({"and", "or", "with", "for", "in", "of", "on", "the", "+", "/", "-", "vs",
                      "plus", ","})
MAX_SPELLED_WORDS = 8  # longer names are sentences (an entry's title), not combined names
MAX_UNKNOWN_RUN = 2  # words of a product name between two known names ("Distributed X DTensor")


def spelled_keys(key: str, is_known: Callable[[str], bool], longest: int) -> list[str]:
    """The known keys a heading's words spell, left to right, or [] when its words are not
    only known names and joiners. At each word the longest known phrase (up to ``longest``
    words) is taken; a word of no known name may only stand between two known names (a
    product name: "Distributed FooTensor DeviceMesh"), never first or last, so an entry's title
    ("Remove torch.compile support") is not read as a name. ``cuda/rocm`` is two words."""
    words = [part for token in key.split()
             for part in ([token] if is_known(token) or "/" not in token
                          else token.replace("/", " / ").split())]
    if len(words) > MAX_SPELLED_WORDS:
        return []
    found: list[str] = []
    unknown = 0
    index = 0
    while index < len(words):
        for end in range(min(len(words), index + longest), index, -1):
            phrase = " ".join(words[index:end])
            if is_known(phrase):
                found.append(phrase)
                unknown, index = 0, end
                break
        else:
            if words[index] not in _JOINERS:
                unknown += 1
                if not found or unknown > MAX_UNKNOWN_RUN:
                    return []
            index += 1
    return found if found and not unknown else []
