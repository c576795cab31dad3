"""The notifier port: the interface the core delivers through and every notifier implements.

The core owns it (ports and adapters, as gidgethub's ``abc`` does): a notifier is a ``Notifier``
subclass in any installed package (``handlers/`` holds the built-in ones), registered in the
``release_watch.notifiers`` entry-point group (``plugins``), with a ``Config`` (a
``NotifierConfig`` subclass, ``extra="forbid"``) for its keys and ``secret_field``s for its
secrets (``secrets``). ``send`` delivers one event or raises ``HandlerError``; the delivery then
stays queued. Only the composition root (``watcher.app``) builds notifiers.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from watcher.config import Secrets
from watcher.delivery.quiet import NOT_QUIET, Quiet
from watcher.delivery.secrets import missing_secrets
from watcher.models import KINDS, SUBSYSTEMS, Event
from watcher.present import DIGEST_MAX_ITEMS, UNSURE_BELOW

if TYPE_CHECKING:
    from watcher.present import Digest

__all__ = ["HandlerContext", "MemoryProgress", "Notifier", "NotifierConfig", "Progress"]

EVENT_TYPES = ("published", "edited", "released", "deleted")


class NotifierConfig(BaseModel):
    """Keys every notifier accepts; a handler's own ``Config`` subclass adds its keys."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    type: str
    mode: Literal["immediate", "digest"] = Field(
        default="immediate",
        description="immediate: send each event as it is found; digest: queue events and send "
                    "one digest on digest_schedule or with `release-watch digest`")
    digest_schedule: str | None = Field(
        default=None, description='cron for digests, e.g. "0 9 * * MON" (with mode = "digest")')
    digest_timezone: str = Field(default="UTC", description="timezone of digest_schedule")
    send_empty_digest: bool = Field(
        default=False, description="send a digest saying nothing happened when nothing did")
    digest_max_items: int = Field(
        default=DIGEST_MAX_ITEMS, ge=1, le=5_000,
        description="items a digest shows whole, most important first; the rest are counted, "
                    "with links to the release notes that hold them")
    repos: list[str] | None = Field(default=None, description="only these OWNER/NAME repos")
    subsystems: list[str] | None = Field(
        default=None, description="only items of these subsystems (top-level ids or finer)")
    kinds: list[str] | None = Field(default=None, description="only items of these kinds")
    events: list[str] | None = Field(default=None, description="only these event types")
    prereleases: bool = Field(default=True, description="also announce pre-releases")
    affects_only: bool = Field(
        default=False, description="only items that touch the [impact] code (an event with "
                                   "none is not sent)")
    min_confidence: float = Field(
        default=UNSURE_BELOW, ge=0.0, le=1.0,
        description="a subsystem guessed with less confidence is shown as a guess "
                    "(\"compile?\"), and with `subsystems` set, such items are left out")
    # Secret field → the environment variable it was to be read from (set by notifier_config).
    _secret_sources: dict[str, str] = PrivateAttr(default_factory=dict)
    # What its Slack channel muted and snoozed (buttons), from the store for each job; never
    # from a file.
    _quiet: Quiet = PrivateAttr(default=NOT_QUIET)

    @property
    def secret_sources(self) -> dict[str, str]:
        return self._secret_sources

    @property
    def quiet(self) -> Quiet:
        return self._quiet

    def quieted(self, quiet: Quiet) -> NotifierConfig:
        """A copy that routes with ``quiet`` (``routing.route``)."""
        copy = self.model_copy()
        copy._quiet = quiet
        return copy

    @model_validator(mode="after")
    def _schedule_goes_with_digest(self) -> NotifierConfig:
        if self.digest_schedule is not None:
            # With mode = "immediate" the schedule is unused (config check says so), not an
            # error: the contract's own example sets both.
            fields = self.digest_schedule.split()
            if len(fields) != 5:
                raise ValueError(f"digest_schedule {self.digest_schedule!r} is not a 5-field "
                                 "cron expression (minute hour day month weekday)")
        return self

    @field_validator("subsystems")
    @classmethod
    def _known_subsystems(cls, values: list[str] | None) -> list[str] | None:
        for value in values or ():
            if value.split("/", 1)[0] not in SUBSYSTEMS:
                raise ValueError(f"{value!r} is not a subsystem id ({', '.join(SUBSYSTEMS)})")
        return values

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, values: list[str] | None) -> list[str] | None:
        for value in values or ():
            if value not in KINDS:
                raise ValueError(f"{value!r} is not a kind ({', '.join(KINDS)})")
        return values

    @field_validator("events")
    @classmethod
    def _known_events(cls, values: list[str] | None) -> list[str] | None:
        for value in values or ():
            if value not in EVENT_TYPES:
                raise ValueError(f"{value!r} is not an event type ({', '.join(EVENT_TYPES)})")
        return values


@dataclass
class HandlerContext:
    """What a handler may need from the composition root; nothing global."""

    secrets: Secrets
    base_dir: Path
    stdout: IO[str]
    slack_api_url: str = "https://slack.com/api/"
    # ``[impact] link``: a use's link, "{path}" and "{line}" filled in; None: uses unlinked.
    code_link: str | None = None
    # Each codebase's link template by its name (``Affect.codebase``): a use links into its
    # own codebase's repository (``link_template``).
    code_links: dict[str, str] = field(default_factory=dict)
    # The watched repos in the config's order: a digest lists its repositories in it.
    watch_order: tuple[str, ...] = ()
    sleep: Callable[[float], None] = time.sleep
    monotonic: Callable[[], float] = time.monotonic
    extra: dict[str, Any] = field(default_factory=dict)
    # True once the run is stopping (the daemon got SIGTERM): a delivery of several calls
    # starts no new one, so a stop is never cut short in the middle of a long thread; what
    # went out is saved and the next run resumes after it. ``bool()`` is False: never stopping.
    stopping: Callable[[], bool] = bool

    def link_template(self, codebase: str) -> str | None:
        """The link template of a use's codebase (``Affect.codebase``): its own, never another
        codebase's; ``code_link`` when no codebase names one (a context built without them)."""
        return self.code_links.get(codebase) if self.code_links else self.code_link


class Progress(Protocol):
    """A delivery's own persistent memory. A handler that needs several calls for one delivery
    (a Slack parent and its thread replies) saves after each, so a retry resumes where the
    last attempt stopped instead of posting the start again.

    ``recall``/``remember`` are the notifier's memory across deliveries (where a release's
    first message went, so its edits can follow in its thread)."""

    @property
    def state(self) -> dict[str, Any]: ...

    def save(self, **updates: Any) -> None: ...

    def recall(self, key: str) -> dict[str, Any] | None: ...

    def remember(self, key: str, value: dict[str, Any]) -> None: ...


class MemoryProgress:
    """Progress kept in memory only: for previews and one-off sends."""

    def __init__(self) -> None:
        self._state: dict[str, Any] = {}
        self._memory: dict[str, dict[str, Any]] = {}

    @property
    def state(self) -> dict[str, Any]:
        return self._state

    def save(self, **updates: Any) -> None:
        self._state.update(updates)

    def recall(self, key: str) -> dict[str, Any] | None:
        return self._memory.get(key)

    def remember(self, key: str, value: dict[str, Any]) -> None:
        self._memory[key] = value


class Notifier(ABC):
    """Sends events somewhere. ``send`` raises ``HandlerError`` when it could not deliver; the
    delivery then stays queued. It must not return before the event is safely delivered."""

    Config: ClassVar[type[NotifierConfig]] = NotifierConfig

    def __init__(self, config: NotifierConfig, context: HandlerContext) -> None:
        self.config = config
        self.context = context

    @property
    def name(self) -> str:
        return self.config.name

    @abstractmethod
    def send(self, event: Event, progress: Progress) -> None: ...

    def send_digest(self, digest: Digest, progress: Progress) -> None:
        """Deliver a digest; by default each of its events in turn, resuming after the last."""
        done = int(progress.state.get("events_sent", 0))
        for index, event in enumerate(digest.events[done:], start=done):
            self.send(event, MemoryProgress())
            progress.save(events_sent=index + 1)

    def problems(self) -> list[str]:
        """What would stop delivery, found without sending anything (a missing token, a
        malformed URL): ``config check`` lists these and ``run`` refuses to start on any.
        Subclasses extend the list; the base reports required secrets that are unset."""
        return missing_secrets(self.config, self.config.secret_sources)

    def preview(self, event: Event) -> str:
        """What ``send`` would deliver, for ``--dry-run``."""
        from watcher.present import format_event

        return format_event(event, self.config.min_confidence)

    def preview_digest(self, digest: Digest) -> str:
        from watcher.present import format_digest

        return format_digest(digest, self.config.min_confidence)

    def close(self) -> None:  # noqa: B027 - optional hook, most handlers hold nothing open
        """Release what ``send`` opened; called once at the end of a run."""
