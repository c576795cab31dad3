"""Names as release notes write them, read into qualified Python names: aliases expanded, call
arguments split off, and everything that is not a Python API (C++, paths, literals, constants,
other packages' names, common words) told apart.

Pure string work on one code span (at most ``MAX_SPAN`` characters), so it is cheap enough to
run on every span of a hostile item.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from dataclasses import dataclass, field
from typing import Literal

from watcher.impact.code import dotted

__all__ = ["ALIASES", "NameInfo", "SpanKind", "camel", "distinctive", "expand", "is_method_form",
           "normalise_package", "read_span"]

MAX_SPAN = 200

# Import aliases people write in notes, as in code (``F.relu``, ``nn.Module``, ``dist.send``).
ALIASES: dict[str, str] = {
    "nn": "torch.nn", "F": "torch.nn.functional", "dist": "torch.distributed",
    "optim": "torch.optim", "autograd": "torch.autograd", "Tensor": "torch.Tensor",
    "fx": "torch.fx", "inductor": "torch._inductor", "dynamo": "torch._dynamo",
}

# Bare names that are English or Python before they are APIs: a note naming them alone names
# no particular API (``load``, ``export``, ``json``), so they need a qualified spelling elsewhere
# in the item to count.
COMMON_WORDS = frozenset({
    "load", "save", "export", "compile", "module", "modules", "function", "functions", "tensor",
    "tensors", "model", "forward", "backward", "device", "dtype", "shape", "json", "cond", "print",
    "options", "option", "config", "kwargs", "args", "self", "ctx", "cpu", "cuda", "mps", "xpu",
})
PYTHON_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist)

_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_IMPORT = re.compile(r"from\s+([A-Za-z_][\w.]{0,150})\s+import\s+\(?([\w\s,]{1,150}?)\)?")
_REQUIREMENT = re.compile(r"([A-Za-z][\w.-]*)\s*(>=|<=|==|~=|!=|>|<)\s*(\d[\w.]*)")
_ASSIGN = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*=\s*([^=\s].{0,80})")
_CONSTANT = re.compile(r"[A-Z][A-Z0-9_]+")
# ``guard_or_x``, ``definitely_x``: a family written with a one-letter placeholder.
_PLACEHOLDER = re.compile(r"_[a-zA-Z]$")
_FILE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc", ".cu", ".cmake", ".so", ".dll", ".dylib", ".py",
                  ".txt", ".md", ".yaml", ".yml", ".json", ".toml", ".sh", ".bat")

SpanKind = Literal["name", "call", "assign", "literal", "requirement", "import", "cpp", "other"]


@dataclass(frozen=True)
class NameInfo:
    """One code span read: ``name`` is the dotted name as written (aliases not yet expanded),
    ``keywords`` the keyword arguments of a call span, ``value`` the value of ``name=value``."""

    kind: SpanKind
    name: str = ""
    keywords: tuple[str, ...] = field(default=())
    value: str = ""
    requirement: tuple[str, str] = ("", "")  # (package, specifier) of ``onnxscript>=0.3.1``
    imports: tuple[str, ...] = field(default=())  # the names a ``from m import a, b`` span names


def read_span(raw: str) -> NameInfo:
    """What a code span holds, from its text alone."""
    text = raw.strip()
    if not text or len(text) > MAX_SPAN:
        return NameInfo("other")
    if "::" in text:
        return NameInfo("cpp")
    if text[0] in "\"'0123456789" or text in PYTHON_NAMES:
        return NameInfo("literal", name=text)
    if (imported := _IMPORT.fullmatch(text)) is not None:
        return _read_import(imported[1], imported[2])
    if (req := _REQUIREMENT.fullmatch(text)) is not None:
        return NameInfo("requirement", requirement=(req[1], req[2] + req[3]))
    if (assign := _ASSIGN.fullmatch(text)) is not None:
        return NameInfo("assign", name=assign[1], value=assign[2].strip())
    if "/" in text or "\\" in text or text.endswith(_FILE_SUFFIXES) or "*" in text:
        return NameInfo("other")
    match = _NAME.match(text)
    if match is None or _CONSTANT.fullmatch(match[0]):
        return NameInfo("other")
    rest = text[match.end():]
    if not rest:
        return NameInfo("name", name=match[0])
    if rest[0] != "(":
        return NameInfo("other")
    return _read_call(text, match[0], rest)


def _read_import(module: str, names: str) -> NameInfo:
    """``from torch.x import a, b as c``: the names it imports, qualified (torch ones only)."""
    module = expand(module)
    if not module.startswith("torch."):
        return NameInfo("other")
    imported = [part.split()[0] for part in names.split(",") if part.split()]
    return NameInfo("import", imports=tuple(f"{module}.{name}" for name in imported
                                            if name.isidentifier()))


def _read_call(text: str, name: str, rest: str) -> NameInfo:
    """``f()``, ``f(..., strict=True)``, ``f().g()``: the first name and its keywords. Arguments
    that are not Python (``find_package(TORCH REQUIRED)``, CMake) make it no name at all."""
    if rest == "()":
        return NameInfo("call", name=name)
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return NameInfo("other")
    keywords: tuple[str, ...] = ()
    if isinstance(tree.body, ast.Call) and dotted(tree.body.func) == name:
        keywords = tuple(kw.arg for kw in tree.body.keywords if kw.arg)
    return NameInfo("call", name=name, keywords=keywords)


def expand(name: str) -> str:
    """``nn.Module`` → ``torch.nn.Module``; names rooted elsewhere are returned unchanged."""
    root, _, rest = name.partition(".")
    if rest and root in ALIASES:
        return f"{ALIASES[root]}.{rest}"
    if root == "Tensor":
        return "torch.Tensor"
    return name


def camel(part: str) -> bool:
    """A class-like name: ``LRScheduler``, ``GradScaler``, ``ONNXProgram`` (not ``Options``,
    ``Dims``, ``ATEN``)."""
    if not part[:1].isupper() or not any(c.islower() for c in part):
        return False
    uppers = sum(c.isupper() for c in part)
    return uppers >= 2


def distinctive(name: str) -> bool:
    """A bare name specific enough to stand alone: ``capture_pre_autograd_graph``,
    ``XNNPACKQuantizer``; never ``load``, ``export``, a builtin or a placeholder family."""
    if name in PYTHON_NAMES or name.lower() in COMMON_WORDS or _PLACEHOLDER.search(name):
        return False
    return ("_" in name.strip("_")) or camel(name)


def is_method_form(name: str) -> bool:
    """``Class.method``: a method reached through an instance whose type code rarely spells
    (``torch.Tensor.new_tensor``, ``LRScheduler.print_lr``)."""
    parts = name.split(".")
    if len(parts) < 2:
        return False
    owner, last = parts[-2].lstrip("_"), parts[-1]
    classlike = owner[:1].isupper() and any(c.islower() for c in owner)  # Module, _PhiloxState
    return classlike and last[:1].islower()


def normalise_package(name: str) -> str:
    """PEP 503 normalisation: ``Pytorch_Triton`` → ``pytorch-triton``."""
    return re.sub(r"[-_.]+", "-", name).lower()
