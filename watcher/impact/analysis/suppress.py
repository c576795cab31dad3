"""Uses a team has accepted, kept out of the tiers as linters keep theirs: a comment on the
line, a baseline file, or a "Not us" kept in the store (a Slack button). A suppressed use is
never dropped silently: it moves from an item's ``affects`` to its ``suppressed`` list, with
how it was suppressed, and every report counts it.

- Inline: ``# release-watch: ignore[173454]`` at the end of the use's line, or on a line of
  its own right above it (ITEM a PR number of the item, an API name, or ``*``; several
  separated by commas), as ``# noqa: E501`` and ``# type: ignore[...]`` are written.
- A baseline (``impact --write-baseline FILE``, then ``--baseline FILE``) and the store's
  "Not us": entries naming the use by what survives an edit elsewhere in the file (its
  codebase, path, API and code line, and the item's PR), never by its line number.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from watcher.errors import ConfigError
from watcher.models import Affect, ClassifiedItem

__all__ = ["BASELINE_VERSION", "How", "Suppressed", "Suppression", "Suppressor", "item_refs",
           "read_baseline", "write_baseline"]

How = Literal["inline", "baseline", "store"]
BASELINE_VERSION = 1
# "# release-watch: ignore[173454]", "# release-watch: ignore[*]", "ignore[1, torch.load]".


class Suppression(BaseModel):
    """One accepted use, named without its line number (a line moved by an edit above it is
    the same use): ``item`` a PR number of the item ("" for any item touching that use)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    item: str = ""
    api: str
    codebase: str
    path: str
    code: str
    release: str | None = None  # where it was first seen (informative)
    by: str = ""  # who said "not us" (a Slack user id), for the store's
    at: datetime | None = None
    reason: str = ""
    count: int = Field(default=1, ge=1)  # how many uses of this name it accepts

    @property
    def key(self) -> str:
        """Stable across machines and runs: the store keeps one entry per key."""
        text = "\n".join((self.item, self.api, self.codebase, self.path, self.code))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]

    @classmethod
    def of(cls, item: ClassifiedItem, use: Affect, **extra: object) -> Suppression:
        """The entry that suppresses ``use`` of ``item`` (its first PR, else any item)."""
        refs = item_refs(item)
        return cls(item=refs[0] if refs else "", api=use.api,
                   codebase=use.codebase or use.root, path=use.path, code=use.code,
                   release=use.release, **extra)  # type: ignore[arg-type]


class Suppressed(NamedTuple):
    use: Affect
    how: How


def item_refs(item: ClassifiedItem) -> list[str]:
    """How a comment or an entry names an item: its PR numbers, as text."""
    return [str(number) for number in item.prs]


Place = tuple[str, str, str, str, str]  # item, api, codebase, path, code


@dataclass(frozen=True)
class Suppressor:
    """Decides which uses are suppressed: inline comments always, then the baseline's and the
    store's entries, each accepting as many uses of its name as it counts (a file with the
    same call on two lines accepts two, and a third added later is new)."""

    baseline: Mapping[Place, int] = field(default_factory=dict)
    store: Mapping[Place, int] = field(default_factory=dict)

    @classmethod
    def of(cls, baseline: Iterable[Suppression] = (), store: Iterable[Suppression] = ()
           ) -> Suppressor:
        return cls(_counted(baseline), _counted(store))

    def split(self, item: ClassifiedItem, uses: Sequence[Affect]
              ) -> tuple[list[Affect], list[Suppressed]]:
        """The uses left in the tiers, and those suppressed with how. A mention is never
        suppressed: it is no claim, and is shown only on request anyway."""
        refs = item_refs(item)
        left = {"baseline": Counter(self.baseline), "store": Counter(self.store)}
        kept, suppressed = [], []
        for use in uses:
            how = _how(refs, use, left) if use.tier != "mentions" else None
            if how is None:
                kept.append(use)
            else:
                suppressed.append(Suppressed(use, how))
        return kept, suppressed


def _how(refs: list[str], use: Affect, left: dict[str, Counter[Place]]) -> How | None:
    if use.ignore and ("*" in use.ignore or use.api in use.ignore
                       or any(ref in use.ignore for ref in refs)):
        return "inline"
    how: How
    for how in ("baseline", "store"):
        entries = left[how]
        for ref in (*refs, ""):
            place = (ref, use.api, use.codebase or use.root, use.path, use.code)
            if entries[place] > 0:
                entries[place] -= 1
                return how
    return None


def _counted(entries: Iterable[Suppression]) -> dict[Place, int]:
    counts: Counter[Place] = Counter()
    for entry in entries:
        counts[(entry.item, entry.api, entry.codebase, entry.path, entry.code)] += entry.count
    return dict(counts)


def read_baseline(path: str) -> list[Suppression]:
    """A baseline file's entries; ``ConfigError`` in one line for one that is missing or not
    a baseline."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"--baseline {path}: cannot read it ({error.strerror or error})"
                          ) from None
    except ValueError as error:
        raise ConfigError(f"--baseline {path}: not JSON ({error})") from None
    if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION or not isinstance(
            data.get("uses"), list):
        raise ConfigError(f"--baseline {path}: not a release-watch baseline (write one with "
                          "--write-baseline)")
    entries = []
    for number, entry in enumerate(data["uses"]):
        try:
            entries.append(Suppression.model_validate(entry))
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise ConfigError(f"--baseline {path}: uses.{number}.{where}: {first['msg']}"
                              ) from None
    return entries


def write_baseline(path: str, entries: Iterable[Suppression]) -> int:
    """Writes the entries (the same name once, counted, in a stable order, so the file diffs
    well in review); how many uses they accept."""
    unique: dict[str, Suppression] = {}
    for entry in entries:
        same = unique.get(entry.key)
        unique[entry.key] = entry if same is None else same.model_copy(
            update={"count": same.count + entry.count})
    ordered = sorted(unique.values(), key=lambda e: (e.codebase, e.path, e.api, e.item, e.code))
    data = {"version": BASELINE_VERSION,
            "uses": [entry.model_dump(exclude_defaults=True, mode="json") for entry in ordered]}
    try:
        Path(path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                              encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"--write-baseline {path}: cannot write it "
                          f"({error.strerror or error})") from None
    return sum(entry.count for entry in ordered)
