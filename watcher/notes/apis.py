"""Which subsystems own the APIs an item names: the dotted names in its text (``torch.export.Dim``,
``torch.distributed.new_group``) looked up, longest prefix first, in ``config/apis.toml``.

The text is the notes' (untrusted): only names of word characters and dots are read, each at most
``MAX_NAME`` characters, at most ``MAX_NAMES`` distinct ones per item.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_NAME = 120
MAX_NAMES = 50
# A name used as a modifier ("torch.export-based quantization", "`torch.compile`-friendly")
# names what the item builds on, not what it is about: not counted.
_DOTTED = re.compile(r"(?<![\w.])(torch(?:_xla)?(?:\.[A-Za-z_]\w{0,60}){1,8})(?!\w|\.\w)"
                     r"(?!`?-(?:based|friendly|like|style|compatible|backed)\b)")


@dataclass(frozen=True)
class Named:
    """A subsystem an item names an API of, and the first name that said so."""

    subsystem: str
    api: str


class ApiOwners:
    """Dotted prefix → subsystem id (``{"torch.export": "export", ...}``)."""

    def __init__(self, owners: Mapping[str, str]) -> None:
        self.owners = dict(owners)
        self._longest = max((prefix.count(".") + 1 for prefix in self.owners), default=0)

    def owner(self, name: str) -> str | None:
        """The subsystem of the longest known prefix of ``name`` (whole dotted parts only)."""
        parts = name.split(".")
        for size in range(min(len(parts), self._longest), 0, -1):
            found = self.owners.get(".".join(parts[:size]))
            if found is not None:
                return found
        return None

    def named(self, text: str) -> list[Named]:
        """The subsystems whose APIs ``text`` names, each once, in the order first named."""
        if not self.owners or "torch" not in text:
            return []
        seen: dict[str, Named] = {}
        names: set[str] = set()
        for match in _DOTTED.finditer(text):
            name = match.group(1).rstrip(".")
            if len(name) > MAX_NAME or name in names:
                continue
            names.add(name)
            owner = self.owner(name)
            if owner is not None and owner not in seen:
                seen[owner] = Named(owner, name)
            if len(names) >= MAX_NAMES:
                break
        return list(seen.values())
