"""Which notifier gets which event, and which of its items: the per-notifier filters, and what
its Slack channel muted or snoozed with a button (``NotifierConfig.quiet``)."""

from __future__ import annotations

from watcher.delivery.events import with_items
from watcher.delivery.notifier import NotifierConfig
from watcher.models import ATTENTION_KINDS, Event, EventItem


def _names(subsystem: str, wanted: list[str]) -> bool:
    return any(subsystem == w or subsystem.startswith(w + "/") for w in wanted)


def _subsystem_wanted(item: EventItem, wanted: list[str], min_confidence: float) -> bool:
    """A channel that asked for a subsystem gets its items, but not a guess below its
    ``min_confidence`` (an item whose confidence is unknown, from before it was recorded,
    counts as sure). A BC-breaking or deprecation item is never dropped for being unsure: it
    goes to the channel of every subsystem it plausibly belongs to, its guess, the model's
    other candidates and those of the APIs it names (``EventItem.candidates``), still below the
    channel's ``min_confidence``, so it shows as unsure there."""
    if item.confidence is not None and item.confidence < min_confidence:
        if item.kind not in ATTENTION_KINDS:
            return False
        return any(_names(name, wanted)
                   for name in [item.subsystem, *(name for name, _ in item.candidates or ())])
    return _names(item.subsystem, wanted)


def route(event: Event, config: NotifierConfig) -> Event | None:
    """The event as ``config``'s notifier should see it, or None when it should not see it.

    A message never holds an item its filters exclude, and an event with no item left after
    the subsystem/kind filters and the channel's mutes is not sent at all (so a deletion
    reaches only notifiers that do not filter by item). A snoozed release's events are not
    sent at all.
    """
    quiet = config.quiet
    if config.repos is not None and event.repo.lower() not in {r.lower() for r in config.repos}:
        return None
    if quiet.snoozes(event.repo, event.release_id):
        return None  # "Snooze this release": no edit, promotion, deletion or digest entry
    if config.events is not None and event.event not in config.events:
        return None
    if not config.prereleases and event.prerelease:
        return None
    if (config.subsystems is None and config.kinds is None and not config.affects_only
            and (not quiet.muted or not event.items)):  # a mute keeps no deletion out
        return event

    def wanted(item: EventItem) -> bool:
        # An item that touches the team's code is what an affects_only channel is for,
        # whatever subsystem it is filed under (or guessed to be).
        return ((config.subsystems is None or (config.affects_only and item.touches_code)
                 or _subsystem_wanted(item, config.subsystems, config.min_confidence))
                and (config.kinds is None or item.kind in config.kinds)
                and (not config.affects_only or item.touches_code)
                and not quiet.mutes(item.subsystem))

    items = [item for item in event.items if wanted(item)]
    if not items:
        return None
    changes = [item for item in event.changes or () if wanted(item)]
    now = None if event.release_items is None else [
        item for item in event.release_items if wanted(item)]
    if (len(items) == len(event.items) and len(changes) == len(event.changes or ())
            and now == event.release_items):
        return event
    return with_items(event, items, changes).model_copy(update={"release_items": now})
