"""Reads from a release-note item's own text which APIs it changes (its subjects), never the
replacement it recommends.

The title sentence speaks first: what it names changed is the subject, and the body then adds
only what it says is removed or deprecated (with a qualified name or an option), so background
("`torch.onnx.ONNXProgram` is now maintained by ONNX IR") stays background. A title that names
nothing lets the body's sentences that say something changed speak instead. A migration
example's "before" half is read only when the prose names nothing: the names it uses and its
"after" half does not are the subject (``do_bench_gpu``, ``DLDeviceType.kDLGPU``). A changed
default is read as an option the call omits: from the words ("switched default to
`strict=False` in `f`") or from the keyword the "after" half adds to keep the old behaviour.

Each subject says what the item does to it (``effect``: removed, deprecated, changed), read
from the sentence that names it and the item's kind; the title's qualifiers (a kind of input, a
state) say what the change is limited to. Pure; the caller decides which kinds need subjects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from watcher.impact.model import Effect, EnvironmentSubject, Subject, Subjects
from watcher.impact.subjects.clause import Found, Reading, read_sentence
from watcher.impact.subjects.cues import MECHANISM, is_default, strong_cue, weak_cue
from watcher.impact.subjects.effects import CURRENT_DEFAULT, effect_of, read_qualifiers
from watcher.impact.subjects.environment import read_environment
from watcher.impact.subjects.examples import CodeFacts, read_blocks
from watcher.impact.subjects.names import distinctive, is_method_form, read_span
from watcher.impact.subjects.raised import exception_swap
from watcher.impact.subjects.terms import vocabulary
from watcher.impact.subjects.text import Parsed, parse_item
from watcher.models import ClassifiedItem

__all__ = ["read_subjects"]

MAX_PARTS = 16  # dotted parts of a name worth indexing (real ones have at most 8)
ERRORS = re.compile(r"\b(?:rais(?:e|es|ed|ing)|throws?|errors?|exceptions?|warn(?:s|ings?)?|"
                    r"checks?|checking|validat\w{0,5}|assert\w{0,4})\b", re.IGNORECASE)
# How arguments are passed, with no option named: "Options to `f` are now keyword-only",
# "Supplying model keyword arguments to `f` is deprecated".
SIGNATURE = re.compile(r"\b(?:keyword[- ]only|positional[- ]only|(?:keyword|positional) "
                       r"arguments?)\b", re.IGNORECASE)
# How the arguments a "signature" change is about are passed: "as a final dictionary".
FINAL_DICT = re.compile(r"\b(?:final|last|trailing)\s+(?:dict|dictionary|dicts|mapping)\b",
                        re.IGNORECASE)
# A changed default whose option the title names in plain words: "to be on the given Tensor's
# device by default", "the default device of". Only a lower-case word that could be a
# parameter's name; whether it is one, the package says.
WORDED_DEFAULT = re.compile(r"\b([a-z][a-z0-9_]{1,40})\s+by\s+default\b"
                            r"|\b[Tt]he\s+default\s+([a-z][a-z0-9_]{1,40})\s+(?:of|for|is|are)\b")
CALLERS = re.compile(r"\b(?:remov\w{0,3}|deprecat\w{0,5}|defaults?|renam\w{0,3}|no longer|"
                     r"keyword|signature|returns?|returning|drop\w{0,4}|disallow\w{0,3}|"
                     r"requir\w{0,4}|instead|only)\b", re.IGNORECASE)


def read_subjects(item: ClassifiedItem) -> Subjects:
    """The APIs and environment requirements ``item`` changes, in the order its text names
    them; empty when it names nothing a codebase could use."""
    parsed = parse_item(item.text)
    item_view = _Item.read(parsed, item.kind)
    python = item_view.python_subjects()
    title = " ".join(sentence.plain for sentence in parsed.sentences if sentence.title)
    if item.kind == "deprecation" and CURRENT_DEFAULT.search(title):
        # The option's current default is what is deprecated: calls relying on it warn too.
        python += [subject.model_copy(update={"condition": "omits", "value": None})
                   for subject in python if subject.condition == "passes" and subject.option]
    unflagged = "errors" if errors_only(title) else "signature" if SIGNATURE.search(title) \
        else None
    if unflagged is not None:
        shape = "final_dict" if unflagged == "signature" and any(
            FINAL_DICT.search(sentence.plain) for sentence in parsed.sentences) else None
        raised, raises = exception_swap(parsed.sentences) if unflagged == "errors" else ((), ())
        python = [subject.model_copy(update={"condition": unflagged, "shape": shape,
                                             "raised": raised, "raises": raises})
                  if subject.condition == "uses" else subject for subject in python]
    python = with_given_options(python, parsed, item_view.readings)
    python = with_value_limits(python, parsed)
    python = with_worded_default(python, parsed)
    python += made_key_subjects(parsed, item.kind, python)
    environment: list[EnvironmentSubject] = read_environment(parsed.sentences)
    qualifiers = read_qualifiers(parsed.sentences, vocabulary().inputs,
                                 parsed.blocks) if python else []
    return Subjects(python=tuple(python), environment=tuple(environment),
                    qualifiers=tuple(qualifiers))


def made_key_subjects(parsed: Parsed, kind: str, python: list[Subject]) -> list[Subject]:
    """Lookups by a key code makes that the prose says changed ("a warning for slicing
    flattened dim from root mesh"), and shapes of code it names ("an output of a custom
    operator shares storage with an input"): each a use of the vocabulary entry's API (a
    shape's, only where the code shows it). Read from the words, as no name in the item is
    the lookup or the shape itself."""
    found: list[Subject] = []
    entries: list[tuple[re.Pattern[str], str, Literal["returns_input"] | None]] = [
        (entry.pattern, entry.api, None) for entry in vocabulary().made_keys]
    entries += [(entry.pattern, entry.api, entry.shape) for entry in vocabulary().code_shapes]
    for pattern, api, shape in entries:
        sentence = next((sentence for sentence in parsed.sentences
                         if pattern.search(sentence.plain)), None)
        if sentence is not None and all(subject.api != api for subject in python):
            found.append(Subject(api=api, effect=effect_of(sentence, kind), shape=shape))
    return found


def with_given_options(python: list[Subject], parsed: Parsed, readings: list[Reading]
                       ) -> list[Subject]:
    """A changed default with the other options the item's prose sets (``dynamo=True``, "When
    `dynamo=False`, the default opset ..."): the change comes with those, so a call choosing
    otherwise is not reached. An option the words recommend ("experiment with the
    `fallback=True` option") is advice, not a condition."""
    settings = [f"{info.name}={info.value}"
                for sentence, reading in zip(parsed.sentences, readings, strict=True)
                for mention in sentence.mentions if mention.code
                for info in [read_span(mention.raw)]
                if info.kind == "assign" and info.name.isidentifier() and info.value
                and info.name not in reading.replacements]
    if not settings:
        return python
    return [subject.model_copy(update={"given": tuple(dict.fromkeys(
        setting for setting in settings if setting.partition("=")[0] != subject.option))})
        if subject.condition == "omits" and subject.option else subject for subject in python]


def with_value_limits(python: list[Subject], parsed: Parsed) -> list[Subject]:
    """A change the prose limits to a kind of value of an option ("fully masked rows in the
    `attn_mask`"), on the subjects about that option."""
    prose = " ".join(" ".join(sentence.plain.lower().split()) for sentence in parsed.sentences)
    for kind in vocabulary().values:
        if any(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", prose) for word in kind.words):
            python = [subject.model_copy(update={"limited_to": kind.name})
                      if subject.condition == "passes" and subject.option in kind.options
                      else subject for subject in python]
    return python


def with_worded_default(python: list[Subject], parsed: Parsed) -> list[Subject]:
    """A title changing a default it names in plain words ("Change `torch.Tensor.new_tensor()`
    to be on the given Tensor's device by default"): its APIs' plain uses become calls relying
    on that option's default, so a call passing it (``device=x.device``) is not touched.
    ``worded``: the package must show the API has the parameter (``reach.match``). One word
    only: a title naming two is not read this way."""
    words = {word for sentence in parsed.sentences if sentence.title
             for found in WORDED_DEFAULT.finditer(sentence.plain) for word in found.groups()
             if word}
    if len(words) != 1:
        return python
    option = words.pop()
    return [subject.model_copy(update={"condition": "omits", "option": option, "worded": True})
            if subject.condition == "uses" and subject.option is None and subject.shape is None
            and not subject.raised else subject for subject in python]


def errors_only(title: str) -> bool:
    """A title that changes only what invalid calls raise or warn ("Raise appropriate errors
    in `torch.cat`", "Add a check for …"): valid code is not touched. One that also removes,
    deprecates, renames, or changes a default or what a call returns is a change to callers."""
    return bool(ERRORS.search(title)) and not CALLERS.search(title)


@dataclass
class _Item:
    """One item's sentences read, with what qualifies its bare names."""

    parsed: Parsed
    readings: list[Reading]
    facts: dict[str, CodeFacts]
    kind: str = "bc_breaking"
    cpp: bool = False  # it names C++ (``at::``, ``torch::``): its bare names are C++'s too
    # The qualified names the item uses, by each of their dotted tails ("export_for_training",
    # "LRScheduler.print_lr") and by each of their prefixes: lookups, not scans.
    by_tail: dict[str, set[str]] = field(default_factory=dict)
    prefixes: set[str] = field(default_factory=set)

    @classmethod
    def read(cls, parsed: Parsed, kind: str) -> _Item:
        """Every sentence read, the examples read, and the names that qualify bare ones."""
        readings = [read_sentence(sentence) for sentence in parsed.sentences]
        view = cls(parsed, readings, read_blocks(parsed.blocks), kind)
        view.cpp = any(m.code and "::" in m.raw for s in parsed.sentences for m in s.mentions)
        view.cpp = view.cpp or any("C++" in s.text for s in parsed.sentences if s.title)
        names: dict[str, None] = {}
        for reading in readings:
            names.update((n, None) for n in reading.known if n not in reading.replacements)
            names.update((f.name, None) for f in reading.found if f.config)
        for role in ("before", "neutral"):
            names.update(dict.fromkeys(view.facts[role].names))
        for name in names:
            parts = name.split(".")
            if parts[0] == "torch" and len(parts) <= MAX_PARTS:
                for cut in range(1, len(parts)):
                    view.by_tail.setdefault(".".join(parts[cut:]), set()).add(name)
                    view.prefixes.add(".".join(parts[:cut]))
        return view

    def python_subjects(self) -> list[Subject]:
        if self._brings_a_mechanism():
            return []
        subjects = self._from_prose()
        if self._default():
            subjects = _with_defaults(subjects, self._added_keywords())
        if not any(s.api for s in subjects):
            subjects = self._from_examples()
        return _tidy([s for s in subjects if s.api])

    def _brings_a_mechanism(self) -> bool:
        """"Add a framework so that options of `f` can be marked deprecated": the title brings
        a way of changing things; `f` itself is not changed."""
        return any(MECHANISM.match(s.plain) for s in self.parsed.sentences if s.title)

    def _title_effect(self) -> Effect:
        titles = [s for s in self.parsed.sentences if s.title]
        return effect_of(titles[0], self.kind) if titles else (
            "deprecated" if self.kind == "deprecation" else "changed")

    def _default(self) -> bool:
        return any(is_default(s) for s in self.parsed.sentences if s.title)

    def _from_prose(self) -> list[Subject]:
        """Title first; the body then adds removals, or speaks when the title names nothing."""
        title = self._subjects(self._found(title=True))
        if title:  # (an option whose API the example will tell counts)
            body = self._subjects(self._found(title=False, strong=True))
            return title + [s for s in body if s.api.startswith("torch.") or s.option]
        return title + self._subjects(self._found(title=False, strong=False))

    def _subjects(self, found: list[tuple[int, Found]]) -> list[Subject]:
        return [subject for index, finding in found for subject in self._subject(finding, index)]

    def _found(self, title: bool, strong: bool = False) -> list[tuple[int, Found]]:
        """The findings of the title, or of the body sentences with a (strong) change cue."""
        chosen = []
        for index, (sentence, reading) in enumerate(zip(self.parsed.sentences, self.readings,
                                                        strict=True)):
            if sentence.title != title:
                continue
            if not title and not (strong_cue(sentence) if strong else weak_cue(sentence)):
                continue
            chosen += [(index, found) for found in reading.found]
        return chosen

    def _subject(self, found: Found, index: int) -> list[Subject]:
        """The Subjects a finding stands for, qualified and scoped; none when it is no API.
        An option whose owner is unknown keeps ``api`` "" for the defaults to resolve."""
        names = [found.name] if found.name else self._borrowed_owners(index, found)
        effect = effect_of(self.parsed.sentences[index], self.kind)
        if not names:
            return [Subject(api="", condition=found.condition, option=found.option,
                            effect=effect)] if found.condition == "omits" else []
        subjects = []
        for name in names:
            api = self._qualify(name)
            if not self._acceptable(api, found):
                continue
            if (is_method_form(api) or found.method) and not found.config:
                subjects.append(Subject(api=api, scope="method", condition=found.condition,
                                        option=found.option, method=api.rsplit(".", 1)[-1],
                                        effect=effect))
            elif self._is_namespace(api, found):
                subjects.append(Subject(api=api, scope="namespace", effect=effect))
            else:
                subjects.append(Subject(api=api, condition=found.condition,
                                        option=found.option, effect=effect,
                                        value=found.value or None))
        return subjects

    def _borrowed_owners(self, index: int, found: Found) -> list[str]:
        """"Also kills the `x` flag", "The `x=None` option has been removed": the APIs an
        earlier sentence gave the same option, or else the last API named before this one."""
        if found.condition != "passes":
            return []
        earlier = self.readings[:index]
        same = [f.name for reading in earlier for f in reading.found
                if f.option == found.option and f.name]
        if same:
            return list(dict.fromkeys(same))
        for reading in reversed(earlier):
            options = {f.option for f in reading.found}
            names = [name for name in reading.names if name not in options]
            if names:
                return [names[-1]]
        return []

    def _qualify(self, name: str) -> str:
        """A bare name as the item spells it in full elsewhere, when it does so one way."""
        if name.startswith("torch."):
            return name
        matches = self.by_tail.get(name, set())
        if len(matches) == 1:
            return next(iter(matches))
        owner, _, method = name.rpartition(".")
        if owner and is_method_form(name):  # "_PhiloxState.seed": the class the item imports
            owners = self.by_tail.get(owner, set())
            return f"{next(iter(owners))}.{method}" if len(owners) == 1 else name
        return name

    def _acceptable(self, api: str, found: Found) -> bool:
        """A ``torch.`` name; or, outside C++ items, a ``Class.method``, a distinctive bare
        name, or a bare owner of a distinctive option. Never another package's name."""
        if api.startswith("torch."):
            return True
        if self.cpp:
            return False
        if "." in api:
            return is_method_form(api)
        if found.option and "_" in found.option and found.condition != "uses":
            return True  # the option is what is specific: `export(..., some_flag=...)`
        return distinctive(api)

    def _is_namespace(self, api: str, found: Found) -> bool:
        """A module or package as a whole: a lowercase dotted name, no call, no option, that
        the words call a module or the example imports from; or that is itself said to be
        deprecated or removed and is spelled like a package
        (``torch.ao.quantization``: three parts or more, a last part of one plain word, where
        functions are mostly snake_case). A function read as a namespace loses nothing: no
        code names anything under a function."""
        last = api.rsplit(".", 1)[-1]
        if found.parens or found.option or found.config or not last.islower():
            return False
        if not api.startswith("torch."):
            return False
        imported = any(module == api or module.startswith(api + ".")
                       for role in ("before", "neutral") for module in self.facts[role].modules)
        package = found.whole and api.count(".") >= 2 and last.isalpha()
        return found.module_cue or imported or package

    def _added_keywords(self) -> list[Subject]:
        """Keywords the "after" example adds to a call the "before" one makes without them:
        the old default, now spelled out."""
        before, after = self.facts["before"].calls, self.facts["after"].calls
        added = []
        for api, calls in after.items():
            if api.startswith("torch.") and api in before:
                old = frozenset().union(*before[api])
                for keyword in sorted(frozenset().union(*calls) - old):
                    added.append(Subject(api=api, condition="omits", option=keyword,
                                         effect=self._title_effect()))
        return added

    def _from_examples(self) -> list[Subject]:
        """The names (and keywords) only the "before" half of a migration example uses."""
        before, after = self.facts["before"], self.facts["after"]
        if not before.names or not (after.names or after.calls):
            return []
        dropped = [name for name in before.names if name.startswith("torch.")
                   and name not in after.names and name not in self.facts["neutral"].names]
        effect = self._title_effect()
        subjects = [Subject(api=name, effect=effect) for name in dropped]
        for api, calls in before.calls.items():
            if api.startswith("torch.") and api in after.calls:
                gone = frozenset().union(*calls) - frozenset().union(*after.calls[api])
                subjects += [Subject(api=api, condition="passes", option=kw, effect=effect)
                             for kw in sorted(gone)]
        return subjects


def _with_defaults(subjects: list[Subject], added: list[Subject]) -> list[Subject]:
    """A changed default: options the words left without an owner take the API whose example
    adds them; with no option in the words, the example's added keywords are the options."""
    resolved: list[Subject] = []
    for subject in subjects:
        if subject.api:
            resolved.append(subject)
            continue
        resolved += [a for a in added if a.option == subject.option]
    if not any(s.condition == "omits" for s in resolved):
        resolved += added
    return resolved


def _tidy(subjects: list[Subject]) -> list[Subject]:
    """Each subject once; a plain use of an API dropped when a more precise reading of it is a
    subject too: an option of it, a namespace above it, or names under it ("imports for
    `torch.x` removed: `from torch.x import a, b`" changes a and b, not all of torch.x). A bare
    name the item reads as an option elsewhere is that option, not an API."""
    with_option = {s.api for s in subjects if s.option} | {s.option for s in subjects if s.option}
    spaces = [s.api + "." for s in subjects if s.scope == "namespace"]
    containers = {prefix for s in subjects if s.api.count(".") < MAX_PARTS
                  for prefix in _prefixes(s.api)}
    kept: dict[Subject, None] = {}
    for subject in subjects:
        if subject.condition == "uses" and (
                subject.api in with_option or (subject.scope == "exact" and (
                    subject.api in containers or subject.api.startswith(tuple(spaces))))):
            continue
        kept[subject] = None
    return list(kept)


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:cut]) for cut in range(1, len(parts))]
