"""Which exception types an "errors" item swaps: "`torch.cat` now raises `ValueError`,
`IndexError` or `TypeError` where appropriate instead of the generic `RuntimeError`". Valid
calls are untouched, but code that catches the old type around the call to handle bad input no
longer does (a ``try: torch.cat(...) except RuntimeError:`` turning a size mismatch into its
own message).
"""

from __future__ import annotations

import re

from watcher.impact.subjects.text import Sentence

__all__ = ["exception_swap"]

EXCEPTION = r"(?:[A-Za-z_][\w.]{0,60}\.)?[A-Z]\w{0,60}(?:Error|Exception)"
# The old type, after the words that say it is replaced: "instead of (the generic) X",
# "rather than X", "previously raised X", "used to raise X", "in place of X".
BEFORE = re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of|previously\s+raised|"
                    r"used\s+to\s+raise|(?:was|were)\s+raising)\s+(?:an?\s+|the\s+)?"
                    r"(?:generic\s+|plain\s+|old\s+)?(" + EXCEPTION + r")", re.IGNORECASE)
NAMED = re.compile(r"(?<![\w.])(" + EXCEPTION + r")\b")


def exception_swap(sentences: list[Sentence]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the types calls raised before, the types they raise now), each in the order written;
    both empty unless a sentence says which type is replaced."""
    before: list[str] = []
    now: list[str] = []
    for sentence in sentences:
        old = [match[1] for match in BEFORE.finditer(sentence.plain)]
        if not old:
            continue
        before += old
        now += [name for name in NAMED.findall(sentence.plain) if name not in old]
    return tuple(dict.fromkeys(before)), tuple(dict.fromkeys(now))
