"""How events read to people, the same in every notifier: names not ids, plurals right, a
release's title as people say it, and guesses marked as guesses.

Pure functions over events and items; the console, Slack and digest renderers all call these,
so a reader sees the same words wherever the news reaches them.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache

from watcher.models import Affect, ChangeType, Event, EventItem, top_level
from watcher.present.counts import plural
from watcher.resources import subsystems_path
from watcher.untrusted import clean_line

UNSURE_BELOW = 0.5  # default ``min_confidence``: a subsystem guessed below this is marked "?"
CALLED_OUT = ("bc_breaking", "deprecation", "security", "regression", "highlight")
KIND_ORDER = (
    *CALLED_OUT,
    "new_feature",
    "improvement",
    "performance",
    "bug_fix",
    "docs",
    "developers",
    "other",
)  # most important first, wherever kinds are listed
PROJECTS = {"pytorch/pytorch": "PyTorch", "pytorch/xla": "PyTorch/XLA"}
VERBS = {
    "published": "released",
    "edited": "release notes edited",
    "released": "is now a full release",
    "deleted": "release deleted",
}
CHANGE_ORDER: tuple[ChangeType, ...] = ("added", "changed", "removed")  # how an edit lists them
CHANGE_SIGNS: dict[str, str] = {"added": "+", "removed": "-", "changed": "~"}
_RELEASE_WORDS = re.compile(
    r"\s*[-:\u2013]?\s*\b(?:release notes|release|notes)\s*$", re.IGNORECASE
)


@cache
def _names() -> dict[str, str]:
    """Subsystem id → display name, from ``config/subsystems.toml`` (read once, no regexes)."""
    with subsystems_path().open("rb") as handle:
        table = tomllib.load(handle)["subsystems"]
    return {key: str(entry.get("name", key)) for key, entry in table.items()}


def subsystem_name(subsystem: str) -> str:
    """``distributed/fsdp`` → ``FSDP``; ``compile`` → ``torch.compile``; unknown ids as given."""
    return _names().get(subsystem) or subsystem.rsplit("/", 1)[-1].replace("_", " ")


def top_name(subsystem: str) -> str:
    return subsystem_name(top_level(subsystem))


def is_unsure(item: EventItem, threshold: float = UNSURE_BELOW) -> bool:
    """A subsystem the model guessed with less confidence than the reader asked for."""
    return item.confidence is not None and item.confidence < threshold


def subsystem_tag(
    item: EventItem, threshold: float = UNSURE_BELOW, *, finer_only: bool = False
) -> str:
    """The name a reader sees next to an item: ``FSDP``, or ``torch.compile?`` for a guess."""
    name = "" if finer_only and "/" not in item.subsystem else subsystem_name(item.subsystem)
    if is_unsure(item, threshold):
        return f"{name or top_name(item.subsystem)}?"
    return name


def release_title(event: Event) -> str:
    """How people name the release: ``PyTorch 2.7.0``, ``PyTorch/XLA v2.0.0``."""
    tag = clean_line(event.tag).strip()
    name = _RELEASE_WORDS.sub("", clean_line(event.name).strip()).strip() or tag
    project = PROJECTS.get(event.repo.lower(), event.repo)
    repo_word = event.repo.rsplit("/", 1)[-1].lower()
    if repo_word not in name.lower() and project.lower() not in name.lower():
        name = f"{project} {name}"
    if not re.search(r"\d", name) and tag and tag not in name:
        name = f"{name} ({tag})"
    return name


def happened(event: Event) -> str:
    """What happened to the release, as its headline says after the title: ``released``,
    ``release notes edited (pre-release)``."""
    pre = " (pre-release)" if event.prerelease and event.event != "released" else ""
    return f"{VERBS[event.event]}{pre}"


def headline(event: Event) -> str:
    """``PyTorch 2.7.0 released``, ``PyTorch/XLA v2.0.0 release notes edited``."""
    return f"{release_title(event)} {happened(event)}"


def by_top_subsystem(items: Iterable[EventItem]) -> list[tuple[str, list[EventItem]]]:
    """Items per top-level subsystem, by the name readers see: the largest group first."""
    groups: dict[str, list[EventItem]] = {}
    for item in items:
        groups.setdefault(top_name(item.subsystem), []).append(item)
    return sorted(groups.items(), key=lambda pair: (-len(pair[1]), pair[0]))


def by_change(items: Iterable[EventItem]) -> list[tuple[ChangeType, list[EventItem]]]:
    """An edit's items per change, in ``CHANGE_ORDER``; changes with no item left out."""
    listed = list(items)
    picked = [
        (change, [item for item in listed if item.change == change]) for change in CHANGE_ORDER
    ]
    return [(change, members) for change, members in picked if members]


def changes_in_words(
    items: Iterable[EventItem], show_name: Callable[[str], str] = lambda name: name
) -> str:
    """``2 changed in Distributed, 1 added in torch.compile``, the most first; ``show_name``
    escapes the names for where they are shown."""
    counts = Counter((item.change, top_name(item.subsystem)) for item in items)
    return ", ".join(
        f"{count} {change} in {show_name(name)}" for (change, name), count in counts.most_common()
    )


# How the items of a release count, per (subsystem, kind, whether the subsystem is a guess):
# what a count line needs, small enough to remember beside a message and update with an edit.
Tally = Counter[tuple[str, str, bool]]


def tally(items: Iterable[EventItem], threshold: float = UNSURE_BELOW) -> Tally:
    return Counter((item.subsystem, item.kind, is_unsure(item, threshold)) for item in items)


def focus(subsystems: Iterable[str]) -> str | None:
    """The one top-level subsystem all items share (a channel filtered to it), if any."""
    tops = {top_level(subsystem) for subsystem in subsystems}
    return tops.pop() if len(tops) == 1 else None


def breakdown(counts: Tally) -> list[tuple[str, int]]:
    """Counts per subsystem, most first: by top-level name, or, when every item is of one
    subsystem, by its finer names (FSDP, c10d, DTensor), since "Distributed 87" says nothing
    to a channel that only gets distributed news."""
    live = {key: count for key, count in counts.items() if count > 0}
    shared = focus(subsystem for subsystem, _, _ in live)
    by_name: Counter[str] = Counter()
    for (subsystem, _, _), count in live.items():
        if shared is None:
            by_name[top_name(subsystem)] += count
        elif "/" in subsystem:
            by_name[subsystem_name(subsystem)] += count
        else:
            by_name[f"{subsystem_name(shared)} (general)"] += count
    return sorted(by_name.items(), key=lambda pair: (-pair[1], pair[0]))


def tally_line(counts: Tally) -> str:
    """``87 changes: FSDP 12 · c10d 30 · … · 3 unsure``."""
    parts = [f"{name} {count}" for name, count in breakdown(counts)]
    unsure = sum(count for (_, _, guess), count in counts.items() if guess and count > 0)
    if unsure:
        parts.append(f"{unsure} unsure")
    total = sum(count for count in counts.values() if count > 0)
    if not total:
        return "no change left in the notes"  # every item removed by edits since
    return f"{plural(total, 'change')}: {' · '.join(parts)}"


def count_line(items: Sequence[EventItem], threshold: float = UNSURE_BELOW) -> str:
    """``87 changes: FSDP 12 · c10d 30 · … · 3 unsure``."""
    return tally_line(tally(items, threshold))


def renamed(event: Event) -> str | None:
    """``name “PyTorch 2.9 RC1” → “PyTorch 2.9”, tag v2.9.0-rc1 → v2.9.0``: what a rename or
    re-tag changed, or None when the event changed neither."""
    was = event.previous
    if was is None:
        return None
    parts = []
    if was.name != event.name:
        parts.append(f"name “{clean_line(was.name or '')}” → “{clean_line(event.name or '')}”")
    if was.tag != event.tag:
        parts.append(f"tag {clean_line(was.tag)} → {clean_line(event.tag)}")
    return ", ".join(parts) or None


# ---- the impact analysis: "Affects your code", first in every notifier ----
AFFECTS_TITLE = "Affects your code"
USES_SHOWN = 3  # uses listed under an item before "+N more", in Slack and digests
TIER_TITLES: dict[str, str] = {"breaks": "Breaks", "check": "Check", "mentions": "Mentions"}
TIER_COUNTS: dict[str, str] = {"breaks": "break", "check": "to check"}  # "2 break, 1 to check"
MENTIONS_ARE = "imports, annotations, isinstance, marking decorators"  # what a mention is


def affects_title(items: int, uses: Mapping[str, int], files: int) -> str:
    """``Affects your code (2 items, 3 uses in 2 files: 2 break, 1 to check; 14 mentions)``:
    the uses that the changes reach (``breaks``) or may reach (``check``), then the mentions,
    which are counted, not listed."""
    touching = sum(uses.get(tier, 0) for tier in TIER_COUNTS)
    split = ", ".join(f"{uses[tier]} {word}" for tier, word in TIER_COUNTS.items()
                      if uses.get(tier))
    mentions = uses.get("mentions", 0)
    return (f"{AFFECTS_TITLE} ({plural(items, 'item')}, {plural(touching, 'use')} in "
            f"{plural(files, 'file')}: {split}"
            + (f"; {plural(mentions, 'mention')})" if mentions else ")"))


def tier_title(tier: str, uses: int, files: int) -> str:
    """``Breaks (3 uses in 2 files)``: a tier's heading, as ``release-watch impact`` says it."""
    return f"{TIER_TITLES[tier]} ({plural(uses, 'use')} in {plural(files, 'file')})"


def mentions_line(mentions: int, files: int) -> str:
    """``14 mentions in 9 files (imports, annotations, isinstance, marking decorators), not
    listed``: the one line the mentions get."""
    return f"{plural(mentions, 'mention')} in {plural(files, 'file')} ({MENTIONS_ARE}), not listed"


KIND_COUNTS: dict[str, tuple[str, str]] = {
    "highlight": ("highlight", "highlights"),
    "bc_breaking": ("BC-breaking change", "BC-breaking changes"),
    "deprecation": ("deprecation", "deprecations"),
    "new_feature": ("new feature", "new features"),
    "improvement": ("improvement", "improvements"),
    "bug_fix": ("bug fix", "bug fixes"),
    "performance": ("performance change", "performance changes"),
    "docs": ("documentation change", "documentation changes"),
    "developers": ("change for developers", "changes for developers"),
    "security": ("security fix", "security fixes"),
    "regression": ("regression", "regressions"),
    "other": ("other change", "other changes"),
}  # a count of one kind, as a reader says it: "1 deprecation", "2 BC-breaking changes"


def kind_count(count: int, kind: str) -> str:
    """``1 deprecation``, ``11 BC-breaking changes``: never "1 deprecations" nor a kind's
    heading lowercased ("1 bc-breaking")."""
    singular, many = KIND_COUNTS.get(kind, (f"{kind} change", f"{kind} changes"))
    return plural(count, singular, many)


def kinds_in_words(counts: Iterable[tuple[str, int]]) -> str:
    """``11 BC-breaking changes, 1 deprecation``: counts per kind, as given, none left out."""
    return ", ".join(kind_count(count, kind) for kind, count in counts if count)


def period_counts(events: int, changes: int, kinds: Mapping[str, int]) -> str:
    """``2 release events, 610 changes (11 BC-breaking changes, 1 deprecation)``: what a
    repository's part of a digest counts, the called-out kinds named."""
    called = kinds_in_words((kind, kinds.get(kind, 0)) for kind in CALLED_OUT)
    return (f"{plural(events, 'release event')}, {plural(changes, 'change')}"
            + (f" ({called})" if called else ""))


KIND_NAMES: dict[str, str] = {
    "highlight": "Highlight",
    "bc_breaking": "BC-breaking",
    "deprecation": "Deprecation",
    "new_feature": "New feature",
    "improvement": "Improvement",
    "bug_fix": "Bug fix",
    "performance": "Performance",
    "docs": "Documentation",
    "developers": "Developers",
    "security": "Security",
    "regression": "Regression",
    "other": "Other",
}  # one item's kind, as a reader says it ("Deprecation: …"); KIND_TITLES head sections


def unparsable_note(count: int, paths: Sequence[str], shown: int = 5) -> str:
    """``2 do not parse and were skipped: a.py, b.py and 3 more``."""
    more = count - shown
    return (
        f"{count} {'does' if count == 1 else 'do'} not parse and "
        f"{'was' if count == 1 else 'were'} skipped: {', '.join(paths[:shown])}"
        + (f" and {more} more" if more > 0 else "")
    )


def breaking(items: Iterable[EventItem]) -> list[EventItem]:
    """The BC-breaking and deprecation items with a use in the configured code."""
    return [item for item in items if item.breaks_code]


def use_place(use: Affect, *, named: bool = False) -> str:
    """``train/ckpt.py:42``; ``named`` (uses from several codebases): ``trainer:
    train/ckpt.py:42``."""
    place = f"{use.path}:{use.line}"
    return f"{use.codebase or use.root}: {place}" if named else place


def by_name_note(use: Affect) -> str:
    return " (by method name: the object's type is not known)" if use.by_method_name else ""


def uses_in_files(uses: Sequence[Affect]) -> str:
    """``19 uses in 12 files``, a file counted once per codebase it is in."""
    files = {(use.root, use.path) for use in uses}
    return f"{plural(len(uses), 'use')} in {plural(len(files), 'file')}"


def unmentioned_line(count: int) -> str | None:
    """What a release's package changed that its notes do not say and that touches none of
    the configured code, counted (``release-watch atlas diff`` lists them)."""
    if not count:
        return None
    return (f"{plural(count, 'more API change')} in the package that the notes do not "
            "mention, none touching your code (`release-watch atlas diff` lists them)")
