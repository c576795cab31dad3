"""The API atlas (read from a wheel with ``ast``) held against what the same package has when
imported (``scripts/dump_runtime_api.py``'s dump): which public names each side has, and
whether their signatures agree. ``tests/test_atlas_runtime.py`` asserts the figures;

    python tests/atlas_runtime.py ATLAS DUMP [--show names|signatures|members] [--limit N]
    python tests/atlas_runtime.py diff OLD_ATLAS NEW_ATLAS OLD_DUMP NEW_DUMP

prints them and the disagreements, to find what the atlas still reads wrong; ``diff`` judges
each change ``atlas diff`` lists by the two runtimes (its precision).

What is compared, and why:
- *names*: every public name of a public module the runtime imported. The runtime's are those
  bound to a function, class or module of the package (a module only under its own name: the
  atlas does not count ``torch.nn.functional`` bound as ``F`` inside another module as an API
  there), or to data of a type the package defines (``torch.float32``). Data of a builtin type
  cannot be told from an import of it at run time, so such a name counts only from the atlas's
  side (it must exist at run time). A name agrees when both have it; a runtime name counts as
  had where the atlas spells it (``Atlas.spells``: its names, or what a module binds).
- *signatures*: each function, class (its constructor) and method both sides have and
  ``inspect`` can read; equal when the parameters have the same names, kinds and whether
  they have a default, and the defaults are equal where both are literals (``None``, ``0.1``,
  ``"mean"``; a default like ``torch.float32`` or a sentinel object has no text to compare).
- *members*: the methods, properties and enum members of each class both sides have (own and
  inherited from the package's classes), by name.
"""

from __future__ import annotations

import ast
import gzip
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watcher.impact.atlas import Atlas, Param, loads
from watcher.impact.atlas.model import CALLABLE, CLASS, MODULE, UNKNOWN_DEFAULT
from watcher.impact.atlas.table import _unparam

CALLABLE_MEMBERS = ("method", "static", "class")


@dataclass
class Tally:
    """One figure: how many agree, and what does not (each with why)."""

    agree: int = 0
    differ: list[tuple[str, str]] = field(default_factory=list)
    unreadable: int = 0  # signatures ``inspect`` cannot read (C functions)

    @property
    def total(self) -> int:
        return self.agree + len(self.differ)

    @property
    def share(self) -> float:
        return self.agree / self.total if self.total else 1.0


@dataclass
class Comparison:
    names: Tally
    signatures: Tally
    members: Tally
    modules: int
    failed: int


def load_dump(path: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return found


def compare(atlas: Atlas, dump: dict[str, Any]) -> Comparison:
    names, signatures, members = Tally(), Tally(), Tally()
    objects = dump["objects"]
    modules = {name: entry for name, entry in dump["modules"].items() if "names" in entry}
    listed = _by_module(atlas)
    for module, entry in sorted(modules.items()):
        if atlas.resolve(module) is None:
            names.differ.append((module, "module not in the atlas"))
            continue
        names.agree += 1
        for attr, ref in entry["names"].items():
            name = f"{module}.{attr}"
            ours = _ours(module, attr, ref)
            had = atlas.spells(name)
            if ours and not had:
                names.differ.append((name, f"runtime {ref[0]} {ref[1]}, not in the atlas"))
            elif ours or name in atlas.names:
                names.agree += 1
            if had and ref[0] == "object" and len(ref) == 2:
                _signature(atlas, name, objects.get(ref[1], {}), signatures, members, objects)
        for name in listed.get(module, ()):
            if atlas.kind(atlas.names[name]) == MODULE and name in dump["modules"]:
                continue  # a submodule: ``import`` reaches it, whether or not it is an attribute
            if name.rpartition(".")[2] not in entry["names"]:
                names.differ.append((name, "in the atlas, not at run time"))
    failed = len(dump["modules"]) - len(modules)
    return Comparison(names, signatures, members, len(modules), failed)


def _ours(module: str, attr: str, ref: list[str]) -> bool:
    if len(ref) > 2 or ref[-1] == "foreign":
        return False
    if ref[0] == "module":
        return ref[1] == f"{module}.{attr}"
    return ref[0] == "object" or ref[0] == "data"


def _by_module(atlas: Atlas) -> dict[str, list[str]]:
    """The atlas's public names, by the module they are written on."""
    found: dict[str, list[str]] = {}
    for name in atlas.names:
        head, _, attr = name.rpartition(".")
        if not attr.startswith("_"):
            found.setdefault(head, []).append(name)
    return found


def _signature(atlas: Atlas, name: str, runtime: dict[str, Any], signatures: Tally,
               members: Tally, objects: dict[str, Any]) -> None:
    canonical = atlas.resolve(name)
    if canonical is None or not runtime:
        return
    kind = atlas.kind(canonical)
    if kind in CALLABLE or (kind == CLASS and not runtime.get("foreign_constructor")):
        # (A class whose constructor the package does not define, an enum's or a C type's,
        # has the signature of something outside it: not the atlas's to know.)
        _judge(name, runtime, atlas.signature(canonical), signatures)
    if kind == CLASS and runtime.get("kind") == "class":
        _members(atlas, name, canonical, runtime, signatures, members, objects)


def _members(atlas: Atlas, name: str, canonical: str, runtime: dict[str, Any],
             signatures: Tally, members: Tally, objects: dict[str, Any]) -> None:
    """A class's members, once per class (by its canonical name)."""
    if canonical in _seen:
        return
    _seen.add(canonical)
    found: dict[str, dict[str, Any]] = {}
    for base in reversed([name, *runtime.get("mro", [])]):
        source = runtime if base == name else objects.get(base, {})
        found.update(source.get("members", {}))
    had = atlas.members(canonical)
    for member, what in sorted(found.items()):
        if member.startswith("_") or (what["kind"] == "data" and not what.get("enum")):
            continue  # class attributes of builtin types: not read by either side alike
        spelled = f"{name}.{member}"
        if member not in had and atlas.resolve(spelled) is None:
            members.differ.append((spelled, f"runtime {what['kind']}, not in the atlas"))
            continue
        members.agree += 1
        if what["kind"] in CALLABLE_MEMBERS and atlas.kind(had.get(member, "")) in CALLABLE:
            _judge(spelled, what, atlas.apis[had[member]].params, signatures)


_seen: set[str] = set()


def _judge(name: str, runtime: dict[str, Any], params: tuple[Param, ...] | None,
           tally: Tally) -> None:
    if runtime.get("signature") is None:
        tally.unreadable += 1
        return
    if params is None:
        tally.differ.append((name, f"no signature in the atlas; runtime "
                                   f"({', '.join(runtime['signature'])})"))
        return
    theirs = [_unparam(text) for text in runtime["signature"]]
    why = _unequal(list(params), theirs)
    if why:
        tally.differ.append((name, why))
    else:
        tally.agree += 1


def _unequal(ours: list[Param], theirs: list[Param]) -> str | None:
    if [(p.name, p.kind) for p in ours] != [(p.name, p.kind) for p in theirs]:
        return f"atlas ({_text(ours)}) != runtime ({_text(theirs)})"
    for mine, other in zip(ours, theirs, strict=True):
        if (mine.default is None) != (other.default is None):
            return f"default of {mine.name}: atlas {mine.default} != runtime {other.default}"
        if mine.default is None or UNKNOWN_DEFAULT in (mine.default, other.default):
            continue
        left, right = _literal(mine.default), _literal(other.default)
        if left is not _NOT and right is not _NOT and left != right:
            return f"default of {mine.name}: atlas {mine.default} != runtime {other.default}"
    return None


_NOT = object()


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT


def _text(params: list[Param]) -> str:
    prefix = {"positional_only": "/", "keyword_only": "~", "var_positional": "*",
              "var_keyword": "**"}
    return ", ".join(prefix.get(p.kind, "") + p.name + ("" if p.default is None else "=")
                     for p in params)


def compare_files(atlas: Path, dump: Path) -> Comparison:
    _seen.clear()
    return compare(loads(atlas.read_bytes()), load_dump(dump))


def main(argv: list[str]) -> int:
    show = argv[argv.index("--show") + 1] if "--show" in argv else ""
    limit = int(argv[argv.index("--limit") + 1]) if "--limit" in argv else 40
    found = compare_files(Path(argv[0]), Path(argv[1]))
    print(f"{found.modules} modules imported, {found.failed} failed")
    for title in ("names", "signatures", "members"):
        tally: Tally = getattr(found, title)
        print(f"{title}: {tally.agree}/{tally.total} agree ({tally.share:.2%}), "
              f"{len(tally.differ)} differ, {tally.unreadable} unreadable by inspect")
        if title == show:
            for name, why in tally.differ[:limit]:
                print(f"  {name}: {why}")
    return 0




# ---- the diff of two releases, judged by their runtimes ---------------------------------
class Runtime:
    """A dump's names and signatures, looked up by the names users write."""

    def __init__(self, dump: dict[str, Any]) -> None:
        self.modules = {name: entry for name, entry in dump["modules"].items()
                        if "names" in entry}
        self.objects: dict[str, Any] = dump["objects"]

    def find(self, name: str) -> dict[str, Any] | None:
        """What ``name`` is at run time (an object's description, ``{}`` for a module or
        data), None where it is not there."""
        if name in self.modules:
            return {}
        head, _, attr = name.rpartition(".")
        if head in self.modules:
            ref = self.modules[head]["names"].get(attr)
            if ref is None:
                return None
            return self.objects.get(ref[1], {}) if ref[0] == "object" else {}
        owner = self.find(head) if head else None
        if not owner or owner.get("kind") != "class":
            return None
        return self.members(owner).get(attr)

    def members(self, cls: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for base in reversed(cls.get("mro", [])):
            found.update(self.objects.get(base, {}).get("members", {}))
        found.update(cls.get("members", {}))
        return found

    def params(self, name: str) -> list[Param] | None:
        what = self.find(name)
        if what is None:
            return None
        if what.get("kind") == "class" and what.get("foreign_constructor"):
            return None
        texts = what.get("signature")
        return None if texts is None else [_unparam(text) for text in texts]


def judge(change: Any, before: Runtime, after: Runtime) -> str:
    """``true``, ``false`` or ``unjudged`` (what a runtime cannot show: a deprecation's
    warning, a signature ``inspect`` cannot read) for one change of ``atlas diff``."""
    spellings = [change.api, *change.names]
    if change.change == "removed":
        if change.raises:
            return "true" if after.find(change.api) is not None else "false"
        return "true" if all(after.find(name) is None for name in spellings) else "false"
    if change.change == "deprecated":
        return "unjudged"
    old, new = before.params(change.api), after.params(change.api)
    if old is None or new is None:
        return "unjudged"
    was = next((p for p in old if p.name == change.parameter), None)
    now = next((p for p in new if p.name == change.parameter), None)
    verdicts = {
        "parameter_removed": was is not None and now is None,
        "keyword_only": now is not None and now.kind == "keyword_only",
        "positional_only": now is not None and now.kind == "positional_only",
        "default_removed": now is not None and now.default is None,
        "required_parameter_added": was is None and now is not None and now.default is None,
        "default_changed": was is not None and now is not None and was.default != now.default,
    }
    return "true" if verdicts.get(change.change) else "false"


def judge_diff(old_atlas: Path, new_atlas: Path, old_dump: Path, new_dump: Path,
               ) -> dict[str, list[Any]]:
    from watcher.impact.atlas import diff

    changes = diff(loads(old_atlas.read_bytes()), loads(new_atlas.read_bytes()))
    before, after = Runtime(load_dump(old_dump)), Runtime(load_dump(new_dump))
    found: dict[str, list[Any]] = {"true": [], "false": [], "unjudged": []}
    for change in changes:
        found[judge(change, before, after)].append(change)
    return found


def removal_recall(old_atlas: Path, new_atlas: Path, old_dump: Path, new_dump: Path,
                   ) -> tuple[list[str], list[str]]:
    """The public names of the old atlas that the old runtime has and the new one has not,
    and those of them the diff does not list removed (itself or a module holding it)."""
    from watcher.impact.atlas import diff

    atlas = loads(old_atlas.read_bytes())
    listed: set[str] = set()
    for change in diff(atlas, loads(new_atlas.read_bytes())):
        if change.change == "removed":
            listed.update((change.api, *change.names))
    before, after = Runtime(load_dump(old_dump)), Runtime(load_dump(new_dump))
    gone = [name for name in atlas.names if "." in name and before.find(name) is not None
            and after.find(name) is None]
    missed = [name for name in gone if not any(
        name == spelled or name.startswith(spelled + ".") for spelled in listed)]
    return gone, missed


def main_diff(argv: list[str]) -> int:
    paths = [Path(arg) for arg in argv[:4]]
    found = judge_diff(*paths)
    true, false = len(found["true"]), len(found["false"])
    print(f"precision {true}/{true + false} ({true / max(1, true + false):.1%}); "
          f"{len(found['unjudged'])} unjudged (deprecations, unreadable signatures)")
    for change in found["false"]:
        print(f"  false: {change.change} {change.api} {change.parameter or ''}")
    gone, missed = removal_recall(*paths)
    print(f"removal recall {len(gone) - len(missed)}/{len(gone)} (public names the new "
          "runtime lacks)")
    for name in missed:
        print(f"  missed: {name}")
    return 0


if __name__ == "__main__":
    arguments = sys.argv[1:]
    raise SystemExit(main_diff(arguments[1:]) if arguments[:1] == ["diff"] else main(arguments))
