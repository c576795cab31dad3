"""What a class body says beyond its methods, read with ``ast``: the public attributes it
assigns (an enum's members, ``apply = _C._FunctionBase.__dict__["apply"]`` in
``torch.autograd.Function``), each a member callers can write; and the constructor a
``@dataclass`` or a ``NamedTuple`` gets from its fields, which no ``def`` spells out."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from watcher.impact.atlas.model import KEYWORD_ONLY, POSITIONAL_OR_KEYWORD, UNKNOWN_DEFAULT, Param
from watcher.impact.code import dotted

DATACLASS, NAMEDTUPLE = "dataclass", "namedtuple"
_NAMEDTUPLE_BASES = frozenset({"NamedTuple", "typing.NamedTuple", "typing_extensions.NamedTuple"})


def attributes(body: list[ast.stmt]) -> Iterator[tuple[str, ast.expr]]:
    """The public names a class body assigns a value to, with the value (an annotation
    without a value makes no class attribute: a dataclass field's instances have it)."""
    for node in body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and not target.id.startswith("_"):
                    yield target.id, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(
                node.target, ast.Name) and not node.target.id.startswith("_") \
                and not _class_var(node.annotation):
            yield node.target.id, node.value


def constructor(node: ast.ClassDef, body: list[ast.stmt]) -> tuple[str, tuple[Param, ...]] | None:
    """(``dataclass`` or ``namedtuple``, the parameters its own fields give the generated
    ``__init__``/``__new__``), or None for any other class. A dataclass's bases' fields come
    first; the linker adds them (``link.py``)."""
    kind, keyword_only = _generated(node)
    if kind is None:
        return None
    params: list[Param] = []
    for child in body:
        if isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name):
            if dotted(child.annotation).rpartition(".")[2] == "KW_ONLY":
                keyword_only = True  # ``_: KW_ONLY``: every field after it
                continue
            if _class_var(child.annotation):
                continue
            param = _field(child.target.id, child.value, keyword_only)
            if param is not None:
                params.append(param)
    return kind, tuple(params)


def _generated(node: ast.ClassDef) -> tuple[str | None, bool]:
    """Whether the class gets a generated constructor: a ``@dataclass`` (not ``init=False``),
    whose fields are keyword-only with ``kw_only=True``, or a ``NamedTuple`` subclass."""
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        if dotted(call.func if call else decorator).rpartition(".")[2] != "dataclass":
            continue
        options = {keyword.arg: keyword.value for keyword in (call.keywords if call else [])}
        if _false(options.get("init")):
            return None, False
        return DATACLASS, _true(options.get("kw_only"))
    if any(dotted(base) in _NAMEDTUPLE_BASES for base in node.bases):
        return NAMEDTUPLE, False
    return None, False


def _field(name: str, value: ast.expr | None, keyword_only: bool) -> Param | None:
    kind = KEYWORD_ONLY if keyword_only else POSITIONAL_OR_KEYWORD
    if value is None:
        return Param(name, kind)
    if isinstance(value, ast.Call) and dotted(value.func).rpartition(".")[2] == "field":
        options = {keyword.arg: keyword.value for keyword in value.keywords}
        if _false(options.get("init")):
            return None
        if _true(options.get("kw_only")):
            kind = KEYWORD_ONLY
        if "default" in options:
            return Param(name, kind, ast.unparse(options["default"]))
        # A factory's value is made per call: a default with no text (inspect: <factory>).
        return Param(name, kind, UNKNOWN_DEFAULT if "default_factory" in options else None)
    return Param(name, kind, ast.unparse(value))


def _class_var(annotation: ast.expr) -> bool:
    target = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return dotted(target).rpartition(".")[2] == "ClassVar"


def _true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _false(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False
