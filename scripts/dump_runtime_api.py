"""Dumps the API a package really has at run time: every public module imported, each public
name it binds, and the ``inspect`` signature of every function, class and method, as gzip'd
JSON. It is what the API atlas (read from the wheel with ``ast``, never imported) is held
against (``tests/test_atlas_runtime.py``).

The package is imported only here, and only inside a throwaway venv this script makes: it
installs the wheel there with pip, runs itself with the venv's Python (``--inside``), and
deletes the venv (unless ``--keep-venv``). release-watch itself never imports torch.

    python scripts/dump_runtime_api.py torch==2.13.0 $(cat scripts/runtime_extras.txt) \\
        --out tests/fixtures/runtime/torch-2.13.0.json.gz [--venv DIR] [--keep-venv]

The extras are torch's optional dependencies (numpy, z3, tensorboard, ...): modules that
define names only when one imports are read by the atlas with both branches, so the runtime
is measured with them present.

pip takes ``torch==2.13.0`` from ``/opt/wheels`` (its ``find-links``): the 2.13.0+cpu wheel the
bundled atlas of 2.13.0 is built from. The dump's layout:

    {"package": "torch", "version": "2.13.0+cpu", "python": "3.11.9",
     "modules": {"torch.nn": {"all": [...] | null, "names": {"Linear": REF, ...}}
                 "torch.x": {"error": "ModuleNotFoundError: No module named 'onnx'"}},
     "objects": {"torch.nn.modules.linear.Linear": OBJECT, ...}}

A name's REF is ``["module", name]``, ``["object", key]`` (a function or class, by
``{__module__}.{__qualname__}``), or ``["data", type]``, with ``"foreign"`` appended where the
object comes from outside the package. An OBJECT is ``{"kind": ..., "signature": PARAMS |
null, "why": why inspect could not read it, "mro": [...], "members": {name: MEMBER}}``; a
MEMBER (a class's own, from its ``__dict__``) ``{"kind": "method" | "static" | "class" |
"property" | "data", "signature": ..., "why": ...}``, a method's ``self``/``cls`` left out;
PARAMS are strings as the atlas's codec writes them: a kind prefix (none: positional or
keyword; ``/`` positional-only; ``~`` keyword-only; ``*``, ``**``), the name, and ``=`` the
default's ``repr`` when it has one.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import importlib
import inspect
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

IMPORT_SECONDS = 60  # one module's import; past it the module is recorded as failing
_PREFIX = {inspect.Parameter.POSITIONAL_ONLY: "/", inspect.Parameter.POSITIONAL_OR_KEYWORD: "",
           inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.KEYWORD_ONLY: "~",
           inspect.Parameter.VAR_KEYWORD: "**"}


# ---- outside: the throwaway venv ------------------------------------------------------------
def outside(requirements: list[str], out: Path, venv: Path | None, keep: bool) -> int:
    folder = venv or Path(tempfile.mkdtemp(prefix="runtime-api-"))
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(folder)], check=True)
        python = folder / "bin" / "python"
        subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)
        package = re.split(r"[=<>!~\[ ]", requirements[0], maxsplit=1)[0]
        subprocess.run([str(python), "-X", "faulthandler", __file__, "--inside", package,
                        "--out", str(out.resolve())], check=True, cwd=folder)
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"{out}: {out.stat().st_size / 1e3:.0f} KB", file=sys.stderr)
    return 0


# ---- inside: the package imported ---------------------------------------------------------
def inside(package: str, out: Path) -> int:
    root = Path(importlib.import_module(package).__file__ or "").parent
    modules = public_modules(package, root)
    imported: dict[str, types.ModuleType] = {}
    failed: dict[str, str] = {}
    for name in modules:  # every one first: importing one sets attributes on its parents
        try:
            imported[name] = _import(name)
        except BaseException as error:
            failed[name] = f"{type(error).__name__}: {error}".splitlines()[0][:300]
    dump = Dumper(package)
    found: dict[str, Any] = {name: {"error": why} for name, why in failed.items()}
    for name, module in sorted(imported.items()):
        found[name] = dump.module(module)
    version = getattr(sys.modules[package], "__version__", "?")
    data = {"package": package, "version": str(version), "python": sys.version.split()[0],
            "modules": dict(sorted(found.items())), "objects": dict(sorted(dump.objects.items()))}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(gzip.compress(json.dumps(data, separators=(",", ":"), sort_keys=True)
                                  .encode(), compresslevel=9, mtime=0))
    print(f"{len(imported)} modules imported, {len(failed)} failed, {len(dump.objects)} objects",
          file=sys.stderr)
    sys.stdout.flush()
    os._exit(0)  # threads and atexit hooks some modules start must not hold the process


def public_modules(package: str, root: Path) -> list[str]:
    """Every module of the installed package no part of whose name starts with ``_``, as the
    atlas reads them from the wheel (``.py`` files and packages; the shared libraries in
    ``torch/lib`` are no modules)."""
    found = set()
    for path in root.rglob("*"):
        if path.suffix != ".py" or not path.is_file():
            continue
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        if all(part.isidentifier() and not part.startswith("_") for part in parts):
            found.add(".".join(parts))
    return sorted(found)


def _import(name: str) -> types.ModuleType:
    def expired(*_: object) -> None:
        raise TimeoutError(f"import took over {IMPORT_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(IMPORT_SECONDS)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return importlib.import_module(name)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class Dumper:
    def __init__(self, package: str) -> None:
        self.package = package
        self.objects: dict[str, dict[str, Any]] = {}

    def ours(self, module: object) -> bool:
        return isinstance(module, str) and (module == self.package
                                            or module.startswith(self.package + "."))

    def module(self, module: types.ModuleType) -> dict[str, Any]:
        listed = getattr(module, "__all__", None)
        names = {}
        for attr in sorted(set(dir(module)) | _written(module)):
            if attr.startswith("_"):
                continue
            try:
                value = getattr(module, attr)
            except Exception:
                continue
            names[attr] = self.ref(value)
        entry: dict[str, Any] = {"names": names}
        entry["all"] = sorted(str(name) for name in listed) if isinstance(
            listed, list | tuple) else None
        return entry

    def ref(self, value: object) -> list[str]:
        if isinstance(value, types.ModuleType):
            return ["module", value.__name__] + ([] if self.ours(value.__name__) else ["foreign"])
        if inspect.isclass(value) or (callable(value) and hasattr(value, "__qualname__")):
            home = getattr(value, "__module__", None)
            key = f"{home}.{getattr(value, '__qualname__', '?')}"
            if not self.ours(home) and home is not None:
                return ["object", key, "foreign"]
            if key not in self.objects:
                self.objects[key] = {}  # a class that holds itself ends here
                self.objects[key] = self.describe(value)
            return ["object", key]
        kind = type(value)
        home = getattr(kind, "__module__", "")
        return ["data", f"{home}.{kind.__qualname__}"] + ([] if self.ours(home) else ["foreign"])

    def describe(self, value: Any) -> dict[str, Any]:
        found: dict[str, Any] = {"kind": "class" if inspect.isclass(value) else "function"}
        found.update(signature_of(value, bound=False))
        if inspect.isclass(value):
            bases = [c for c in value.__mro__[1:] if self.ours(c.__module__)]
            found["mro"] = [self.ref(c)[1] for c in bases]  # described too: what it inherits
            if not self.ours(constructor_home(value)):
                found["foreign_constructor"] = True
            members = {}
            for attr, raw in sorted(vars(value).items()):
                if not attr.startswith("_") or attr == "__init__":
                    members[attr] = member(value, attr, raw)
            found["members"] = members
        return found


def _written(module: types.ModuleType) -> set[str]:
    """The identifiers a module's source writes that it answers for though ``dir`` omits
    them: a module replaced by an object in ``sys.modules`` (``torch.backends.cudnn``, the
    config modules) answers through ``__getattr__``; one with a ``__dir__`` of its own lists
    what it likes."""
    path = getattr(module, "__file__", None)
    plain = type(module) is types.ModuleType and not any(
        hook in vars(module) for hook in ("__dir__", "__getattr__"))
    if plain or not path or not path.endswith(".py"):
        return set()
    words = set(re.findall(r"\b[A-Za-z]\w*\b", Path(path).read_text("utf-8", "replace")))
    found = set()
    for word in words:
        try:
            getattr(module, word)
        except Exception:
            continue
        found.add(word)
    return found


def constructor_home(cls: type) -> str | None:
    """The module of what ``inspect.signature(cls)`` reads: a metaclass's ``__call__``, else
    the first ``__new__``/``__init__`` along the MRO (as ``inspect`` looks for them)."""
    for meta in type(cls).__mro__:
        call = vars(meta).get("__call__") if meta not in (type, object) else None
        if call is not None:
            return getattr(call, "__module__", None) or meta.__module__
    for base in cls.__mro__:
        for method in ("__new__", "__init__"):
            if method in vars(base):
                return getattr(vars(base)[method], "__module__", None) or base.__module__
    return "builtins"


def member(cls: type, attr: str, raw: Any) -> dict[str, Any]:
    """A class's own attribute as its callers meet it (``self``/``cls`` left out)."""
    if isinstance(raw, staticmethod):
        return {"kind": "static", **signature_of(raw.__func__, bound=False)}
    if isinstance(raw, classmethod):
        return {"kind": "class", **signature_of(raw.__func__, bound=True)}
    if isinstance(raw, property) or type(raw).__name__ in (
            "cached_property", "getset_descriptor", "member_descriptor"):
        return {"kind": "property"}
    if inspect.isfunction(raw) or inspect.ismethoddescriptor(raw) or inspect.isbuiltin(raw):
        return {"kind": "method", **signature_of(raw, bound=True)}
    if callable(raw):
        try:
            value = getattr(cls, attr)
        except Exception:
            return {"kind": "data"}
        return {"kind": "method", **signature_of(value, bound=inspect.isfunction(value))}
    found = {"kind": "data", "type": f"{type(raw).__module__}.{type(raw).__qualname__}"}
    if isinstance(raw, cls):
        found["enum"] = True  # an enum's member (an instance of its own class)
    return found


def signature_of(value: Any, *, bound: bool) -> dict[str, Any]:
    try:
        signature = inspect.signature(value)
    except (ValueError, TypeError) as error:
        return {"signature": None, "why": f"{type(error).__name__}: {error}"[:200]}
    params = [_param(param) for param in signature.parameters.values()]
    if bound and params and not params[0].startswith("*"):
        params.pop(0)
    return {"signature": params}


def _param(param: inspect.Parameter) -> str:
    text = _PREFIX[param.kind] + param.name
    if param.default is inspect.Parameter.empty:
        return text
    try:
        default = repr(param.default)
    except Exception:
        default = f"<{type(param.default).__qualname__}>"
    return f"{text}={' '.join(default.split())[:200]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("requirements", nargs="*", help="what pip installs, the package "
                        "first: torch==2.13.0 numpy (numpy: modules of torch that need it)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--venv", type=Path, help="make the venv here (else a temp folder)")
    parser.add_argument("--keep-venv", action="store_true")
    parser.add_argument("--inside", metavar="PACKAGE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inside:
        return inside(args.inside, args.out)
    if not args.requirements:
        parser.error("give what to install, e.g. torch==2.13.0")
    return outside(args.requirements, args.out, args.venv, args.keep_venv)


if __name__ == "__main__":
    raise SystemExit(main())
