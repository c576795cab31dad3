"""Which subsystems own the APIs an item names: the dotted names in its text (``torch.export.Dim``,
``torch.distributed.new_group``) looked up, longest prefix first, in ``config/apis.toml``; and
the names its code spans write without their module (`` `F.pad` `` through an import alias,
`` `DTensor` ``, `` `fully_shard()` `` through the short names of the newest bundled atlas).

The text is the notes' (untrusted): only names of word characters and dots are read, each at most
``MAX_NAME`` characters, at most ``MAX_NAMES`` distinct ones per item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

MAX_NAME = 120
MAX_NAMES = 50
# A name used as a modifier ("torch.export-based quantization", "`torch.compile`-friendly")
# names what the item builds on, not what it is about: not counted.
_DOTTED = re.compile(r"(?<![\w.])(torch(?:_xla)?(?:\.[A-Za-z_]\w{0,60}){1,8})(?!\w|\.\w)"
                     r"(?!`?-(?:based|friendly|like|style|compatible|backed)\b)")


# A code span naming an API without its module: `DTensor`, `fully_shard()`, `F.pad`,
# `DTensor.from_local`. Only names shaped like an API are read: a CapWords class, a snake_case
# name, a call, or a dotted name (a bare word such as `verbose` may be anything).
_SPAN = re.compile(r"`([A-Za-z_]\w{0,60}(?:\.[A-Za-z_]\w{0,60}){0,5})(\(\))?`")
_CAPWORDS = re.compile(r"[A-Z]\w*[a-z]\w*")  # a class: `DTensor`, `Dim`, `SDPBackend`


@dataclass(frozen=True)
class Named:
    """A subsystem an item names an API of, and the first name that said so."""

    subsystem: str
    api: str


class ApiOwners:
    """Dotted prefix → subsystem id (``{"torch.export": "export", ...}``)."""

    def __init__(self, owners: Mapping[str, str], aliases: Mapping[str, str] | None = None,
                 short_names: Path | None = None) -> None:
        self.owners = dict(owners)
        self.aliases = dict(aliases or {})
        self._short_names_path = short_names
        self._longest = max((prefix.count(".") + 1 for prefix in self.owners), default=0)

    def with_short_names(self, aliases: Mapping[str, str], path: Path) -> ApiOwners:
        """These owners, reading the names code spans write without their module too."""
        return ApiOwners(self.owners, aliases, path)

    @cached_property
    def short_names(self) -> dict[str, str]:
        """Short name → its public name (read on first use; a missing file: none)."""
        if self._short_names_path is None:
            return {}
        try:
            data = json.loads(self._short_names_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        names = data.get("names") if isinstance(data, dict) else None
        return {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}

    def spelled_out(self, span: str, called: bool) -> str | None:
        """The full name a code span writes without its module, or None."""
        first, dot, rest = span.partition(".")
        if dot and first in self.aliases:
            return f"{self.aliases[first]}.{rest}"
        if not (dot or called or "_" in span.strip("_") or _CAPWORDS.fullmatch(span)):
            return None
        known = self.short_names.get(first)
        return f"{known}.{rest}" if known and dot else known

    def owner(self, name: str) -> str | None:
        """The subsystem of the longest known prefix of ``name`` (whole dotted parts only)."""
        parts = name.split(".")
        for size in range(min(len(parts), self._longest), 0, -1):
            found = self.owners.get(".".join(parts[:size]))
            if found is not None:
                return found
        return None

    def named(self, text: str, written_only: bool = False) -> list[Named]:
        """The subsystems whose APIs ``text`` names, each once, in the order first named;
        ``written_only``: only names written with their module (``torch.export.Dim``)."""
        if not self.owners:
            return []
        seen: dict[str, Named] = {}
        names: set[str] = set()
        for name in self._names_in(text, written_only):
            if len(name) > MAX_NAME or name in names:
                continue
            names.add(name)
            owner = self.owner(name)
            if owner is not None and owner not in seen:
                seen[owner] = Named(owner, name)
            if len(names) >= MAX_NAMES:
                break
        return list(seen.values())

    def _names_in(self, text: str, written_only: bool) -> list[str]:
        """The dotted torch names of ``text``, then what its other code spans spell out."""
        found = [match.group(1).rstrip(".") for match in _DOTTED.finditer(text)] \
            if "torch" in text else []
        if not written_only and (self.aliases or self._short_names_path is not None) \
                and "`" in text:
            for match in _SPAN.finditer(text):
                span = match.group(1)
                if not span.startswith("torch"):
                    full = self.spelled_out(span, bool(match.group(2)))
                    if full is not None:
                        found.append(full)
        return found
