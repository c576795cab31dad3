"""Domain values that flow through a poll: Release → Snapshot → Item → Change → Event.

All are immutable pydantic models, so each step of the pipeline takes one value and returns the
next without reaching back; the JSON they dump is the contract's event shape.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EventType = Literal["published", "edited", "released", "deleted"]
ChangeType = Literal["added", "removed", "changed"]
DecidedBy = Literal["heading", "label", "rule", "model"]  # what set an item's subsystem
Tier = Literal["breaks", "check", "mentions"]  # how sure it is that a change reaches a use
TIERS: tuple[Tier, ...] = ("breaks", "check", "mentions")  # most sure first

KINDS: tuple[str, ...] = (
    "highlight", "bc_breaking", "deprecation", "new_feature", "improvement", "bug_fix",
    "performance", "docs", "developers", "security", "regression", "other",
)

# The kinds whose uses in a team's code are a warning (``[impact]``): what readers see first.
ATTENTION_KINDS: tuple[str, ...] = ("bc_breaking", "deprecation")

KIND_TITLES: dict[str, str] = {
    "bc_breaking": "BC-breaking", "deprecation": "Deprecations", "security": "Security",
    "regression": "Regressions", "highlight": "Highlights", "new_feature": "New features",
    "improvement": "Improvements", "performance": "Performance", "bug_fix": "Bug fixes",
    "docs": "Documentation", "developers": "Developers", "other": "Other",
}  # what readers see as a kind's heading, in every notifier

SUBSYSTEMS: tuple[str, ...] = (
    "compile", "export", "distributed", "quantization", "sparse", "nn", "optim", "autograd",
    "python_frontend", "linalg", "nested_tensor", "cuda", "rocm", "mps", "xpu", "cpu", "onnx",
    "jit", "fx", "mobile", "profiler", "data", "build", "cpp_frontend", "composability",
    "xla_runtime", "spmd", "lazy_tensor", "other",
)


def top_level(subsystem: str) -> str:
    """``distributed/fsdp`` → ``distributed``: finer ids extend a top-level one after a ``/``."""
    return subsystem.split("/", 1)[0]


class Frozen(BaseModel):
    # Validators are built on first use: a no-change poll or an offline command that never
    # makes an event does not pay for building every model's.
    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)


class Release(Frozen):
    """A GitHub release object: the fields this tool uses, typed; the rest kept as received so
    the store holds the raw record."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: int
    tag_name: str
    name: str | None = None
    body: str | None = None
    draft: bool = False
    prerelease: bool = False
    html_url: str = ""
    created_at: datetime | None = None
    published_at: datetime | None = None

    @property
    def title(self) -> str:
        return self.name or self.tag_name


class Item(Frozen):
    """One release-note entry as written: a bullet, a `### title` entry, or a highlight cell."""

    text: str
    section: tuple[str, ...] = ()
    prs: tuple[int, ...] = ()
    lead: str = ""  # the paragraph that introduces the list it stands in, a hint for its kind
    group: str = ""  # the group bullet, label or lead-in it stands under ("c10d", "In MPS:")
    group_depth: int = 0  # how many of ``section``'s last names are group bullets, not headings


class ClassifiedItem(Item):
    subsystem: str
    kind: str
    decided_by: DecidedBy = "heading"
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)  # how sure the subsystem is
    # The model's likeliest subsystems with their probabilities, most likely first, and those
    # of the APIs the item names: where an unsure item may belong (routing). None when sure.
    candidates: tuple[tuple[str, float], ...] | None = None


class Affect(Frozen):
    """One use, in a configured codebase, of an API an item changes: the contract's ``affects``
    entry (``path`` relative to ``root``, the ``--code`` directory or ``[impact] code`` entry)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    line: int
    code: str
    api: str  # the item's api (or environment requirement) this use touches
    root: str
    by_method_name: bool = False  # matched by method name only: the receiver's type is unknown
    # How sure: "breaks" (the change certainly reaches this line), "check" (it may), "mentions"
    # (a reference that does not call: shown only on request).
    tier: Tier = "breaks"
    why: str = ""  # one line a reader acts on
    source: Literal["notes", "package"] = "notes"  # the notes' words, or the package's API diff
    codebase: str = ""  # the configured codebase's name ([[impact.codebases]] name)
    release: str | None = None  # the release that makes the change, when several are read
    # The items an ignore comment on the line names (``watcher.impact.code.ignores``); not
    # part of the contract's JSON: a suppressed use leaves ``affects`` instead.
    ignore: tuple[str, ...] = Field(default=(), exclude=True)

    def to_json_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"path": self.path, "line": self.line, "code": self.code,
                                   "api": self.api, "root": self.root,
                                   "codebase": self.codebase or self.root, "tier": self.tier,
                                   "why": self.why, "source": self.source}
        if self.release is not None:
            data["release"] = self.release
        if self.by_method_name:
            data["by_method_name"] = True
        return data


class EventItem(Frozen):
    """An item as the contract's event JSON carries it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subsystem: str
    kind: str
    text: str
    section: list[str]
    prs: list[int]
    change: ChangeType = "added"
    old_text: str | None = None
    group: str = ""  # the group it stands under in the notes, for readers' context
    # None only in events recorded before release-watch said how sure it was.
    decided_by: DecidedBy | None = None
    confidence: float | None = None
    # Beyond the contract, only for a guess: [["distributed", 0.41], ["compile", 0.22]].
    candidates: list[tuple[str, float]] | None = None
    # Only with [impact] configured: the APIs the item changes and their uses in the code.
    apis: list[str] | None = None
    affects: list[Affect] | None = None
    # Uses of the item the team suppressed (an ignore comment, a baseline, "Not us"): counted,
    # never listed as claims.
    suppressed: int = 0
    # "package": an API change the notes do not mention, found by comparing the release's
    # package with the one before (``watcher.impact.reach.package``); only where it touches
    # the code.
    origin: Literal["notes", "package"] = "notes"

    @property
    def touches_code(self) -> bool:
        """A use in tier ``breaks`` or ``check``: a mention alone does not touch the code."""
        return any(use.tier != "mentions" for use in self.affects or ())

    @property
    def breaks_code(self) -> bool:
        """A BC-breaking or deprecation item with a use in the code: what readers see first."""
        return self.touches_code and self.kind in ATTENTION_KINDS


class Summary(Frozen):
    items: int
    by_subsystem: dict[str, int] = {}  # copied for each instance by pydantic
    by_kind: dict[str, int] = {}
    # Beyond the contract, only where the package was compared with the release before: its
    # API changes the notes do not mention that touch no configured code (``atlas diff`` lists
    # them; those that touch it are items of their own).
    unmentioned_api_changes: int = 0


class Previous(Frozen):
    """What a release was called before an ``edited`` or ``released`` event that renamed or
    re-tagged it (beyond the contract: only on such events)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str | None = None
    tag: str


class Event(Frozen):
    """What every notifier receives; ``model_dump(mode="json")`` is one JSONL line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    event: EventType
    repo: str
    release_id: int
    tag: str
    name: str | None
    url: str
    prerelease: bool
    published_at: datetime | None
    detected_at: datetime
    summary: Summary
    items: list[EventItem]
    # Beyond the contract, only where they apply: the name and tag before a rename, and on a
    # ``released`` event whose notes changed at promotion, those changes as an edit has them
    # (its ``items`` stay the whole release, for readers who never saw the pre-release).
    previous: Previous | None = None
    changes: list[EventItem] | None = None
    # Not in the event JSON: on an ``edited`` or ``deleted`` event, the release's items as
    # they now are (as last known, for a deletion), so a notifier can redraw the release's
    # first message from the release itself (``watcher.present.release_now``), not from the
    # changes alone. None on events recorded before events carried it.
    release_items: list[EventItem] | None = None

    def to_json_dict(self) -> dict[str, object]:
        data = self.model_dump(mode="json", exclude={"release_items"})
        for optional in ("previous", "changes"):
            if data[optional] is None:
                del data[optional]
        if not data["summary"]["unmentioned_api_changes"]:
            del data["summary"]["unmentioned_api_changes"]
        for item in [*data["items"], *data.get("changes", [])]:
            if item["old_text"] is None:
                del item["old_text"]
            if not item["group"]:
                del item["group"]  # optional beyond the contract: only where the notes group
            for optional in ("apis", "affects", "candidates"):
                if item[optional] is None:
                    del item[optional]  # only with [impact] configured; only for a guess
            if not item["suppressed"]:
                del item["suppressed"]  # only where the team suppressed a use
            if item.get("affects"):
                for use in item["affects"]:
                    if not use["by_method_name"]:
                        del use["by_method_name"]
        return data
