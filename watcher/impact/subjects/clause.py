"""One sentence read for what it changes: each mention's part in it (the changed API, an option
of it, its owner, the replacement the note recommends, mere context) from the words around it.

The words are a few generic English cues, never per-release tables: "use X instead of Y",
"in favor of X", "renamed to X" make X a replacement; "the `x` option of `f`", "`x` passed to
`f`" make x an option of f; "Inductor config variable `x`" makes x a config name; "under
`torch.compile`" is context. Every regex is anchored at a sentence piece's end or start and
bounded, so a sentence costs time linear in its length.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from watcher.impact.model import Condition
from watcher.impact.subjects import cues as cue
from watcher.impact.subjects.names import NameInfo, expand, read_span
from watcher.impact.subjects.text import MARK, Sentence

__all__ = ["Found", "Reading", "read_sentence"]


@dataclass(frozen=True)
class Found:
    """A changed API as one sentence names it: ``name`` alias-expanded, maybe bare; for an
    option, ``name`` is its owner ("" while unknown)."""

    name: str
    condition: Condition = "uses"
    option: str | None = None
    parens: bool = False
    module_cue: bool = False
    config: bool = False  # qualified from a config owner ("Inductor config variable")
    method: bool = False  # the words call it a method ("the `x` method")
    whole: bool = False  # the singular subject of "is deprecated" / "has been removed"
    value: str = ""  # the option's value as written ("`dynamo=False` is deprecated")


@dataclass
class Reading:
    found: list[Found] = field(default_factory=list)
    replacements: set[str] = field(default_factory=set)  # names the sentence recommends
    names: list[str] = field(default_factory=list)  # every name it mentions, in order
    known: list[str] = field(default_factory=list)  # those it names as changed or as owners


@dataclass
class _Context:
    """One sentence while it is read: its pieces (``pieces[i]`` stands before mention ``i``)."""

    sentence: Sentence
    infos: list[NameInfo]
    pieces: list[str]
    roles: list[str]
    default: bool
    reading: Reading = field(default_factory=Reading)

    def before(self, index: int) -> str:
        return self.pieces[index][-120:]

    def after(self, index: int) -> str:
        return self.pieces[index + 1][:120]


def read_sentence(sentence: Sentence) -> Reading:
    """What the sentence says is changed, in the order it names them."""
    infos = [read_span(m.raw) if m.code else _bare(m.raw) for m in sentence.mentions]
    ctx = _Context(sentence, infos, sentence.text.split(MARK), ["head"] * len(infos),
                   cue.is_default(sentence))
    ctx.reading.names = [expand(info.name) for info in infos
                         if info.name and info.kind in ("name", "call", "assign")]
    _mark_replacements(ctx)
    for index in range(len(infos)):
        if ctx.roles[index] == "head":
            _read_mention(ctx, index)
    ctx.reading.known = [expand(info.name) for info, role in zip(infos, ctx.roles, strict=True)
                         if info.name and role in ("found", "owner", "option")]
    ctx.reading.known += [found.name for found in ctx.reading.found if "." in found.name]
    return ctx.reading


def _bare(raw: str) -> NameInfo:
    """A ``torch.`` name written without backticks."""
    if raw.endswith("()"):
        return NameInfo("call", name=raw[:-2])
    return NameInfo("name", name=raw)


def _mark_replacements(ctx: _Context) -> None:
    """Mentions inside a replacement clause, or followed by "instead", recommend, not change.
    A clause runs from its trigger to the next boundary, found by bisection in one list of
    boundaries, so many triggers cost no rescans."""
    text = ctx.sentence.text
    breaks = [m.end() for m in cue.BOUNDARY.finditer(text)]
    bounds = [m.start() for m in cue.BOUNDARY.finditer(text)] + [len(text)]
    starts = sorted([m.end() for m in cue.TRIGGER.finditer(text)]
                    + [m.end() for m in cue.FROM_TO.finditer(text)])
    advised = _advised_clauses(text, breaks)
    position = 0
    for index, info in enumerate(ctx.infos):
        position += len(ctx.pieces[index])
        trigger = bisect_right(starts, position) - 1
        inside = trigger >= 0 and bounds[bisect_left(bounds, starts[trigger])] > position
        inside = inside or any(start <= position < end for start, end in advised)
        if inside or cue.REPLACEMENT_AFTER.match(ctx.after(index)):
            ctx.roles[index] = "replacement"
            if info.name:
                ctx.reading.replacements.add(expand(info.name))
        position += len(MARK)


def _advised_clauses(text: str, breaks: list[int]) -> list[tuple[int, int]]:
    """"...; pass `z` to `W` instead": a clause told as advice (an imperative verb after its
    boundary) and ending in "instead" recommends all it names."""
    found = []
    for match in cue.INSTEAD_END.finditer(text):
        start = breaks[bisect_right(breaks, match.start()) - 1] if breaks and \
            breaks[0] <= match.start() else 0
        if cue.ADVICE_START.match(text, start):
            found.append((start, match.start()))
    return found


def _read_mention(ctx: _Context, index: int) -> None:
    """The first rule that explains the mention decides its part."""
    for rule in (_as_gloss, _as_placed, _as_modifier, _as_config, _as_out_variant, _as_option,
                 _as_qualified, _as_head):
        if rule(ctx, index):
            return


def _as_gloss(ctx: _Context, index: int) -> bool:
    """"stores a process group registry (`_pg_registry`)": a bare name in parentheses after
    plain words names what those words describe, here something new; it is no subject."""
    info = ctx.infos[index]
    if "." in info.name or not cue.GLOSS_BEFORE.search(ctx.before(index)):
        return False
    if not ctx.after(index).lstrip().startswith(")"):
        return False
    ctx.roles[index] = "gloss"
    return True


def _as_placed(ctx: _Context, index: int) -> bool:
    """"Drop `draft_export` in exporter API": a bare name removed *in* a place the words name
    (no API of its own) is taken out of that place's workings, not removed from the API."""
    info = ctx.infos[index]
    if "." in info.name or index + 1 != len(ctx.infos):
        return False
    if not (cue.REMOVAL_BEFORE.search(ctx.before(index))
            and cue.PLACE_AFTER.match(ctx.after(index))):
        return False
    ctx.roles[index] = "placed"
    return True


def _as_modifier(ctx: _Context, index: int) -> bool:
    """"The expensive `x` diagnostic path is no longer auto-invoked": a name that only
    modifies the noun after it (not a kind of API: "function", "option") is not what the
    body sentence says changed."""
    if ctx.sentence.title or not cue.MODIFIES_AFTER.match(ctx.after(index)):
        return False
    ctx.roles[index] = "modifier"
    return True


def _as_config(ctx: _Context, index: int) -> bool:
    """"Inductor config variables `a` and `b`", "`x` has moved from inductor config": names
    qualified by the config module of their owner."""
    info = ctx.infos[index]
    if info.kind not in ("name", "assign") or info.name.isupper():
        return False
    owner = _config_owner(ctx, index)
    if owner is None:
        return False
    prefix = cue.CONFIG_OWNERS[owner.lower()]
    name = info.name
    leaf = prefix.rsplit(".", 1)[1]
    if name.startswith(leaf + "."):  # "aot_inductor.embed_cubin" under AOTI
        prefix = prefix.rsplit(".", 1)[0]
    full = name if name.startswith("torch.") else f"{prefix}.{name}"
    ctx.reading.found.append(Found(full, config=True))
    ctx.roles[index] = "config:" + owner
    return True


def _config_owner(ctx: _Context, index: int) -> str | None:
    """The owner words before the mention, those of the mention it is listed with, or after."""
    before = cue.CONFIG_BEFORE.search(ctx.before(index))
    if before is not None:
        return before[1]
    if index and ctx.roles[index - 1].startswith("config:") and cue.CHAIN.fullmatch(
            ctx.pieces[index]):
        return ctx.roles[index - 1].split(":", 1)[1]
    after = cue.CONFIG_AFTER.match(ctx.after(index))
    return after[1] if after is not None else None


def _as_out_variant(ctx: _Context, index: int) -> bool:
    """"the out variant of `tensordot`": calls passing ``out``."""
    if ctx.infos[index].kind not in ("name", "call"):
        return False
    if not cue.OUT_VARIANT.search(ctx.before(index)):
        return False
    ctx.reading.found.append(Found(expand(ctx.infos[index].name), "passes", "out"))
    ctx.roles[index] = "owner"
    return True


def _as_option(ctx: _Context, index: int) -> bool:
    """An option of its owners: one a call passes (a removed or deprecated option), or one it
    omits when the sentence changes a default."""
    info = ctx.infos[index]
    if not _is_option(ctx, index):
        return False
    ctx.roles[index] = "option"
    if cue.NOT_API.match(ctx.after(index)):
        return True
    omitted = cue.OMITTED_AFTER.match(ctx.after(index)) is not None
    condition: Condition = "omits" if ctx.default or omitted else "passes"
    for owner in _owners(ctx, index):
        ctx.reading.found.append(Found(owner, condition, info.name,
                                       value=info.value if condition == "passes" else ""))
    return True


def _is_option(ctx: _Context, index: int) -> bool:
    """``x=v``; or a plain lowercase name the words call an option ("the `x` param", "passing
    `x`", "`x` passed to")."""
    info = ctx.infos[index]
    if not info.name.isidentifier() or info.name.isupper():
        return False
    if info.kind == "assign":
        return True
    if info.kind != "name" or not info.name.islower():
        return False
    after = ctx.after(index)
    if cue.OPTION_AFTER.match(after) or cue.OMITTED_AFTER.match(after):
        return True
    if cue.OPTION_BEFORE.search(ctx.before(index)) or cue.ACCEPT_BEFORE.search(
            ctx.before(index)):
        return True
    # "the default of `x` in `f` changed": in a changed default, a plain name tied to an API
    linked = index + 1 < len(ctx.infos) and cue.OWNER_LINK.fullmatch(ctx.pieces[index + 1])
    return ctx.default and bool(linked)


def _owners(ctx: _Context, index: int) -> list[str]:
    """The APIs an option belongs to: the mention(s) the words after it link it to, a class
    named in plain words ("the LRScheduler constructor"), the APIs the sentence opens with when
    it changes a default or removes something, or "" for the caller to find when an option is
    explicitly called one ("the `x` flag is removed")."""
    linked = _linked_owners(ctx, index)
    if linked:
        return linked
    word = cue.OWNER_WORD.match(ctx.after(index))
    if word is not None and word[1][0].isupper() and word[1] not in cue.NOT_OWNERS and any(
            c.islower() for c in word[1]):
        return [word[1]]
    if ctx.default or cue.strong_cue(ctx.sentence) or cue.OMITTED_AFTER.match(
            ctx.after(index)) or cue.ACCEPT_BEFORE.search(ctx.before(index)):
        opening = _opening_run(ctx, index)
        if opening:  # "`a()`, `b()` and `c()` now default the `x` parameter to ..."
            return opening
    named = cue.OPTION_AFTER.match(ctx.after(index)) is not None
    return [""] if ctx.default or (named and cue.strong_cue(ctx.sentence)) else []


def _linked_owners(ctx: _Context, index: int) -> list[str]:
    """"`x` param in `f`", "`x` in `f` and `g`": the names the words tie the option to."""
    if index + 1 >= len(ctx.infos) or not cue.OWNER_LINK.fullmatch(ctx.pieces[index + 1]):
        return []
    owners = []
    for later in range(index + 1, len(ctx.infos)):
        if later > index + 1 and not cue.CHAIN.fullmatch(ctx.pieces[later]):
            break
        if ctx.infos[later].kind in ("name", "call"):
            owners.append(expand(ctx.infos[later].name))
            ctx.roles[later] = "owner"
    return owners


def _opening_run(ctx: _Context, index: int) -> list[str]:
    """The first subject the sentence found before the option, with those listed with it."""
    run: list[str] = []
    for earlier in range(index):
        if ctx.roles[earlier] != "found" or ctx.infos[earlier].kind not in ("name", "call"):
            continue
        if run and not cue.CHAIN.fullmatch(ctx.pieces[earlier]):
            break
        run.append(expand(ctx.infos[earlier].name))
    return run


def _as_qualified(ctx: _Context, index: int) -> bool:
    """"Remove `is_caffe2_aten_fallback` in `torch.onnx.symbolic_helper`": one qualified name."""
    info = ctx.infos[index]
    if info.kind != "name" or "." in info.name or index + 1 >= len(ctx.infos):
        return False
    module = ctx.infos[index + 1]
    if module.kind != "name" or not expand(module.name).startswith("torch.") or not (
            cue.QUALIFIER.fullmatch(ctx.pieces[index + 1])):
        return False
    if not module.name.rsplit(".", 1)[-1].islower():
        return False
    method = bool(cue.METHOD_AFTER.match(ctx.after(index)))
    ctx.reading.found.append(Found(f"{expand(module.name)}.{info.name}", method=method))
    ctx.roles[index + 1] = "owner"
    return True


def _as_head(ctx: _Context, index: int) -> bool:
    """A name the sentence is about, unless the words make it context: after "under", "using",
    "by"; after a preposition once the sentence has named its subject ("`dynamic_dim()` for
    dynamic shapes in `torch.export()`"); a new API ("Add `x`"); a value, not an API ("`x`
    enum values", "`DLPack` to 1.0"). "instead of `x`" always names the subject."""
    info = ctx.infos[index]
    before, after = ctx.before(index), ctx.after(index)
    if info.kind == "literal":
        ctx.roles[index] = "literal"
        return True
    if info.kind == "import":  # "`from torch.x import a, b` is no longer supported"
        ctx.reading.found += [Found(name) for name in info.imports]
        ctx.roles[index] = "found"
        return True
    if info.kind == "assign" and "." in info.name:  # ``inductor.config.x = False``
        info = NameInfo("name", name=info.name)
    if info.kind not in ("name", "call") or (info.kind == "call" and info.keywords):
        ctx.roles[index] = "skip"  # a call with arguments is an example, not a name
        return True
    headed = any(role in ("literal", "found", "option") or role.startswith("config:")
                 for role in ctx.roles[:index])
    weak = cue.WEAK_CONTEXT.search(before) or cue.INSTANCES_AFTER.match(after)
    if not cue.INSTEAD_OF.search(before) and (
            cue.STRONG_CONTEXT.search(before) or (headed and weak)
            or cue.NEW.search(before) or cue.NOT_API.match(after)):
        ctx.roles[index] = "context"
        return True
    module = bool(cue.MODULE_AFTER.match(after) or cue.MODULE_BEFORE.search(before))
    ctx.reading.found.append(Found(expand(info.name), parens=info.kind == "call",
                                   module_cue=module, whole=_whole(ctx, index),
                                   method=bool(cue.METHOD_AFTER.match(after))))
    ctx.roles[index] = "found"
    _default_option(ctx, index)
    return True


def _whole(ctx: _Context, index: int) -> bool:
    """The sentence opens with the mention and says it is deprecated or removed."""
    opening = index == 0 and re.fullmatch(r"\s{0,4}(?:the\s+)?", ctx.pieces[0], re.I)
    return bool(opening and cue.WHOLE_AFTER.match(ctx.after(index)))


def _default_option(ctx: _Context, index: int) -> None:
    """"Flip default torch.load to weights_only": an option written as a plain word."""
    if not ctx.default or any(role == "option" for role in ctx.roles):
        return
    word = cue.SNAKE_AFTER_TO.match(ctx.after(index))
    if word is not None:
        found = ctx.reading.found.pop()
        ctx.reading.found.append(Found(found.name, "omits", word[1]))
        ctx.roles[index] = "owner"
