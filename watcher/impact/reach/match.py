"""Finds where the changes of one item touch a scanned codebase: each use of a changed API (and
of its subclasses, where the API knowledge knows them), each call that passes a removed option
or omits one whose default changed, each declaration of a dropped Python, CUDA or package
version; and judges each (``tiers``).

A change limited to a kind of input or a state reaches a codebase only where it can make that
input or set that state, and then only as ``check``: whether a given call gets a nested tensor
depends on values the index does not know.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from watcher.impact.code import INERT, CodeIndex, Hit, UseRow, UseTable
from watcher.impact.knowledge import ApiKnowledge, NoKnowledge, Signature
from watcher.impact.model import (
    Declaration,
    EnvironmentSubject,
    Qualifier,
    Subject,
    Subjects,
)
from watcher.impact.reach.callers import Callers
from watcher.impact.reach.evidence import Evidence, Weigh
from watcher.impact.reach.tiers import Match, Verdict, cap, judge, lineage, rank
from watcher.impact.subjects import vocabulary
from watcher.models import Affect

if TYPE_CHECKING:
    from watcher.impact.environment import Installs

__all__ = ["find_affects", "reachable"]

# Where the public names the notes write are defined, when a file may import them from
# there: ``from torch.serialization import load`` is ``torch.load``.
DEFINED_AT: dict[str, tuple[str, ...]] = {
    "torch.load": ("torch.serialization.load",),
    "torch.save": ("torch.serialization.save",),
}
WHY_ENVIRONMENT = {
    "channel": "installs torch from {}, which gets no new builds",
    "abi": "compiles C++ with _GLIBCXX_USE_CXX11_ABI=0 against wheels built with {}",
}
RELEASE = re.compile(r"v?(\d+)\.(\d+)")
BARE_ROOT = "torch."  # an undotted api ("capture_pre_autograd_graph") is looked up under it
NO_KNOWLEDGE = NoKnowledge()


def find_affects(subjects: Subjects, index: CodeIndex, root_label: str, *,
                 codebase: str = "", release: str | None = None,
                 knowledge: ApiKnowledge = NO_KNOWLEDGE,
                 weigh: Weigh | None = None) -> list[Affect]:
    """One affect per (path, line, api), the surest tier kept; breaks first, then check, then
    mentions, each by path and line. ``weigh``: the evidence each subject's change rests on
    (``evidence.Ladder``), which a ``breaks`` needs; None takes the verdicts as they are."""
    found: dict[tuple[str, int, str], Affect] = {}
    base = {"root": root_label, "codebase": codebase, "release": release}
    reaches, note = reachable(subjects.qualifiers, index)
    where = making_places(subjects.qualifiers, index.table) if reaches else None
    running = release_version(release)
    callers = Callers(index)
    for subject in subjects.python if reaches else ():
        subject = confirmed_option(subject, knowledge)
        evidence = weigh(subject) if weigh is not None else None
        for judged, match, through in reaching_uses(subject, index.table, knowledge):
            if where is not None and (match.path, None) not in where and (
                    match.path, match.row.get("scope", 0)) not in where:
                continue
            below = match.row.get("below")
            if below is None and running is not None:
                below = callers.below(match.path, match.row)
            if below is not None and running is not None and running >= tuple(below):
                continue  # it runs only on releases before this one (a version guard)
            if never_given(judged, match.row, index.table):
                continue  # the option only ever arrives as None: no caller gives it
            if never_spread(judged, match.row, index.table) or never_spelled(
                    judged, match.row, index, evidence):
                # No caller gives the option to the **kwargs the call passes on: judged as
                # the call without them.
                match = match._replace(row={key: value for key, value in match.row.items()
                                            if key != "passes_kwargs"})
            if match.row.get("spreads_default_of") and \
                    not default_only(match.row, index.table):
                # A caller may give the spread dict other keys: any option may come.
                match = match._replace(row={**match.row, "passes_kwargs": True})
            if judged.raised and match.row.get("tried"):
                match = match._replace(row=caught_for_torch(match.row, index.raisers,
                                                            knowledge))
            verdict = judge(judged, match, release, evidence)
            if verdict is None:
                continue
            if through:
                verdict = Verdict(verdict.tier, f"{verdict.why}; {through}")
            if note:
                verdict = cap(verdict, note)
            keep(found, Affect(path=match.path, line=match.row["line"], code=match.row["code"],
                               api=subject.api, by_method_name=match.by_method,
                               tier=verdict.tier, why=verdict.why,
                               ignore=tuple(match.row.get("ignore", ())),
                               **base))  # type: ignore[arg-type]
    if subjects.environment:
        environment_affects(subjects, index, found, base, weigh)
    return sorted(found.values(), key=lambda use: (rank(use.tier), use.path, use.line, use.api))


def confirmed_option(subject: Subject, knowledge: ApiKnowledge) -> Subject:
    """A default the title names in plain words (``Subject.worded``) is the API's option only
    where the package's signature of the API has that parameter; else (or with no signature
    to ask) the subject is a plain use of the API, as the words said before."""
    if not subject.worded:
        return subject
    signature = signature_of(subject.api, knowledge)
    if signature is not None and any(parameter.name == subject.option
                                     for parameter in signature.parameters):
        return subject
    return subject.model_copy(update={"condition": "uses", "option": None, "worded": False})


def environment_affects(subjects: Subjects, index: CodeIndex,
                        found: dict[tuple[str, int, str], Affect], base: dict[str, str | None],
                        weigh: Weigh | None = None) -> None:
    """Each declaration a dropped Python or CUDA, a required or renamed package, an ended
    channel, the C++ ABI or GPUs a CUDA build drops touches, judged by ``environment_verdict``,
    its why followed by the rung of evidence the change stands on (``weigh``)."""
    # Imported here: most items change no environment, and packaging's specifiers are only
    # needed for those that do.
    from watcher.impact.environment import Installs, touches

    declarations = index.declarations
    installed = Installs.of(declarations, {path for path, _ in index.table.under("torch")})
    for environment in subjects.environment:
        rung = weigh(environment).rung if weigh is not None else ""
        for path, declaration in declarations:
            if not touches(environment, declaration, path, base["release"]):
                continue
            verdict = environment_verdict(environment, declaration, path, installed)
            if verdict is not None:
                if rung:
                    verdict = Verdict(verdict.tier, f"{verdict.why} ({rung})")
                keep(found, Affect(path=path, line=declaration.line, code=declaration.code,
                                   api=environment.label, tier=verdict.tier, why=verdict.why,
                                   ignore=declaration.ignore, **base))  # type: ignore[arg-type]


def environment_verdict(environment: EnvironmentSubject, declaration: Declaration, path: str,
                        installed: Installs) -> Verdict | None:
    """``breaks`` where the declaring environment installs torch (by name or through a file
    of the codebase naming it), ``check`` where it may (through what the codebase does not
    show), nothing where it cannot (a ``python:3.8`` image that installs only ``soundfile``).
    GPUs a build drops are at most ``check``, and nothing for a build targeting other GPUs; a
    pin that also admits accepted versions is ``check``."""
    from watcher.impact.environment import admits_only_rejected

    reach = installed.torch_reach(declaration, path)
    if reach == "none" or installed.package_without_torch(path):
        return None
    why = WHY_ENVIRONMENT.get(environment.kind, "declares what {} no longer admits").format(
        environment.label)
    if environment.kind == "gpu_arch":
        if installed.builds_only_for_others(path, environment.name):
            return None  # it builds only for other GPUs (``TORCH_CUDA_ARCH_LIST="9.0"``)
        # The build is gone only for some GPUs: which ones it runs on is not in the code.
        return Verdict("check", f"installs the CUDA {environment.removed} build, which no "
                                f"longer runs on {environment.name} GPUs (check the GPUs it "
                                f"runs on)")
    if environment.kind == "package" and not admits_only_rejected(declaration.specifier,
                                                                  environment.specifier):
        # A range admitting older versions and newer ones: pip picks the newest it admits
        # unless something else holds it back; the floor is to raise.
        return Verdict("check", f"{why} (it also admits newer ones, which pip may pick)")
    if reach == "maybe":
        return Verdict("check", f"{why}, if it gets torch "
                                f"({', '.join(declaration.installs_from)} may bring it)")
    return Verdict("breaks", why)


# Methods whose calls are not written by name: nn.Module's ``__call__`` runs ``forward`` with
# the arguments of every call of the module (``self.attn(x, mask)``), as Python runs dunders.
IMPLICITLY_CALLED = frozenset({"forward"})


def never_given(subject: Subject, row: UseRow, table: UseTable) -> bool:
    """A call passing the changed option on from a None-default parameter of its function
    (``dynamic_axes=dynamic_axes``), where the function is called and no call, in any file,
    may give that parameter: the option only ever reaches the call as None, which is not
    passing it. False when no call of the function is seen (a caller may be anywhere)."""
    if subject.condition != "passes" or subject.option is None:
        return False
    source = row.get("forwarded", {}).get(subject.option)
    if source is None:
        return False
    function, position, called, given = source
    return not given and no_caller_gives(table, function, subject.option, position, called)


def never_spread(subject: Subject, row: UseRow, table: UseTable) -> bool:
    """A call passing on its function's ``**kwargs`` (``super().__init__(data, **kwargs)``)
    where every call of that function in view, in any file, passes keywords other than the
    removed or deprecated option, none spreads ``**``, and nothing hands the function on or
    derives from it: the option never arrives through them. False when no call is seen (a
    caller may be anywhere) and for a changed default, which a forward leaving the option out
    still relies on."""
    source = row.get("spreads_kwargs_of")
    if source is None or subject.condition != "passes" or subject.option is None:
        return False
    name, keywords, open_, here = source  # ``here``: the calls in the forwarding file
    if open_ or subject.option in keywords:
        return False
    references = own_references(table, name)
    if any(not other.get("is_call") and other.get("ref") not in INERT for other in references):
        return False  # handed on, or derived from: anything may reach it
    calls = [other for other in references if other.get("is_call")]
    if any(subject.option in call.get("keywords", ()) or call.get("passes_kwargs")
           for call in calls):
        return False
    return int(here) + len(calls) > 0


def never_spelled(subject: Subject, row: UseRow, index: CodeIndex,
                  evidence: Evidence | None = None) -> bool:
    """A call passing on ``**kwargs`` to an API whose option is deprecated, or which the notes
    call removed while the package's API still takes it (``evidence.disputed``: only what it
    does changed), where no text file of the codebase writes the option's name (no keyword,
    dict key, config key or flag): the forward can only carry it from a caller outside the
    tree, whose warning or changed result it is. A removal the package confirms, or cannot
    see, is excused so only where the spread dicts are the codebase's own (``spreads_local``:
    a config it loads, a module's dict), not a parameter: a library's forward of its callers'
    options is where its users' calls break."""
    excused = subject.effect == "deprecated" or (evidence is not None and evidence.disputed) \
        or bool(row.get("spreads_local"))
    return subject.condition == "passes" and excused and \
        subject.option is not None and bool(row.get("passes_kwargs")) and \
        subject.option not in row.get("keywords", ()) and not index.spells(subject.option)


def caught_for_torch(row: UseRow, raisers: dict[str, frozenset[str]],
                     knowledge: ApiKnowledge = NO_KNOWLEDGE) -> UseRow:
    """The use with the types its handlers catch for the torch call alone: a type the
    codebase's own function called in the same ``try`` raises (``code.raisers``) is caught for
    that function's error, and still is when torch changes what it raises. Functions are
    joined by name, so a name torch's ``Tensor`` has as a method (``.to(dev)``, ``.max()``) is
    taken for the tensor's, not for a method of the codebase's spelt alike (hippynn's
    ``to`` raising ``ValueError`` for a bad argument)."""
    theirs = {name for callee in row["tried"]
              if knowledge.resolve(f"torch.Tensor.{callee}") is None
              for kind in raisers.get(callee, ()) for name in lineage(kind)}
    caught = [name for name in row.get("caught", ()) if name not in theirs]
    return {**row, "caught": caught}


def default_only(row: UseRow, table: UseTable) -> bool:
    """A call spreading its function's literal-dict default (``**params``) that no call of the
    function, in any file, gives another dict: it passes only the default's keys and those the
    function assigns. False where no call is seen (a public function: a caller may give any)."""
    function, parameter, position, called, given = row["spreads_default_of"]
    return not given and no_caller_gives(table, function, parameter, position, called)


def no_caller_gives(table: UseTable, function: str, keyword: str, position: int,
                    called: bool) -> bool:
    """Whether the codebase's own ``function`` is called (``called``: in the file using it) and
    no call of it, in any file, may give its parameter passed as ``keyword`` or at
    ``position``. False when no call is seen: a caller may be anywhere; and for a function
    called without its name (a module's ``forward``, a class's ``__init__``), whose callers
    the name does not find."""
    if function in IMPLICITLY_CALLED or function.startswith("__"):
        return False
    callers = [caller for caller in own_references(table, function) if caller.get("is_call")]
    if not called and not callers:
        return False
    return not any(may_give(caller, keyword, position) for caller in callers)


def own_references(table: UseTable, function: str) -> list[UseRow]:
    """The references in any file to the codebase's own function (or class) ``function``:
    by method name and by last component, not a torch name that ends the same
    (``torch.onnx.export`` beside a helper named ``export``)."""
    return [row for _, row in (*table.by_method.get(function, ()), *table.ending_with(function))
            if not row["name"].startswith(BARE_ROOT)]


def may_give(caller: UseRow, option: str, position: int) -> bool:
    """Whether a call of the forwarding function may pass ``option``'s parameter."""
    if option in caller.get("keywords", ()) or caller.get("passes_kwargs") or \
            caller.get("passes_args"):
        return True
    return 0 <= position < int(caller.get("args", 0))


def release_version(release: str | None) -> tuple[int, int] | None:
    """(major, minor) of a release tag ("v2.7.0", "v2.6.0-torch-load"), or None."""
    found = RELEASE.match(release or "")
    return (int(found[1]), int(found[2])) if found else None


def keep(found: dict[tuple[str, int, str], Affect], affect: Affect) -> None:
    """The surest reading of a use wins; at equal tiers, one resolved by name beats one matched
    by method name only."""
    key = (affect.path, affect.line, affect.api)
    old = found.get(key)
    if old is None or (rank(affect.tier), affect.by_method_name) < (
            rank(old.tier), old.by_method_name):
        found[key] = affect


def reachable(qualifiers: tuple[Qualifier, ...], index: CodeIndex) -> tuple[bool, str]:
    """Whether the codebase can make one of the inputs (or set one of the states) a change is
    limited to, and what to tell the reader; (True, "") when the change is not limited."""
    if not qualifiers:
        return True, ""
    table = index.table
    for qualifier in qualifiers:
        if qualifier.kind == "absent":
            if not any(makes(name, table) for name in qualifier.made_by):
                return True, f"only where {qualifier.name} is never called, as here"
            continue
        if qualifier.kind == "state":
            setter = next((name for name in qualifier.made_by if name in index.sets), None)
            if setter is not None:
                return True, f"only when {qualifier.name} is set, which the code does ({setter})"
            continue
        maker = next((name for name in qualifier.made_by if makes(name, table)), None)
        if maker is not None and qualifier.kind == "setting":
            return True, f"only with {qualifier.name}, which the code selects ({maker})"
        if maker is not None:
            return True, f"only with {qualifier.name}, which the code can make ({maker})"
    return False, ""


def making_places(qualifiers: tuple[Qualifier, ...], table: UseTable
                  ) -> set[tuple[str, int | None]] | None:
    """For a change limited to kinds of input made where they are used, the places that make
    one: ``(path, None)`` for a whole file (``within = "file"``), ``(path, scope)`` for one
    module-level function or class (``within = "definition"``, 0 for the module's own
    statements); None when a use anywhere may be handed one."""
    inputs = [qualifier for qualifier in qualifiers
              if qualifier.kind == "input" and qualifier.within != "codebase"]
    if not inputs or len(inputs) != len(qualifiers):
        return None
    return {(path, row.get("scope", 0) if qualifier.within == "definition" else None)
            for qualifier in inputs for name in qualifier.made_by
            for path, row in made_at(name, table)}


def made_at(name: str, table: UseTable) -> list[Hit]:
    """The uses that make an input: of a dotted name (or under it), or of a ``.method``."""
    if name.startswith("."):
        method = name[1:]
        return [*table.by_method.get(method, ()), *table.ending_with(method)]
    return table.under(name)


def makes(name: str, table: UseTable) -> bool:
    return bool(made_at(name, table))


def reaching_uses(subject: Subject, table: UseTable, knowledge: ApiKnowledge
                  ) -> Iterator[tuple[Subject, Match, str]]:
    """The uses of the subject's API, then those of the torch functions that hand the changed
    option on to it (``config/impact.toml`` ``[[passed_on]]``), each with the subject to judge
    it by and what to add to its why."""
    for match in python_uses(subject, table, knowledge):
        yield subject, match, ""
    if subject.option is None or subject.condition not in ("passes", "omits"):
        return
    for entry in vocabulary().passed_on:
        if entry.api != subject.api or subject.option not in entry.options:
            continue
        through = (f"{entry.caller.rpartition('.')[2]} hands it to "
                   f"{entry.api.rpartition('.')[2]}")
        for name in entry.options[subject.option]:
            caller = subject.model_copy(update={
                "api": entry.caller, "option": name,
                "given": tuple(dict.fromkeys((*subject.given, *entry.given)))})
            for match in python_uses(caller, table, knowledge):
                yield caller, match, through


def python_uses(subject: Subject, table: UseTable, knowledge: ApiKnowledge) -> Iterator[Match]:
    """The uses a Python subject's names reach (the judge decides which it touches)."""
    api = subject.api
    if subject.scope == "method":
        yield from method_uses(subject, table, knowledge)
        return
    if not api:
        return
    if "." not in api and subject.scope == "exact":
        for path, row in table.through(api):
            name = row["name"]
            if name.startswith(BARE_ROOT):
                yield Match(path, row, itself=name.rpartition(".")[2] == api,
                            signature=signature_of(name, knowledge))
    else:
        for name in spellings(api, knowledge):
            signature = signature_of(name, knowledge)
            for path, row in table.under(name):
                # Options belong to a call of the api itself, not of a name under it.
                yield Match(path, row, itself=row["name"] == name, signature=signature)
    if subject.scope == "namespace":
        for name in aliases_under(api, table, knowledge):
            for path, row in table.by_name[name]:
                yield Match(path, row, itself=False)
    if subject.scope == "exact":
        for name, via in subclass_names(api, table, knowledge):
            signature = signature_of(name, knowledge)
            for path, row in table.by_name.get(name, ()):
                yield Match(path, row, via=via, signature=signature)
        for name in outside_subclasses(api, knowledge):
            # It takes the base's options in the base's order: the base's signature places them.
            signature = signature_of(api, knowledge)
            for path, row in table.by_name.get(name, ()):
                yield Match(path, row, via=name.rpartition(".")[2], signature=signature)


def method_uses(subject: Subject, table: UseTable, knowledge: ApiKnowledge) -> Iterator[Match]:
    """``scheduler.print_lr()`` on any object, by method name; and a resolved name of that
    method of that class (or of a subclass): under its qualified owner when the api has one
    (``torch.Tensor.new_tensor``), else under torch (``LRScheduler.print_lr``).

    By name alone only a call, and only of a name that says what it does: ``x.new_tensor(...)``
    and ``s.print_lr()`` are almost surely the changed methods, while ``.seed``, ``.step()``
    or ``.offset`` on an unknown object are anyone's (``args.seed``), a false alarm each."""
    method = subject.method or subject.api.rpartition(".")[2]
    owner = subject.api.removesuffix("." + method)
    within = owner + "." if "." in owner else BARE_ROOT
    ending = f".{owner.rpartition('.')[2]}.{method}" if owner else "." + method
    if distinctive_method(method):
        for path, row in table.by_method.get(method, ()):
            if row.get("is_call"):
                yield Match(path, row, by_method=True)
    for path, row in table.ending_with(method):
        name = row["name"]
        if name.startswith(within) and name.endswith(ending):
            yield Match(path, row)
    if owner:
        for name, via in subclass_names(owner, table, knowledge):
            for path, row in table.by_name.get(f"{name}.{method}", ()):
                yield Match(path, row, via=via)
        for name in outside_subclasses(owner, knowledge):
            for path, row in table.by_name.get(f"{name}.{method}", ()):
                yield Match(path, row, via=name.rpartition(".")[2])


def spellings(api: str, knowledge: ApiKnowledge) -> list[str]:
    """The names code may write for ``api``: itself, where it is defined, its re-exports."""
    canonical = knowledge.resolve(api)
    names = [api, *DEFINED_AT.get(api, ())]
    if canonical is not None:
        names += [canonical, *knowledge.names_of(canonical)]
    else:
        names += private_twins(api)
    return list(dict.fromkeys(names))


def private_twins(api: str) -> list[str]:
    """``torch.distributed._symmetric_memory.f`` for ``torch.distributed.symmetric_memory.f``
    (and the other way): torch keeps a module's private spelling when it makes it public, and
    code written for older releases imports that. Asked only for a name the atlas cannot
    place, whose re-exports are therefore unknown."""
    parts = api.split(".")
    twins = []
    for position in range(1, len(parts) - 1):
        part = parts[position]
        if part.startswith("__"):
            continue  # a dunder or a mangled name has no public twin
        toggled = part[1:] if part.startswith("_") else "_" + part
        if toggled.isidentifier():
            twins.append(".".join([*parts[:position], toggled, *parts[position + 1:]]))
    return twins


def aliases_under(api: str, table: UseTable, knowledge: ApiKnowledge) -> list[str]:
    """The names the code writes outside a namespace that stand for something inside it
    (``torch.quantization.QConfig`` is ``torch.ao.quantization.qconfig.QConfig``)."""
    inside = api + "."
    return [name for name in table.names if name.startswith(BARE_ROOT)
            and not (name == api or name.startswith(inside))
            and (knowledge.resolve(name) or "").startswith(inside)]


def subclass_names(api: str, table: UseTable, knowledge: ApiKnowledge) -> list[tuple[str, str]]:
    """Each spelling of each class deriving from ``api`` (bare names through the qualified
    names the code uses), with the subclass's short name."""
    candidates = [api] if "." in api else [
        name for name in table.names_ending_with(api) if name.startswith(BARE_ROOT)]
    if not candidates and "." not in api:
        # A bare class the code never names itself ("the LRScheduler constructor"): looked for
        # in the modules it does use (``torch.optim.lr_scheduler`` of its ``StepLR``).
        modules = {name.rpartition(".")[0] for name in table.names if name.startswith(BARE_ROOT)}
        candidates = [resolved for module in sorted(modules)
                      if (resolved := knowledge.resolve(f"{module}.{api}")) is not None]
    found: dict[str, str] = {}
    for name in candidates:
        canonical = knowledge.resolve(name) or name
        for sub in sorted(knowledge.subclasses(canonical)):
            short = sub.rpartition(".")[2]
            for spelling in (sub, *knowledge.names_of(sub)):
                found.setdefault(spelling, short)
    return list(found.items())


def outside_subclasses(api: str, knowledge: ApiKnowledge) -> list[str]:
    """The names of other packages' classes deriving from the class ``api`` names (the
    vocabulary's ``[[subclasses]]``), matched by canonical name when the knowledge has one."""
    canonical = knowledge.resolve(api) or api
    return [name for entry in vocabulary().subclasses
            if (knowledge.resolve(entry.base) or entry.base) == canonical
            for name in entry.names]


def signature_of(name: str, knowledge: ApiKnowledge) -> Signature | None:
    return knowledge.signature(knowledge.resolve(name) or name)


def distinctive_method(method: str) -> bool:
    """A method name few other objects have: two words or more (``new_tensor``, ``print_lr``,
    ``zeroGrad``), never a single short word (``seed``, ``step``, ``load``)."""
    words = method.strip("_")
    return "_" in words or any(char.isupper() for char in words[1:])
