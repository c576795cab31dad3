"""What an item does to what it names, read from its words: removes it, deprecates it, or
changes how it behaves; and what the change is limited to (a kind of input, a state the code
must set).

"Remove `torch.onnx._export`" removes a name, any use of which breaks; "Remove Nested Jagged
Tensor support from `flex_attention`" changes a function's behaviour for one kind of input, and
reaches only code that can make such an input; "respecting an already set `grad_scale`"
reaches only code that sets ``grad_scale``.
"""

from __future__ import annotations

import re

from watcher.impact.model import Effect, Qualifier
from watcher.impact.subjects.terms import InputKind
from watcher.impact.subjects.text import MARK, CodeBlock, Sentence

__all__ = ["CURRENT_DEFAULT", "effect_of", "read_qualifiers"]

REMOVED = re.compile(
    r"\b(?:remov(?:e|ed|es|ing|al)|delet(?:e|ed|es|ing)|drop(?:s|ped|ping)?|renamed|"
    r"kill(?:s|ed)?|eliminat(?:e|ed|es|ing)|(?:is|are|now|been)\s+gone|"
    r"finish(?:es|ed)?\s+(?:the\s+)?deprecation|no\s+longer\s+(?:public|"
    r"available|exists?|exposed|importable|accepted|accepts?|supported|takes?|has)|"
    r"stopped\s+(?:accepting|taking|supporting)|(?:does|do)\s+not\s+(?:accept|take|support)"
    r"\b[^.;]{0,80}?\b(?:anymore|any\s+longer))\b",
    re.IGNORECASE)
# "Remove X support from `f`", "drop support for X in `f`": `f` stays, a behaviour goes.
SUPPORT_FROM = re.compile(r"\bsupport\s+(?:from|in|on|of|for\s+\w+\s+(?:in|on|from))\b",
                          re.IGNORECASE)
# "The `dynamo=False` (current default) option is deprecated": relying on the default warns.
CURRENT_DEFAULT = re.compile(r"\(current(?:ly\s+the)?\s+default\)|\bthe\s+default\s+will\s+"
                             r"(?:be|become|change|switch)\b", re.IGNORECASE)
# "`f` no longer dispatches to MAGMA": only where the code selected that backend.
DISPATCH = re.compile(r"\bno\s+longer\s+dispatch(?:es)?\s+to\s+([A-Za-z][\w-]{1,30})",
                      re.IGNORECASE)
# A call selecting something by name in an example: preferred_linalg_library("magma").
SELECTOR = re.compile(r"([A-Za-z_][\w.]{0,120})\(\s*['\"]([\w-]{1,30})['\"]\s*\)")
# "an already set `x` value", "when `x` is already set", "if `x` is set".
STATE = re.compile(MARK + r"\s*(?:value\s+)?(?:is|was|has\s+been|are)\s+(?:already\s+)?set\b|"
                   r"\balready[- ]set\s+(?:the\s+)?(?=" + MARK + ")", re.IGNORECASE)


# "code that skips `f`", "users who never call `f`": the change needs f left out.
SKIPS = re.compile(r"\b(?:code|users?|callers?|programs?|scripts?|applications?)\s+(?:that|who|"
                   r"which)\s+(?:skips?|omits?|never\s+calls?|do(?:es)?\s+not\s+call|"
                   r"do(?:es)?n't\s+call)\s+(?:calling\s+)?(?=" + MARK + ")", re.IGNORECASE)


def effect_of(sentence: Sentence, kind: str) -> Effect:
    if kind == "deprecation":
        return "deprecated"
    if REMOVED.search(sentence.plain) and not SUPPORT_FROM.search(sentence.plain):
        return "removed"
    return "changed"


def read_qualifiers(sentences: list[Sentence], inputs: tuple[InputKind, ...],
                    blocks: list[CodeBlock] | None = None) -> list[Qualifier]:
    """The inputs and states the title limits the change to: words of an input kind in its
    prose (outside code spans), a code span said to be already set, a backend the API no
    longer dispatches to (selected by a call the item's examples show)."""
    found: list[Qualifier] = []
    for sentence in sentences:
        found += skipped_calls(sentence)
        if not sentence.title:
            continue
        for match in DISPATCH.finditer(sentence.plain):
            found += backend_selected(match[1], blocks or [])
        prose = " ".join(sentence.text.replace(MARK, " ").lower().split())
        # A phrase may name its kind through a code span ("`Partial` placements").
        plain = " ".join(sentence.plain.lower().split())
        for kind in inputs:
            if any(re.search(rf"(?<![\w.]){re.escape(word)}(?![\w])",
                             plain if " " in word else prose) for word in kind.words):
                found.append(Qualifier(kind="input", name=kind.name, made_by=kind.made_by,
                                       within=kind.within))
        for match in STATE.finditer(sentence.text):
            mention = state_mention(sentence, match)
            if mention:
                found.append(Qualifier(kind="state", name=mention,
                                       made_by=(mention, "_" + mention)))
    return list(dict.fromkeys(found))


def skipped_calls(sentence: Sentence) -> list[Qualifier]:
    """"This may break code that skips `init_process_group`": only code that never calls it."""
    found = []
    for match in SKIPS.finditer(sentence.text):
        index = sentence.text.count(MARK, 0, match.end())
        if index >= len(sentence.mentions):
            continue
        name = sentence.mentions[index].raw.strip("`").removesuffix("()")
        last = name.rpartition(".")[2]
        if last.isidentifier():
            found.append(Qualifier(kind="absent", name=last, made_by=("." + last,)))
    return found


def state_mention(sentence: Sentence, match: re.Match[str]) -> str:
    """The attribute a state match speaks of: the mention at the MARK it holds, or the one
    right after it ("already set `x`")."""
    position = match.start() if MARK in match.group() else match.end()
    index = sentence.text.count(MARK, 0, position)
    if index >= len(sentence.mentions):
        return ""
    name = sentence.mentions[index].raw.strip("`")
    return name if name.isidentifier() else ""


def backend_selected(backend: str, blocks: list[CodeBlock]) -> list[Qualifier]:
    """The change reaches only code that selects ``backend``: the calls the examples make with
    its name (``torch.backends.cuda.preferred_linalg_library("magma")``)."""
    setters = [match[1] for block in blocks for match in SELECTOR.finditer(block.code)
               if match[2].lower() == backend.lower()]
    if not setters:
        return []
    return [Qualifier(kind="setting", name=f"the {backend} backend",
                      made_by=tuple(dict.fromkeys(setters)))]
