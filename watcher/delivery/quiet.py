"""What a Slack channel asked not to get any more, with a button on a release's message: the
subsystems it muted and the releases it snoozed. Kept in the store per channel
(``rw_channel_quiet``), attached to every notifier posting to that channel for each job, and
applied where every event is routed (``routing.route``), so a click takes effect from the next
event on, whichever notifier (a configured one or a ``/release-watch`` subscription) posts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol


def release_ref(repo: str, release_id: int) -> str:
    """How a snooze names a release: ``pytorch/pytorch#123456`` (the repo's case ignored)."""
    return f"{repo.lower()}#{release_id}"


@dataclass(frozen=True)
class Quiet:
    """``muted``: top-level subsystem ids whose items are left out; ``snoozed``: releases
    (``release_ref``) none of whose events (edits, promotion, deletion, digest entries)
    are sent."""

    muted: frozenset[str] = frozenset()
    snoozed: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.muted or self.snoozed)

    def mutes(self, subsystem: str) -> bool:
        return subsystem.split("/", 1)[0] in self.muted

    def snoozes(self, repo: str, release_id: int) -> bool:
        return release_ref(repo, release_id) in self.snoozed


NOT_QUIET = Quiet()


class QuietRow(Protocol):
    """A row of the store's ``rw_channel_quiet`` (``watcher.store.quiet.QuietRow``)."""

    @property
    def channel(self) -> str: ...
    @property
    def channel_name(self) -> str: ...
    @property
    def what(self) -> str: ...
    @property
    def target(self) -> str: ...


def channel_quiet(entries: Iterable[QuietRow]) -> dict[str, Quiet]:
    """Each channel's ``Quiet``, by its id and by its name (``#`` left off): a configured
    notifier may name its channel either way."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for entry in entries:
        for name in {entry.channel, entry.channel_name} - {""}:
            muted, snoozed = found.setdefault(name, (set(), set()))
            (muted if entry.what == "mute" else snoozed).add(entry.target)
    return {name: Quiet(frozenset(muted), frozenset(snoozed))
            for name, (muted, snoozed) in found.items()}
