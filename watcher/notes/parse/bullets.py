"""What a bullet is to a reader: an item, a group's name over the items nested in it, a label
over the bullets right below it, or an item with its explanation (``PRs: (#1, #2)``).

The tests here are structural, so they hold for notes written in styles not yet seen: a group
bullet cites nothing itself while bullets nested in it cite PRs as items of their own; a label
is a short reference-less phrase, not a sentence; an unindented line folded into a bullet
("lazy continuation") that announces a list is a lead-in to the bullets after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from watcher.notes.blocks import Bullet, ListBlock
from watcher.notes.text import References, folded

LABEL_WORDS = 8        # a reference-less bullet this short may be a group's label
LEAD_GROUP_WORDS = 20  # an introducing paragraph this short names its list's group
_EMPHASIS = re.compile(r"^[*_]{1,3}(.*?)[*_]{1,3}$")


def group_name(text: str) -> str:
    """``**Distributed Checkpoint**:`` → ``Distributed Checkpoint``."""
    name = text.strip().rstrip(":").strip()
    match = _EMPHASIS.match(name)
    return (match.group(1) if match else name).strip().rstrip(":").strip()


def carries(bullet: Bullet, refs: References) -> bool:
    """Does the bullet, or a bullet nested in it, cite PRs as an item of its own?"""
    prose = bullet.prose()
    if refs.find(prose) and not refs.only(prose):
        return True
    return bool(bullet.children) and any(carries(child, refs) for child in bullet.children)


def cites_beyond(block: ListBlock, cited: set[int], refs: References) -> bool:
    """Do the list's bullets cite PRs the entry above them does not?"""
    def citing(bullets: list[Bullet]) -> Iterator[int]:
        for bullet in bullets:
            yield from refs.find(bullet.prose())
            yield from citing(bullet.children)
    return bool(set(citing(block.bullets)) - cited)


def label_like(bullet: Bullet, refs: References) -> bool:
    """A short reference-less phrase (``Op Lowering``, ``In MPSInductor:``), not a sentence."""
    text = bullet.own_text()
    if bullet.children or "\n" in text or refs.find(text) or "](" in text or "://" in text:
        return False
    words = text.split()
    return (0 < len(words) <= LABEL_WORDS and not re.search(r"[.!?;]$|\.\s", text)
            and any(char.isalpha() for char in text))


def lead_group(lead: str) -> str:
    """An introducing paragraph that announces its list ("… for a few operators:") names it."""
    one_line = folded(lead)
    if one_line.endswith(":") and len(one_line.split()) <= LEAD_GROUP_WORDS:
        return one_line.rstrip(":").strip()
    return ""


def split_lazy(bullet: Bullet, last: bool) -> tuple[Bullet, str]:
    """Unindented lines CommonMark folds into a bullet ("lazy continuation") that introduce the
    bullets after it ("New meta tensor implementations for a few operators:") are a lead-in, not
    part of the bullet; on the last bullet of a list they are its continuation."""
    own, code = bullet.own, bullet.code
    if bullet.children:
        return bullet, ""
    end = len(own)
    while end > 0 and not own[end - 1].strip():
        end -= 1
    cut = end
    while cut > 1 and own[cut - 1].strip() and not own[cut - 1][0].isspace() and not code[
            cut - 1]:
        cut -= 1
    run = own[cut:end]
    if not run:
        return bullet, ""
    announces = run[-1].rstrip().endswith(":")
    titled = len(run) == 1 and len(run[0].split()) <= LABEL_WORDS and not re.search(
        r"[.!?;,]$", run[0].rstrip())  # "Several general FakeTensor improvements"
    if not (announces or (titled and not last)):
        return bullet, ""  # the bullet's own continuation (a wrapped sentence, a note)
    kept = own[:cut]
    trimmed = Bullet(bullet.start, bullet.start + cut, kept, code[:cut], [], kept,
                     bullet.numbers[:cut])
    return trimmed, "\n".join(line.strip() for line in run)
