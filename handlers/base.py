"""The notifier interface every handler implements, and its entry-point loader."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import IO, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from watcher.config import Secrets, describe_validation_error
from watcher.errors import ConfigError
from watcher.models import KINDS, SUBSYSTEMS, Event

ENTRY_POINT_GROUP = "release_watch.notifiers"
EVENT_TYPES = ("published", "edited", "released", "deleted")


class NotifierConfig(BaseModel):
    """Keys every notifier accepts; a handler's own ``Config`` subclass adds its keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    type: str
    mode: Literal["immediate"] = Field(
        default="immediate", description="immediate: send each event as it is found")
    repos: list[str] | None = Field(default=None, description="only these OWNER/NAME repos")
    subsystems: list[str] | None = Field(
        default=None, description="only items of these subsystems (top-level ids or finer)")
    kinds: list[str] | None = Field(default=None, description="only items of these kinds")
    events: list[str] | None = Field(default=None, description="only these event types")
    prereleases: bool = Field(default=True, description="also announce pre-releases")

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
    extra: dict[str, Any] = field(default_factory=dict)


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
    def send(self, event: Event) -> None: ...

    def close(self) -> None:  # noqa: B027 - optional hook, most handlers hold nothing open
        """Release what ``send`` opened; called once at the end of a run."""


def available_types() -> list[str]:
    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))


def notifier_class(type_name: str) -> type[Notifier]:
    matches = entry_points(group=ENTRY_POINT_GROUP, name=type_name)
    if not matches:
        raise ConfigError(f"unknown notifier type {type_name!r}; installed types: "
                          f"{', '.join(available_types()) or 'none (is release-watch installed?)'}")
    loaded = next(iter(matches)).load()
    if not (isinstance(loaded, type) and issubclass(loaded, Notifier)):
        raise ConfigError(f"entry point {type_name!r} does not name a Notifier class")
    return loaded


def notifier_config(raw: dict[str, Any], source: str) -> tuple[type[Notifier], NotifierConfig]:
    cls = notifier_class(str(raw.get("type")))
    try:
        return cls, cls.Config.model_validate(raw)
    except ValidationError as error:
        where = f"{source}: notifier {raw.get('name')!r}"
        raise ConfigError(describe_validation_error(error, where)) from None
