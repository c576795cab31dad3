"""Finds where the changes of one item touch a scanned codebase: each use of a changed API,
each call that passes a removed option or omits one whose default flipped, each declaration
of a dropped Python, CUDA or package version.

Precision first: a call through ``**kwargs`` may or may not carry an option, so it is flagged
neither for passing nor for omitting it; a reference that is not a call (``map_location=
torch.load`` handed around) is not flagged for a call's options.
"""

from __future__ import annotations

from collections.abc import Iterator

from watcher.impact.code import CodeIndex, UseRow, UseTable
from watcher.impact.model import Subject, Subjects
from watcher.models import Affect

__all__ = ["find_affects"]

# Where the public names the notes write are defined, when a file may import them from
# there: ``from torch.serialization import load`` is ``torch.load``.
DEFINED_AT: dict[str, tuple[str, ...]] = {
    "torch.load": ("torch.serialization.load",),
    "torch.save": ("torch.serialization.save",),
}
BARE_ROOT = "torch."  # an undotted api ("capture_pre_autograd_graph") is looked up under it

Found = tuple[str, UseRow, bool]  # (path, use, matched by method name only)


def find_affects(subjects: Subjects, index: CodeIndex, root_label: str) -> list[Affect]:
    """One affect per (path, line, api), sorted by path and line."""
    found: dict[tuple[str, int, str], Affect] = {}
    for subject in subjects.python:
        for path, row, by_method in python_uses(subject, index.table):
            key = (path, row["line"], subject.api)
            if key in found and (by_method or not found[key].by_method_name):
                continue  # a use resolved by name beats one matched by method name only
            found[key] = Affect(path=path, line=row["line"], code=row["code"],
                                api=subject.api, root=root_label, by_method_name=by_method)
    if subjects.environment:
        # Imported here: most items change no environment, and packaging's specifiers are
        # only needed for those that do.
        from watcher.impact.environment import touches
    for environment in subjects.environment:
        label = environment.label
        for path, declaration in index.declarations:
            key = (path, declaration.line, label)
            if key not in found and touches(environment, declaration):
                found[key] = Affect(path=path, line=declaration.line, code=declaration.code,
                                    api=label, root=root_label)
    return sorted(found.values(), key=lambda affect: (affect.path, affect.line, affect.api))


def python_uses(subject: Subject, table: UseTable) -> Iterator[Found]:
    """The uses a Python subject touches."""
    api = subject.api
    if subject.scope == "method":
        yield from method_uses(subject, table)
    elif not api:
        return
    elif "." not in api and subject.scope == "exact":
        for path, row in table.through(api):
            name = row["name"]
            if name.startswith(BARE_ROOT):
                called = name.rpartition(".")[2] == api
                if meets(subject, row, called):
                    yield path, row, False
    else:
        for name in (api, *DEFINED_AT.get(api, ())):
            for path, row in table.under(name):
                # Options belong to a call of the api itself, not of a name under it.
                if meets(subject, row, row["name"] == name):
                    yield path, row, False


def method_uses(subject: Subject, table: UseTable) -> Iterator[Found]:
    """``scheduler.print_lr()`` on any object, by method name; and a resolved name of that
    method of that class: under its qualified owner when the api has one
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
            if row.get("is_call") and meets(subject, row, True):
                yield path, row, True
    for path, row in table.ending_with(method):
        name = row["name"]
        if name.startswith(within) and name.endswith(ending) and meets(subject, row, True):
            yield path, row, False


def distinctive_method(method: str) -> bool:
    """A method name few other objects have: two words or more (``new_tensor``, ``print_lr``,
    ``zeroGrad``), never a single short word (``seed``, ``step``, ``load``)."""
    words = method.strip("_")
    return "_" in words or any(char.isupper() for char in words[1:])


def meets(subject: Subject, row: UseRow, called_itself: bool) -> bool:
    """Whether a use meets the subject's condition."""
    if subject.condition == "uses":
        return True
    if subject.condition in ("errors", "signature"):
        return False  # not to be told from a call's keywords: never a false alarm
    if not called_itself or not row.get("is_call") or subject.option is None:
        return False
    passed = subject.option in row.get("keywords", ())
    if subject.condition == "passes":
        return passed
    return not passed and not row.get("passes_kwargs", False)
