"""The code blocks of an item read with ``ast``: which names each half of a migration example
uses (resolved through the snippet's own imports and the usual aliases), and which keywords its
calls pass.

Snippets in notes are rarely whole programs (``>>>`` prompts, output, ``...``, shell lines), so
a block that does not parse is read statement by statement, keeping those that do.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field

from watcher.impact.subjects.names import ALIASES
from watcher.impact.subjects.text import CodeBlock

__all__ = ["CodeFacts", "read_blocks"]

MAX_CODE = 4_000  # characters read of one block
MAX_TOTAL = 8_000  # characters read of all blocks (real examples are a few hundred)
MAX_NODES = 20_000


@dataclass
class CodeFacts:
    """What the blocks of one role use: qualified ``names``, the keyword sets each call of a
    name passes (``calls``), and the modules they import from (``modules``)."""

    names: dict[str, None] = field(default_factory=dict)  # ordered set
    calls: dict[str, list[frozenset[str]]] = field(default_factory=dict)
    modules: set[str] = field(default_factory=set)

    def merge(self, other: CodeFacts) -> None:
        self.names.update(other.names)
        for name, keywords in other.calls.items():
            self.calls.setdefault(name, []).extend(keywords)
        self.modules |= other.modules


def read_blocks(blocks: list[CodeBlock]) -> dict[str, CodeFacts]:
    """``{"before": ..., "after": ..., "neutral": ...}``: each role's blocks read together,
    up to ``MAX_TOTAL`` characters of code in all (real examples are a few hundred)."""
    facts = {role: CodeFacts() for role in ("before", "after", "neutral")}
    budget = MAX_TOTAL
    for block in blocks:
        code = block.code[:min(MAX_CODE, budget)]
        budget -= len(code)
        tree = _parse(code) if code else None
        if tree is not None:
            facts[block.role].merge(_facts(tree))
    return facts


def _parse(code: str) -> ast.Module | None:
    """The block as one module, or else each top-level statement that parses on its own (a
    chunk starts at an unindented line once the brackets before it are closed): every
    character is parsed at most twice, however broken the snippet."""
    lines = [_unprompt(line) for line in textwrap.dedent(code).split("\n")]
    whole = _try_parse("\n".join(lines))
    if whole is not None:
        return whole
    body: list[ast.stmt] = []
    for chunk in _chunks(lines):
        tree = _try_parse(chunk)
        if tree is not None:
            body += tree.body
    return ast.Module(body=body, type_ignores=[])


def _try_parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _chunks(lines: list[str]) -> list[str]:
    """Top-level statements: a chunk ends before an unindented line once brackets close."""
    chunks: list[list[str]] = [[]]
    depth = 0
    for line in lines:
        starts_statement = line[:1] not in ("", " ", "\t", ")", "]", "}")
        if starts_statement and depth <= 0 and chunks[-1]:
            chunks.append([])
            depth = 0
        chunks[-1].append(line)
        depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")
    return ["\n".join(chunk) for chunk in chunks if chunk]


def _unprompt(line: str) -> str:
    stripped = line.lstrip()
    if stripped.startswith((">>> ", "... ")):
        return stripped[4:]
    return line


def _facts(tree: ast.Module) -> CodeFacts:
    """One walk: the imports, the snippet's own variables, every maximal attribute chain and
    every call; names are resolved once the walk has seen all the imports."""
    facts = CodeFacts()
    aliases: dict[str, str] = {}
    local: set[str] = set()
    chains: list[str] = []
    calls: list[tuple[str, frozenset[str]]] = []
    inner: set[int] = set()
    for count, node in enumerate(ast.walk(tree)):
        if count > MAX_NODES:
            break
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _import(node, aliases, facts)
        elif isinstance(node, ast.Call):
            keywords = frozenset(kw.arg for kw in node.keywords if kw.arg)
            calls.append((_chain(node.func, inner=None), keywords))
        elif isinstance(node, (ast.Attribute, ast.Name)) and id(node) not in inner:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
            chains.append(_chain(node, inner))
    # A snippet's own variables (``optim = ...``) shadow the aliases notes use (``optim.``).
    aliases.update({name: name for name in local if name not in aliases})
    for chain in chains:
        if name := _resolve(chain, aliases):
            facts.names[name] = None
    for chain, keywords in calls:
        if name := _resolve(chain, aliases):
            facts.calls.setdefault(name, []).append(keywords)
    return facts


def _import(node: ast.Import | ast.ImportFrom, aliases: dict[str, str],
            facts: CodeFacts) -> None:
    """The names an import binds; each name imported from a module counts as used."""
    if isinstance(node, ast.ImportFrom):
        if node.module and not node.level:
            facts.modules.add(node.module)
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                aliases[alias.asname or alias.name] = full
                facts.names[full] = None
        return
    for alias in node.names:
        facts.modules.add(alias.name)
        root = alias.name.split(".")[0]
        aliases[alias.asname or root] = alias.name if alias.asname else root


def _chain(node: ast.expr, inner: set[int] | None) -> str:
    """``a.b.c`` of an attribute chain rooted at a plain name; its inner nodes are recorded so
    the walk does not read ``a.b`` and ``a`` again."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
        if inner is not None:
            inner.add(id(node))
    if not isinstance(node, ast.Name):
        return ""
    parts.append(node.id)
    return ".".join(reversed(parts))


def _resolve(dotted: str, aliases: dict[str, str]) -> str:
    """A chain with its root replaced by what the snippet's imports (or notes' aliases) bind."""
    if not dotted:
        return ""
    root, _, rest = dotted.partition(".")
    if root in aliases:
        base = aliases[root]
    elif root in ALIASES:
        base = ALIASES[root]
    else:
        return dotted
    return f"{base}.{rest}" if rest else base
