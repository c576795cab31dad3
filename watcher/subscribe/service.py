"""One ``/release-watch`` command, answered: the slash command's payload (as Slack sends it,
over Socket Mode or to the request URL) in, the ephemeral answer out, the store changed on the
way for ``subscribe`` and ``unsubscribe``. The answer says exactly what the channel will get.

The store and the clock are handed in; the settings are read for every command, so a reloaded
configuration (SIGHUP) applies to the next one.

Slack shows "failed" when the answer is not back within 3 seconds, whatever happened. So a
command waits at most ``BUDGET`` seconds in all, one at a time, for the store's write lock (a
poll recording what it found holds it); past that its transaction never began, and the answer
says the store was busy, what kept it busy (another command, the daemon's poll job, another
program), and that nothing changed. Reads (``list``) never wait: the store is in WAL mode.
A command Slack could not have sent (``watcher.subscribe.command``) is refused before the lock
is waited for. A signed request's signature is recorded in the store before anything it asks
for is done (``respond_once``), so a replay does nothing. (Acking at once and answering
through ``response_url`` would instead leave a change in flight that Slack's user cannot see,
and lose it on a SIGTERM.)
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from watcher.errors import StoreBusy, WatcherError
from watcher.store import Subscription, writer_activity
from watcher.subscribe.command import Answer, SlashCommand
from watcher.subscribe.parse import (
    Filters,
    Help,
    ListSubscriptions,
    Subscribe,
    Unclear,
    Unsubscribe,
    escape,
    parse_command,
)
from watcher.subscribe.replies import help_text, list_text, words_of
from watcher.subscribe.settings import CommandSettings

if TYPE_CHECKING:
    from watcher.store import Store

logger = logging.getLogger(__name__)

BUDGET = 2.0  # seconds a command may wait for the store, of the 3 Slack waits for its answer
ANOTHER_COMMAND = "another /release-watch command was being answered"
OTHER_PROGRAM = "another program held its write lock (no poll, delivery or digest was running)"


def changes_store(payload: Mapping[str, Any], settings: CommandSettings) -> bool:
    """Whether the command asks for a change (``subscribe``, ``unsubscribe``)."""
    parsed = parse_command(SlashCommand.from_payload(payload).text, settings.vocabulary)
    return isinstance(parsed, Subscribe | Unsubscribe)


def busy(reason: str) -> str:
    """The answer when the store could not be written in time, saying what held it."""
    return (
        f"release-watch could not change its store in time ({reason}), so nothing was "
        "changed. Try again in a moment."
    )


class SlashCommands:
    def __init__(
        self,
        store: Store,
        settings: Callable[[], CommandSettings],
        clock: Callable[[], datetime],
        *,
        budget: float = BUDGET,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """``store``: a connection of the commands' own (its lock wait is set here)."""
        self.store = store
        self.settings = settings
        self.clock = clock
        self.budget = budget
        self.monotonic = monotonic
        self._one_at_a_time = threading.Lock()

    def respond(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """``answer`` as the body Slack shows, within ``budget`` seconds and a little; whatever
        fails is a log line and an answer saying so, never a command half done (each change is
        one transaction)."""
        answered = self._respond(payload, None)
        assert answered is not None  # only a signed request can have been seen before
        return answered

    def respond_once(
        self, payload: Mapping[str, Any], key: str, until: float, *, changes_only: bool = False
    ) -> dict[str, Any] | None:
        """``respond``, once per ``key`` (a request's signature, stale from the epoch second
        ``until``): the key is recorded in the store before anything is done, and None is the
        answer when the store saw it before (a replay: nothing is done). ``changes_only``:
        only a command that changes the store is kept to once (a Socket Mode envelope
        delivered again: a ``list`` is answered again, and never waits for the store)."""
        if changes_only and not changes_store(payload, self.settings()):
            return self._respond(payload, None)
        return self._respond(payload, (key, until))

    def _respond(
        self, payload: Mapping[str, Any], once: tuple[str, float] | None
    ) -> dict[str, Any] | None:
        command = SlashCommand.from_payload(payload)
        refused = command.problem()
        if refused is not None:  # at once: neither the lock nor the store is waited for
            logger.info("slack: /release-watch refused: %s", refused)
            return Answer(refused).payload()
        start = self.monotonic()
        if not self._one_at_a_time.acquire(timeout=self.budget):
            logger.warning(
                "slack: /release-watch answered busy: %s for %.1fs", ANOTHER_COMMAND, self.budget
            )
            return Answer(busy(ANOTHER_COMMAND)).payload()
        try:
            left = self.budget - (self.monotonic() - start)
            self.store.db.wait_at_most(max(0.05, left))
            if once is not None and not self.store.first_sighting(
                once[0], self.clock().timestamp(), once[1]
            ):
                return None
            return self.answer(payload).payload()
        except StoreBusy:
            reason = self._holder()
            logger.warning(
                "slack: /release-watch answered busy after %.1fs: %s; nothing was changed",
                self.monotonic() - start,
                reason,
            )
            return Answer(busy(reason)).payload()
        except WatcherError as error:
            logger.error("slack: /release-watch failed: %s", error)
        except Exception:
            logger.exception("slack: /release-watch failed unexpectedly")
        finally:
            self._one_at_a_time.release()
        return Answer(
            "Sorry, release-watch could not do that (its log says why); nothing was changed."
        ).payload()

    def _holder(self) -> str:
        """Who holds the store's write lock, as far as can be told: the holder of its writer
        lock (a poll, a delivery run, a digest), else some other program."""
        doing = writer_activity(self.store.db.path.parent)
        return f"{doing} held its write lock" if doing else OTHER_PROGRAM

    def answer(self, payload: Mapping[str, Any]) -> Answer:
        command = SlashCommand.from_payload(payload)
        refused = command.problem()
        if refused is not None:
            return Answer(refused)
        settings = self.settings()
        parsed = parse_command(command.text, settings.vocabulary)
        if isinstance(parsed, Help):
            return Answer(help_text(command, settings))
        if isinstance(parsed, Unclear):
            return Answer(f"{parsed.message}\n`{escape(command.command)} help` shows how.")
        if isinstance(parsed, ListSubscriptions):
            return Answer(
                list_text(command, settings, self.store.subscriptions(command.channel_id))
            )
        refusal = _refusal(command, settings, needs_post=isinstance(parsed, Subscribe))
        if refusal:
            return Answer(refusal)
        if isinstance(parsed, Subscribe):
            return self._subscribe(command, settings, parsed)
        return self._unsubscribe(command, settings, parsed)

    def _subscribe(
        self, command: SlashCommand, settings: CommandSettings, wanted: Subscribe
    ) -> Answer:
        filters = wanted.filters
        new = Subscription(
            channel=command.channel_id,
            channel_name=command.channel_name,
            team=command.team_id or None,
            repos=filters.repos,
            subsystems=filters.subsystems,
            kinds=filters.kinds,
            digest_schedule=wanted.digest,
            created_at=self.clock(),
            created_by=command.user_id,
        )
        existing = self.store.subscriptions(command.channel_id)
        same = [sub for sub in existing if sub.same_filters(new)]
        if any(sub.digest_schedule == new.digest_schedule for sub in same):
            return Answer(
                f"{command.channel} is already subscribed to "
                f"{words_of(new, settings)} (number {same[0].id} in `list`)."
            )
        with self.store.transaction():
            self.store.remove_subscriptions([sub.id for sub in same])  # a new schedule
            stored = self.store.add_subscription(new)
        logger.info(
            "slack: %s subscribed channel %s to %s (%s)",
            command.user_id,
            command.channel_id,
            words_of(stored, settings),
            stored.notifier_name,
        )
        return Answer(
            _subscribed_text(
                command, settings, stored, replaced=bool(same), others=len(existing) - len(same)
            )
        )

    def _unsubscribe(
        self, command: SlashCommand, settings: CommandSettings, wanted: Unsubscribe
    ) -> Answer:
        mine = self.store.subscriptions(command.channel_id)
        if wanted.everything:
            chosen = mine
        elif wanted.ids:
            chosen = [sub for sub in mine if sub.id in wanted.ids]
            strangers = sorted(set(wanted.ids) - {sub.id for sub in chosen})
            if strangers:
                return Answer(
                    f"{command.channel} has no subscription number "
                    f"{', '.join(map(str, strangers))}. " + list_text(command, settings, mine)
                )
        else:
            chosen = [sub for sub in mine if _matches(sub, wanted.filters)]
        if not chosen:
            return Answer(_nothing_to_remove(command, settings, mine))
        removed = self.store.remove_subscriptions([sub.id for sub in chosen])
        for sub in removed:
            logger.info(
                "slack: %s unsubscribed channel %s from %s (%s)",
                command.user_id,
                command.channel_id,
                words_of(sub, settings),
                sub.notifier_name,
            )
        lines = [f"Unsubscribed {command.channel} from:"]
        lines += [f"• {words_of(sub, settings)}" for sub in removed]
        lines.append("Nothing more of these is posted here, including anything still queued.")
        lines += _read_only_note(command, settings)
        return Answer("\n".join(lines))


def _matches(sub: Subscription, filters: Filters | None) -> bool:
    if filters is None:
        return False
    probe = sub.model_copy(
        update={"repos": filters.repos, "subsystems": filters.subsystems, "kinds": filters.kinds}
    )
    return sub.same_filters(probe)


def _refusal(command: SlashCommand, settings: CommandSettings, *, needs_post: bool) -> str | None:
    """Why this person may not change this channel's subscriptions here, or None."""
    if not command.channel_id or command.channel_id.startswith("D"):
        return (
            "Subscriptions are made in the channel they post to: type the command in a "
            "channel, not a direct message."
        )
    if not settings.may_change(command.user_id):
        admins = ", ".join(f"<@{escape(admin)}>" for admin in settings.admins)
        return (
            f"Only the release-watch admins ({admins}) can change subscriptions; "
            f"`{escape(command.command)} list` shows what this channel gets."
        )
    if needs_post and not settings.can_post:
        return (
            "This release-watch cannot post to channels: it has no SLACK_BOT_TOKEN. "
            "Ask whoever runs it to set one; nothing was subscribed."
        )
    return None


def _subscribed_text(
    command: SlashCommand,
    settings: CommandSettings,
    sub: Subscription,
    *,
    replaced: bool,
    others: int,
) -> str:
    lines = [f"Subscribed {command.channel} to {words_of(sub, settings)}."]
    if sub.digest_schedule is None:
        lines.append(
            "From the next release found on, each release with such items gets one "
            "message here listing only those items (each whole in its thread); "
            "nothing already announced is posted again."
        )
    else:
        lines.append(
            "From now on such items are collected and posted here as one digest "
            "message (each item whole in its thread); an empty period posts nothing."
        )
    if sub.subsystems:  # routing leaves out guesses below min_confidence (0.5)
        lines.append("Items whose subsystem is only a weak guess of the classifier are left out.")
    if replaced:
        lines.append("This replaces the same subscription's earlier schedule.")
    if others:
        lines.append(
            f"{command.channel} has {others} other subscription"
            f"{'s' if others > 1 else ''}; a release matching several is posted "
            "once for each."
        )
    lines.append(
        "The app must be a member of this channel to post (`/invite` it if it is not). "
        f"Undo: `{escape(command.command)} unsubscribe {sub.id}`."
    )
    return "\n".join(lines)


def _read_only_note(command: SlashCommand, settings: CommandSettings) -> list[str]:
    configured = [
        c for c in settings.configured if c.posts_to(command.channel_id, command.channel_name)
    ]
    if not configured:
        return []
    names = ", ".join(f"`{escape(c.name)}`" for c in configured)
    return [
        f"Still posting here from release-watch's config file (read-only from Slack: ask "
        f"whoever runs it): {names}."
    ]


def _nothing_to_remove(
    command: SlashCommand, settings: CommandSettings, mine: list[Subscription]
) -> str:
    lines = (
        [f"No subscription of {command.channel} asks for exactly that."]
        if mine
        else [f"{command.channel} has no subscriptions to remove."]
    )
    lines += _read_only_note(command, settings)
    if mine:
        lines.append(list_text(command, settings, mine))
    return "\n".join(lines)
