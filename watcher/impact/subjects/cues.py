"""The words release notes say changes with: the generic English cues the clause reader and
the item reader decide by. No API names here, only vocabulary: change verbs ("deprecated",
"removed", "no longer"), replacement triggers ("use", "in favor of", "renamed to"), context
prepositions ("under", "when using"), option nouns ("param", "kwarg", "flag"), and the owners
of config modules ("Inductor config variable").

Every pattern is bounded (no unbounded repeat inside a repeat) and is run either anchored on a
short piece of a sentence or once over a sentence, so reading stays linear in the text.
"""

from __future__ import annotations

import re

from watcher.impact.subjects.text import Sentence

__all__ = [
    "ACCEPT_BEFORE",
    "ADVICE_START",
    "BOUNDARY",
    "CHAIN",
    "CONFIG_AFTER",
    "CONFIG_BEFORE",
    "CONFIG_OWNERS",
    "FROM_TO",
    "GLOSS_BEFORE",
    "INSTANCES_AFTER",
    "INSTEAD_END",
    "INSTEAD_OF",
    "MECHANISM",
    "METHOD_AFTER",
    "MODIFIES_AFTER",
    "MODULE_AFTER",
    "MODULE_BEFORE",
    "NEW",
    "NOT_API",
    "NOT_OWNERS",
    "OMITTED_AFTER",
    "OPTION_AFTER",
    "OPTION_BEFORE",
    "OUT_VARIANT",
    "OWNER_LINK",
    "OWNER_WORD",
    "PLACE_AFTER",
    "QUALIFIER",
    "REMOVAL_BEFORE",
    "REPLACEMENT_AFTER",
    "SNAKE_AFTER_TO",
    "STRONG_CONTEXT",
    "TRIGGER",
    "WEAK_CONTEXT",
    "WHOLE_AFTER",
    "is_default",
    "strong_cue",
    "weak_cue",
]

# The owners notes name config variables by ("Inductor config variable `x`"), and where those
# variables live: generic vocabulary of the compiler stack, not a list of variables.
CONFIG_OWNERS: dict[str, str] = {
    "inductor": "torch._inductor.config", "dynamo": "torch._dynamo.config",
    "aoti": "torch._inductor.config.aot_inductor",
    "aotinductor": "torch._inductor.config.aot_inductor",
    "aot inductor": "torch._inductor.config.aot_inductor",
    "functorch": "torch._functorch.config", "aot autograd": "torch._functorch.config",
}
OWNER_WORDS = r"(inductor|dynamo|aoti|aotinductor|aot inductor|functorch|aot autograd)"
CONFIG_BEFORE = re.compile(OWNER_WORDS + r"(?:'s)?\s+config(?:uration)?\s*(?:variables?|"
                           r"settings?|options?|flags?|knobs?)?\s*$", re.I)
CONFIG_AFTER = re.compile(r"\s*(?:has\s+|have\s+)?(?:been\s+)?(?:moved\s+)?(?:from|in|of)\s+"
                          r"(?:the\s+)?" + OWNER_WORDS + r"\s+config", re.I)
CHAIN = re.compile(r"\s*(?:,|/|and|or|,\s*and|,\s*or)\s*", re.I)

NOUN = r"(?:options?|params?|parameters?|arguments?|args?|kwargs?|keywords?|flags?)"
# "`x` is no longer accepted by `f`": the passive of ACCEPT_BEFORE.
_REFUSED_VERB = (r"(?:is|are)\s+(?:no\s+longer|not)\s+(?:accepted|allowed|taken|supported)"
                 r"(?:\s+(?:anymore|any\s+longer))?")
_REFUSED = r"\s*" + _REFUSED_VERB + r"\s+by\s+"
OPTION_AFTER = re.compile(r"\s*" + NOUN + r"\b|\s*passed\s+to\s+|" + _REFUSED, re.I)
OPTION_BEFORE = re.compile(r"\b(?:supply|supplying|pass|passing|set|setting|specify|"
                           r"specifying)\s+(?:the\s+)?$", re.I)
# "`f` no longer accepts `x`", "stopped accepting the `x`", "does not take `x` anymore": what
# the API before it refuses now is an option of that API, not the API itself.
ACCEPT_BEFORE = re.compile(r"\b(?:no\s+longer|not|n't|stopped|stops|ceased?\s+to|cannot|can\s+no"
                           r"\s+longer)\s+(?:accept|accepts|accepting|take|takes|taking|allow|"
                           r"allows|allowing)\s+(?:the\s+|an?\s+)?$", re.I)
# "Add a framework so that options can be marked deprecated", "Introduce a mechanism to
# deprecate": the item brings a means of changing things, and changes nothing itself.
MECHANISM = re.compile(r"^\W{0,4}(?:add|adds|added|adding|introduce[sd]?|introducing|provide[sd]?|"
                       r"implement(?:s|ed)?|create[sd]?)\s+(?:an?\s+|the\s+)?(?:new\s+)?"
                       r"(?:[\w-]+\s+){0,2}?(?:framework|mechanism|infrastructure|infra|"
                       r"machinery|utility|utilities|helpers?|way|ability)\s+(?:so|that|to|for|"
                       r"which)\b", re.I)
# What ties an option to the API after it: "`x` param in `f`", "`x` (current default) option
# for `f`", "`x` passed to `f`", "`x=False` is now the default in `f`".
_TIE = (r"(?:\s*\([^()]{0,60}\))?\s*(?:" + NOUN + r"\s+)?(?:(?:that\s+is\s+|is\s+)?passed\s+|"
        r"(?:is|are)\s+(?:now\s+)?(?:the\s+)?(?:new\s+)?default\s+|(?:(?:has|have)\s+been\s+|is\s+|"
        r"are\s+|was\s+|were\s+)(?:removed|dropped|deprecated|deleted)\s+|" + _REFUSED_VERB +
        r"\s+)?")
OWNER_LINK = re.compile(_TIE + r"(?:in|for|on|of|to|from|into|by)\s+(?:the\s+|an?\s+)?", re.I)
# ... or to a class named in plain words: "the `verbose` kwarg to the LRScheduler constructor",
# "`data_source` argument from Sampler" (the case of the word is checked by the caller).
OWNER_WORD = re.compile(_TIE + r"(?:in|for|on|of|to|from)\s+(?:the\s+)?([A-Za-z][A-Za-z0-9_]{1,60})"
                        r"\b", re.I)
# Capitalised words that name a project or a tool, not a class.
NOT_OWNERS = frozenset({"Python", "PyTorch", "ExecuTorch", "TorchScript", "Triton", "Inductor",
                        "Dynamo", "Windows", "Linux", "MacOS", "Apple", "Intel", "The", "This"})
# "when `x` is not provided": the calls that leave the option out.
OMITTED_AFTER = re.compile(r"\s*(?:is|are)\s+not\s+(?:provided|passed|given|specified|set)\b", re.I)
METHOD_AFTER = re.compile(r"\s*methods?\b", re.I)
OUT_VARIANT = re.compile(r"\bout[- ]variants?\s+of\s+(?:the\s+)?$", re.I)
QUALIFIER = re.compile(r"\s*(?:function|class|method|attribute|member)?\s*(?:in|from)\s+"
                       r"(?:the\s+)?", re.I)

# Words that make what follows them (to the end of the clause) the recommended replacement:
# advice ("please", "use", "users should"), and the new name of a move or rename.
TRIGGER = re.compile("|".join([
    r"\b(?:please|consider|leverage|recommend\w*|prefer\w*|encourag\w*|refer\s+to)\b",
    r"\b(?:in\s+favou?r\s+of|renamed\s+to|moved\s+to|migrat\w*\s+to|move\s+to|switch\s+to)\b",
    r"\breplac(?:ed|ing)\s+(?:\w+\s+){0,2}?(?:by|with)\b",
    r"\bfall(?:s|ing)?\s+back\s+to\b",
    r"\b(?:users?|you)\s+(?:can|could|may|should|must|need\s+to)\b(?!\s+no\s+longer)",
    r"(?<!\bthe\s)(?<!\ba\s)(?<!\bits\s)\buse\b(?!\s+(?:of|case)\b)",  # not "the use of"
    r"\binstead,",
    r"\bnow\s+(?:returns?|raises?|yields?|produces?)\b",  # what follows is the new behaviour
]), re.I)
FROM_TO = re.compile(r"\b(?:mov|switch|migrat|chang|upgrad)\w*\s+from\b[^.]{0,120}?\bto\b",
                     re.I)
BOUNDARY = re.compile(r"[.;:!?](?=\s|`|$)|\binstead\s+of\b|\brather\s+than\b|\b(?:as|since|"
                      r"because|but|while|whereas|if)\b", re.I)
# Advice opening a clause: "pass", "use", "call" ... (its start, after a boundary).
ADVICE_START = re.compile(r"\s{0,4}(?:please\s+)?(?:pass|use|call|set|specify|import|switch|"
                          r"migrate|write|provide|supply)\b", re.I)
# A clause ending in "instead" ("; pass `z` to `W` instead"): all of it is the replacement.
INSTEAD_END = re.compile(r"\binstead\b(?!\s+of)", re.I)
REPLACEMENT_AFTER = re.compile(r"\s*(?:instead\b(?!\s+of)|should\s+be\s+used|is\s+(?:now\s+)?"
                               r"(?:recommended|preferred)|in\s+its\s+place)", re.I)

INSTEAD_OF = re.compile(r"\b(?:instead\s+of|rather\s+than)\s+(?:the\s+|an?\s+)?$", re.I)
STRONG_CONTEXT = re.compile(r"\b(?:under|using|calling|inside|within|via|through|by|enabling|"
                            r"allowing|letting)\s+"
                            r"(?:the\s+|an?\s+)?$", re.I)
WEAK_CONTEXT = re.compile(r"\b(?:in|for|from|with|on|of|at|to|into)\s+(?:the\s+|an?\s+)?$",
                          re.I)
NEW = re.compile(r"\b(?:add|adds|added|adding|introduce[sd]?|introducing|new)\s+(?:the\s+|an?\s+)?"
                 r"$", re.I)
NOT_API = re.compile(r"\s*(?:enum\s+)?(?:values?|attributes?|fields?|tensors?|dtypes?|versions?)"
                     r"\b|\s*to\s+v?\d", re.I)
# "converts `Partial` placements": instances of a class named as values, once the sentence has
# its subject.
INSTANCES_AFTER = re.compile(r"\s*(?:objects?|instances?|placements?|inputs?|outputs?)\b", re.I)
MODULE_AFTER = re.compile(r"\s*(?:module|package|namespace|submodule|library)\b", re.I)
# "`torch.ao.quantization` is deprecated": the thing itself (singular) is going away.
WHOLE_AFTER = re.compile(r"\s*(?:is|has\s+been|was|will\s+be)\s+(?:now\s+)?(?:deprecated|"
                         r"removed|deleted|dropped)\b", re.I)
MODULE_BEFORE = re.compile(r"\b(?:module|package|namespace|submodule)\s+$", re.I)

STRONG = re.compile(r"\b(?:deprecat\w*|remov\w*|delet\w*|drop(?:s|ped)?|kill(?:s|ed)?|renam\w*"
                    r"|replaced|no\s+longer|private|obsolete|discontinu\w*|end\s+of\s+life|EOL"
                    r"|eliminat\w*|(?:is|are|now|been)\s+gone)\b",
                    re.I)
WEAK = re.compile(r"\b(?:now|chang\w*|defaults?|raises?|errors?|updated?|moved?|replac\w*"
                  r"|breaking|no\s+more|not\s+allowed|unsupported|previously|(?:before|after)"
                  r"\s+this\s+(?:pr|change|release|update))\b", re.I)
# A changed default, in the ways notes say it ("switched default to", "default to",
# "default opset ... is now", "now uses X by default", "the default ... changed").
DEFAULT = re.compile("|".join([
    r"\b(?:flip(?:s|ped)?|switch(?:es|ed)?|chang(?:e|es|ed)|set|sets|update[sd]?)\b"
    r"[^.\x00]{0,60}?\bdefault",
    r"\bdefaults?\s+(?:to|is\s+now|are\s+now|will\s+now)\b",
    r"\bdefault\b[^.]{0,80}?\b(?:is|are)\s+now\b",
    r"\bnow\s+(?:uses?|defaults?)\b[^.]{0,80}?\bby\s+default\b",
    r"\bdefault\b[^.]{0,60}?\b(?:changed|updated|flipped|switched)\b",
    r"\b(?:is|are|becomes?|became)\s+(?:now\s+)?the\s+(?:new\s+)?default\b",
    r"\bnow\s+defaults?\b",
]), re.I)
SNAKE_AFTER_TO = re.compile(r"\s{0,4}to\s+([a-z][a-z0-9]*_[a-z0-9_]{1,80})\b")


def strong_cue(sentence: Sentence) -> bool:
    """Says something is removed, deprecated, renamed or made private."""
    return STRONG.search(sentence.text) is not None


def weak_cue(sentence: Sentence) -> bool:
    """Says anything changed at all."""
    return strong_cue(sentence) or WEAK.search(sentence.text) is not None


def is_default(sentence: Sentence) -> bool:
    """Says a default changed ("switched default to", "now uses X by default")."""
    return DEFAULT.search(sentence.text) is not None


# A parenthesised gloss: "a process group registry (`x`)", plain words right before "(".
GLOSS_BEFORE = re.compile(r"[A-Za-z]{2,}\s*\(\s*$")
# "Drop `x` in exporter API": the removal verb right before the mention, and after it "in"
# and plain words to the end of the sentence (not "in favor of", a replacement).
REMOVAL_BEFORE = re.compile(r"\b(?:remov(?:e|ed|es|ing)|drop(?:s|ped|ping)?|delet(?:e|ed|es|ing))"
                            r"\s+(?:the\s+)?$", re.IGNORECASE)
PLACE_AFTER = re.compile(r"\s+in\s+(?!favou?r\b)[A-Za-z][\w -]{0,60}[\s(#0-9,).]*$")
# "`x` diagnostic path is ...": plain nouns after the name, then the verb; the nouns are what
# changed, unless they say what kind of API the name is ("`x` function is deprecated").
API_KINDS = (r"functions?|methods?|class(?:es)?|modules?|apis?|options?|flags?|arguments?|"
             r"param(?:eter)?s?|kwargs?|attributes?|propert(?:y|ies)|operators?|ops?|backends?|"
             r"config(?:uration)?s?|variables?|decorators?|packages?|submodules?|namespaces?|"
             r"types?|enums?|constructors?|fields?|settings?|context\s+managers?|"
             # aspects of the API itself: "`x` default behavior is changed"
             r"behaviou?rs?|semantics|defaults?|outputs?|results?|signatures?|returns?|values?|"
             r"usages?|support|calls?|inputs?")
MODIFIES_AFTER = re.compile(r"\s+(?!(?:" + API_KINDS + r")\b)[a-z]{3,}(?:\s+(?!(?:" + API_KINDS
                            + r")\b)[a-z]{3,})?\s+(?:is|are|was|were|has\s+been|have\s+been)\b")
