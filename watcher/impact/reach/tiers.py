"""How sure it is that a change reaches one use, and why, in one line a reader acts on.

``breaks``: the change certainly reaches the line (a removed name used, a removed parameter
passed, a changed default relied on). ``check``: it may (an option forwarded through
``**kwargs``, a deprecation that only warns, a change limited to inputs the code can make).
``mentions``: a reference that does not call (an import, an annotation, an ``isinstance``
argument, a decorator or predicate that only marks), which a behaviour change cannot reach;
only a removed name breaks those.
"""

from __future__ import annotations

import ast
import builtins
from typing import NamedTuple

from watcher.impact.code import FIRST, NOT_CALLING, UNSET, UseRow
from watcher.impact.knowledge import Signature
from watcher.impact.model import Subject
from watcher.impact.reach.evidence import Evidence
from watcher.impact.subjects import vocabulary
from watcher.models import TIERS, Tier

__all__ = ["Match", "Verdict", "cap", "ground", "judge", "rank"]

# The parameter taking the positional arguments an API passes on to the callee it runs
# (``torch.onnx.export(model, args)``): a lone value there is wrapped into a tuple.
ARGUMENTS = "args"
VERBS = {"import": "imports", "annotation": "annotates with", "isinstance":
         "tests isinstance against", "decorator": "decorates with", "base": "subclasses",
         "assign": "sets", "partial": "binds", "compared": "compares with",
         "aliased": "names", "": "uses"}


class Match(NamedTuple):
    """A use a subject's name reaches: ``itself`` when it is a call of the API itself (not of a
    name under it); ``via``, the subclass it was found through; ``signature``, the called API's
    parameters when known."""

    path: str
    row: UseRow
    by_method: bool = False
    itself: bool = True
    via: str | None = None
    signature: Signature | None = None


class Verdict(NamedTuple):
    tier: Tier
    why: str


def rank(tier: Tier) -> int:
    return TIERS.index(tier)


def cap(verdict: Verdict, note: str) -> Verdict:
    """At most ``check``: the change reaches the line only with some inputs or states."""
    tier: Tier = "check" if verdict.tier == "breaks" else verdict.tier
    return Verdict(tier, f"{verdict.why}; {note}")


def ground(verdict: Verdict, evidence: Evidence) -> Verdict:
    """A verdict held to its evidence: ``breaks`` only on a sure rung, the rung said."""
    tier: Tier = "check" if verdict.tier == "breaks" and not evidence.sure else verdict.tier
    if not evidence.rung or tier == "mentions":
        return Verdict(tier, verdict.why)
    return Verdict(tier, f"{verdict.why} ({evidence.rung})")


def judge(subject: Subject, match: Match, release: str | None,
          evidence: Evidence | None = None) -> Verdict | None:
    """The tier of one use, or None when the subject's condition leaves it untouched; held to
    ``evidence`` when given."""
    verdict = _judge(subject, match, f" in {release}" if release else "")
    if verdict is not None and evidence is not None:
        verdict = ground(verdict, evidence)
    if verdict is not None and match.by_method and verdict.tier == "breaks":
        # ``value.is_symmetric()`` on an object of unknown type: whether it is the changed
        # class's method is a guess (PyG's is torch_sparse's SparseTensor), never a proof.
        verdict = cap(verdict, "matched by the method's name only: the object is not known "
                               f"to be {owner_of(subject)}")
    if verdict is not None and match.via:
        verdict = Verdict(verdict.tier,
                          f"{verdict.why}; {match.via} derives from {owner_of(subject)}")
    return verdict


def owner_of(subject: Subject) -> str:
    """The class a method subject belongs to, by its short name (``MemPool``)."""
    return (subject.api.removesuffix("." + subject.method) if subject.method
            else subject.api).rpartition(".")[2]


def _judge(subject: Subject, match: Match, when: str) -> Verdict | None:
    row = match.row
    if subject.effect == "removed" and asked_first(subject, row):
        return None  # the code checks the name is there before it uses it
    if subject.option is not None and subject.option in row.get("fallback", ()):
        return None  # runs only where the option was refused: on releases without it
    ref = row.get("ref", "")
    calls = bool(row.get("is_call")) or ref == "decorator"
    what = f".{subject.method}()" if match.by_method else row["name"] or subject.api
    if subject.shape == "returns_input":
        # Undefined behaviour the release may now turn into wrong results: where it shows
        if not row.get("returns_input"):
            return None
        return Verdict("check", f"{row['returns_input']}: an output sharing storage with an "
                                f"input{when}, undefined behaviour that may now give wrong "
                                "results under torch.compile")
    if subject.condition == "uses" and row.get("made_key"):
        # A lookup by a key the file made: whether it is of the object the note means (the
        # root mesh, not the flattened one) is not known.
        change = {"deprecated": "deprecated", "removed": "removed"}.get(subject.effect,
                                                                       "changed")
        return Verdict("check", f"looks up by {row['made_key']}: {what}, {change}{when}, "
                                "if the object is the one the note means")
    if subject.condition == "uses":
        if subject.effect == "removed":
            verb = "calls" if calls and ref != "decorator" else VERBS.get(ref, "uses")
            return Verdict("breaks", f"{verb} {what}, removed{when}")
        change = "deprecated" if subject.effect == "deprecated" else "changed"
        if ref in NOT_CALLING or vocabulary().is_marker(row["name"]) or (
                not calls and ref == "" and is_class_name(row["name"])):
            # A class named without being made (``category=torch.jit.TracerWarning``, an
            # ``except`` clause) is a type reference, as an annotation is.
            verb = VERBS.get(ref, "uses") if ref else "uses"
            return Verdict("mentions", f"{verb} {what}, {change}{when}, without calling it")
        if not calls:
            return Verdict("check", f"{VERBS.get(ref, 'uses')} {what}, {change}{when}")
        tier: Tier = "check" if subject.effect == "deprecated" else "breaks"
        verb = "decorates with" if ref == "decorator" else "calls"
        return Verdict(tier, f"{verb} {what}, {change}{when}")
    if subject.shape == "final_dict":
        if not (match.itself and calls):
            return None
        change = "deprecated" if subject.effect == "deprecated" else "changed"
        level: Tier = "check" if subject.effect == "deprecated" else "breaks"
        if row.get("final_dict"):
            return Verdict(level, f"passes keyword arguments to {what} as a dict ending its "
                                  f"positional arguments, {change}{when}")
        if _dict_as_arguments(row, match.signature):
            return Verdict(level, f"passes a dict as the arguments of {what}, which takes it "
                                  f"as one ending in a dict of keyword arguments, {change}{when}")
        return None
    if subject.condition == "errors":
        return _handled(subject, row, what, when) if match.itself and calls else None
    if subject.shape == "moved":
        return _moved(subject, row, what, when) if match.itself and calls else None
    if subject.condition == "signature" or subject.option is None:
        return None
    if match.itself and not calls and ref == "" and subject.condition == "omits" and \
            "." in subject.api:
        return _handed_on(subject, what, when)
    if not (match.itself and calls):
        return None
    # A bare name ("export") is anyone's unless the knowledge placed it (a subclass found).
    return _option(subject, row, match.signature, when,
                   bare="." not in subject.api and match.via is None)


def _moved(subject: Subject, row: UseRow, what: str, when: str) -> Verdict | None:
    """A call passing arguments by position up to a parameter that moved: from there on they
    land in other parameters (``breaks``); a ``*args`` that may reach it, ``check``."""
    moved = int(subject.value or 0)
    args = int(row.get("args", 0))
    if moved < 1:
        return None
    change = f"{subject.option} moved from argument {moved}{when}"
    if args >= moved:
        return Verdict("breaks", f"passes {args} arguments to {what} by position: {change}, "
                                 f"so argument {moved} on lands in other parameters")
    if row.get("passes_args"):
        return Verdict("check", f"passes *args to {what}, which may reach argument {moved} "
                                f"({change})")
    return None


def _handed_on(subject: Subject, what: str, when: str) -> Verdict:
    """The function itself handed on as a value (``load_closure=torch.load``, ``[torch.load,
    np.load]``, a name bound to it passed on: ``run(loader)``): the calls made through it are
    not seen here, so whether they pass the option is not known (``check``)."""
    change = "deprecated" if subject.effect == "deprecated" else "changed"
    return Verdict("check", f"hands {what} on as a value: the calls made through it may rely "
                            f"on the default of {subject.option} ({change}{when})")


def _dict_as_arguments(row: UseRow, signature: Signature | None) -> bool:
    """A dict passed where the API takes its callee's positional arguments (its ``args``:
    ``torch.onnx.export(model, {"x": x}, f)``): a lone value there is wrapped into a tuple,
    so the dict ends it. Only where the package names that parameter."""
    position = signature.position(ARGUMENTS) if signature is not None else None
    return position is not None and position in row.get("dict_at", ())


def _handled(subject: Subject, row: UseRow, what: str, when: str) -> Verdict | None:
    """A call inside a ``try`` that catches a type the API raised for bad input before, and
    none it raises now: the handler no longer runs for that input (``check``: whether the code
    gives bad input is not known)."""
    caught = set(row.get("caught", ()))
    old = next((kind for kind in subject.raised if caught & lineage(kind)), None)
    if old is None or "?" in caught or any(caught & lineage(kind) for kind in subject.raises):
        return None
    names = [kind.rpartition(".")[2] for kind in subject.raises]
    now = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names) \
        or "another type"
    return Verdict("check", f"catches {old.rpartition('.')[2]} around {what}, which raises "
                            f"{now} instead{when}")


def lineage(kind: str) -> set[str]:
    """The names a handler can catch ``kind`` by: its own and its bases' (Python's built-in
    hierarchy; a type of another package is taken to derive from Exception)."""
    name = kind.rpartition(".")[2]
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return {base.__name__ for base in builtin.__mro__ if base is not object}
    return {name, "Exception", "BaseException"}


def asked_first(subject: Subject, row: UseRow) -> bool:
    """Whether a feature check around the use asks for the removed option or name."""
    probed = row.get("probed")
    if not probed:
        return False
    removed = subject.option if subject.option else subject.api.rpartition(".")[2]
    return removed in probed


def is_class_name(name: str) -> bool:
    """``torch.jit.TracerWarning``: a CapWords last component (not a CONSTANT)."""
    last = name.rpartition(".")[2]
    return last[:1].isupper() and any(char.islower() for char in last)


def _option(subject: Subject, row: UseRow, signature: Signature | None, when: str,
            bare: bool = False) -> Verdict | None:
    """A call's keyword or position against a removed option or a changed default."""
    option = str(subject.option)
    position = signature.position(option) if signature is not None else None
    args = int(row.get("args", 0))
    by_keyword = option in row.get("keywords", ())
    by_position = position is not None and args > position
    forwards = "**kwargs" if row.get("passes_kwargs") else "*args" if (
        row.get("passes_args") and position is not None and args <= position) else None
    owner = (row.get("name") or subject.api).rpartition(".")[2] or "the call"
    deprecated = subject.effect == "deprecated"
    if bare:
        forwards = None  # only what the call itself says counts
    if subject.condition == "passes":
        if _chooses_otherwise(subject, row):
            return None  # the call picks another setting the change needs
        if _shown_otherwise(subject, row):
            return None  # the code shows it never passes the kind of value the change needs
        gone = {"deprecated": "deprecated", "removed": "removed"}.get(
            subject.effect, "its behaviour changed")
        if by_keyword and subject.value is not None:
            return _valued(subject, row, gone, when)
        if by_keyword and option in row.get("values", {}) and row["values"][option] is None \
                and (subject.effect == "changed" or (deprecated and signature is not None
                                                     and signature.default(option) == "None")):
            # What an option does changed, or using it is deprecated and None is its
            # default: passing None passes none of it (``dynamic_axes=None``). A removed
            # parameter still refuses the keyword; a sentinel default warns on None too.
            return None
        if by_keyword or by_position:
            how = f"passes {option}=" if by_keyword else \
                f"passes {option} by position (argument {int(position or 0) + 1})"
            # A removed option breaks the call; a changed one reaches it with some values.
            sure: Tier = "breaks" if subject.effect == "removed" else "check"
            return Verdict(sure, f"{how}, {gone}{when}")
        if forwards:
            return Verdict("check", f"forwards {forwards} to {owner}, which may carry "
                                    f"{option}= ({gone}{when})")
        return None
    if _chooses_otherwise(subject, row):
        return None  # the call picks another setting the changed default needs
    if not by_keyword and not by_position and _settled(subject, row, signature):
        return None  # the API computes the option from another the call passes
    if not by_keyword and not by_position and _exempted(subject, row):
        return None  # the API does not apply the option for the value the call passes
    passed = row.get("values", {}).get(option, MISSING) if by_keyword else MISSING
    if passed == UNSET:
        return Verdict("check", f"passes {option}= from a parameter defaulting to None: relies "
                                f"on the default of {option} unless given one "
                                f"({'deprecated' if deprecated else 'changed'}{when})")
    if passed is None and signature is not None and signature.default(option) == "None":
        # None is what the signature defaults to: passing it is relying on the default.
        tier: Tier = "check" if deprecated else "breaks"
        return Verdict(tier, f"passes {option}=None, its default, "
                             f"{'deprecated' if deprecated else 'changed'}{when}")
    if by_keyword or by_position:
        return None  # it says what it wants: the default does not reach it
    if forwards == "**kwargs":
        return Verdict("check", f"forwards **kwargs to {owner}; relies on the default of "
                                f"{option} unless they carry it (changed{when})")
    if deprecated:
        return Verdict("check", f"relies on the default of {option}, deprecated{when}")
    return Verdict("breaks", f"relies on the default of {option}, changed{when}")


def _chooses_otherwise(subject: Subject, row: UseRow) -> bool:
    """The call passes a constant other than the one the item says the change comes with
    (``dynamo=False`` where the new default of ``fallback`` applies with ``dynamo=True``)."""
    values = row.get("values", {})
    for setting in subject.given:
        option, _, wanted = setting.partition("=")
        value = literal(wanted)
        if option in values and value is not MISSING and values[option] is not UNSET and \
                values[option] != value:
            return True
    return False


def _settled(subject: Subject, row: UseRow, signature: Signature | None) -> bool:
    """The call passes an option the API derives the changed one from when it is not given
    (``torch.load(f, pickle_module=dill)`` keeps ``weights_only=False``; ``settled_by`` of
    ``config/impact.toml``)."""
    settings = vocabulary().settling({subject.api, str(row.get("name", ""))}, str(subject.option))
    values = row.get("values", {})
    for setting in settings:
        option, equals, wanted = setting.partition("=")
        if option in values:
            value = values[option]
            if value == UNSET:
                continue  # a parameter defaulting to None: the call may pass none
            if (equals and value == literal(wanted)) or (not equals and value is not None):
                return True
        elif option in row.get("keywords", ()):
            if not equals:
                return True  # computed: an object, not None
        elif not equals and signature is not None:
            position = signature.position(option)
            if position is not None and int(row.get("args", 0)) > position:
                return True  # passed by position (a literal None there is not written)
    return False


def _shown_otherwise(subject: Subject, row: UseRow) -> bool:
    """The change is limited to a kind of value the use is shown never to pass (an SDPA call
    whose masks keep a key in every row, for "fully masked rows")."""
    if subject.limited_to is None:
        return False
    return any(kind.name == subject.limited_to and bool(row.get(kind.shown_by))
               for kind in vocabulary().values)


def _exempted(subject: Subject, row: UseRow) -> bool:
    """The call passes an argument value for which the API skips the option altogether
    (``torch.hub.load("pytorch/vision", ...)``: a trusted owner; ``exempted_by`` of
    ``config/impact.toml``)."""
    values = row.get("values", {})
    for entry in vocabulary().exempting({subject.api, str(row.get("name", ""))},
                                        str(subject.option)):
        passed = [values.get(name) for name in (*entry.names, FIRST)]
        if any(isinstance(value, str) and value.startswith(entry.prefixes) for value in passed):
            return True
    return False


def _valued(subject: Subject, row: UseRow, gone: str, when: str) -> Verdict | None:
    """A change to one value of an option ("`dynamo=False` is deprecated"): a call passing
    another constant is untouched, one passing that value is, one passing a computed value
    may be."""
    option, wanted = str(subject.option), literal(str(subject.value))
    passed = row.get("values", {})
    if option not in passed:
        return Verdict("check", f"passes {option}= (computed; {option}={subject.value} is "
                                f"{gone}{when})")
    if wanted is not MISSING and passed[option] != wanted:
        return None
    tier: Tier = "check" if subject.effect == "deprecated" else "breaks"
    return Verdict(tier, f"passes {option}={subject.value}, {gone}{when}")


MISSING = object()


def literal(text: str) -> object:
    """The Python value a note writes (``False``, ``"cpu"``, ``17``), or MISSING."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return MISSING
