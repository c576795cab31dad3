"""Configuration: the TOML file merged over the built-in defaults, validated strictly.

A misspelled key is an error (``extra="forbid"``), never silently ignored. Secrets do not live in
the file: they come from the environment (see ``Secrets``) and are ``SecretStr`` everywhere.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from watcher.errors import ConfigError
from watcher.resources import default_config_path
from watcher.untrusted import escape_controls

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
REPO_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def parse_duration(value: object) -> float:
    """``"30s"``, ``"10m"``, ``"1h"``, ``"2d"`` or a number of seconds → seconds."""
    if isinstance(value, bool):
        raise ValueError("a duration is written like 30s, 10m or 1h")
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a duration; write it like 30s, 10m, 1h or 7d")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"]


def format_duration(seconds: float) -> str:
    """Seconds → the way people write them in the config: ``600`` → ``"10m"``, ``90`` → ``"90s"``,
    ``0.5`` → ``"500ms"``; the largest unit that divides evenly, so ``parse_duration`` reads it
    back to the same number."""
    for unit in ("d", "h", "m", "s", "ms"):
        count = seconds / _UNIT_SECONDS[unit]
        if count >= 1 and abs(count - round(count)) < 1e-9:
            return f"{round(count)}{unit}"
    return f"{seconds:g}s"


# Read as seconds; shown (config check, logs) as written: "10m", not 600.0 or 0:10:00.
Duration = Annotated[float, BeforeValidator(parse_duration),
                     PlainSerializer(format_duration, return_type=str, when_used="json")]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GitHubConfig(Section):
    api_url: str
    per_page: int = Field(ge=1, le=100)
    max_pages: int = Field(ge=1, le=100)
    timeout: Duration = Field(gt=0)
    retries: int = Field(ge=0, le=10)
    backoff: Duration = Field(ge=0)
    max_rate_limit_wait: Duration = Field(ge=0)
    # GitHub's secondary limits: at most 100 concurrent requests (REST and GraphQL together;
    # one connection pool of this size carries both) and 900 points a minute per endpoint.
    concurrency: int = Field(ge=1, le=64)
    max_requests_per_minute: int = Field(ge=1, le=900)
    graphql_threshold: int = Field(ge=0)
    graphql_batch: int = Field(ge=1, le=100)
    deep_scan: Duration = Field(ge=0)  # 0: never
    deep_scan_pages: int = Field(ge=1, le=100)

    @field_validator("api_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")


class StoreConfig(Section):
    path: str
    # Events older than this lose their body (their id stays, so a change is never announced
    # twice); the records of releases still listed are kept whatever their age.
    retention: Duration = Field(default=365 * 86400.0, ge=3600)


class PollConfig(Section):
    interval: Duration = Field(ge=1)
    jitter: Duration = Field(ge=0)
    retry_interval: Duration = Field(ge=1)
    shutdown_timeout: Duration = Field(ge=0)
    lock_wait: Duration = Field(ge=0)
    first_run_announce: int = Field(ge=0)
    max_body_chars: int = Field(ge=1000)
    # Items past this many in one release are summed up in one item (the release's link).
    max_items_per_release: int = Field(ge=1)
    # status --check: a message undelivered this long is unhealthy; None: 3 poll intervals.
    max_delivery_age: Duration | None = Field(default=None, ge=1)

    @property
    def delivery_age_limit(self) -> float:
        return self.max_delivery_age or 3 * self.interval


class RepoConfig(Section):
    name: str
    include_prereleases: bool = True
    first_run_announce: int | None = Field(default=None, ge=0)  # None: poll.first_run_announce

    @field_validator("name")
    @classmethod
    def _owner_slash_name(cls, value: str) -> str:
        if not REPO_NAME.match(value):
            raise ValueError(f"{value!r} is not OWNER/NAME")
        return value


class OrgConfig(Section):
    """Watch every non-archived repository of an organisation (its list refreshed rarely)."""

    name: str
    include: list[str] = Field(default_factory=lambda: ["*"])  # fnmatch on the repo name
    exclude: list[str] = Field(default_factory=list)
    include_prereleases: bool = True
    refresh: Duration = Field(default=86400.0, ge=60)

    @field_validator("name")
    @classmethod
    def _org_name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*", value):
            raise ValueError(f"{value!r} is not an organisation name")
        return value


class SlackConfig(Section):
    api_url: str


class ClassifyRule(Section):
    subsystem: str
    patterns: list[str] = Field(min_length=1)

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"pattern {pattern!r} is not a valid regex: {error}") from None
        return patterns


class ClassifyConfig(Section):
    headings: dict[str, str]
    rules: list[ClassifyRule]
    # None: on when GITHUB_TOKEN is set (GitHub's GraphQL API needs one), off without.
    use_pr_labels: bool | None = None
    label_map: dict[str, str]


class ImpactConfig(Section):
    """``[impact]``: the codebases whose use of PyTorch each release is checked against."""

    code: list[str] = Field(default_factory=list)  # directories; relative to the config file
    # A use's link: "{path}" (relative to its code root) and "{line}" are filled in.
    link: str | None = None

    @field_validator("link")
    @classmethod
    def _link_is_a_template(cls, link: str | None) -> str | None:
        if link is not None and not link.startswith(("https://", "http://")):
            raise ValueError(f"impact.link {link!r} must be an http(s) URL with {{path}} "
                             "and {line} in it")
        if link is not None and "{path}" not in link:
            raise ValueError("impact.link needs {path} (and usually #L{line}) in it")
        return link


class Config(Section):
    github: GitHubConfig
    store: StoreConfig
    poll: PollConfig
    repos: list[RepoConfig]
    orgs: list[OrgConfig] = Field(default_factory=list)
    slack: SlackConfig
    classify: ClassifyConfig
    impact: ImpactConfig = Field(default_factory=ImpactConfig)
    notifiers: list[dict[str, Any]]
    # Where relative paths in the file (a jsonl notifier's path, store.path) are anchored.
    base_dir: Path = Field(default_factory=Path.cwd, exclude=True)
    source: str = Field(default="built-in defaults", exclude=True)

    @field_validator("repos")
    @classmethod
    def _unique_repos(cls, repos: list[RepoConfig]) -> list[RepoConfig]:
        names = [repo.name.lower() for repo in repos]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"repo listed twice: {', '.join(duplicates)}")
        return repos

    @model_validator(mode="after")
    def _something_to_watch(self) -> Config:
        if not self.repos and not self.orgs:
            raise ValueError("nothing to watch: add [[repos]] or [[orgs]]")
        return self

    @field_validator("notifiers")
    @classmethod
    def _named_and_typed(cls, notifiers: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen: set[str] = set()
        for index, notifier in enumerate(notifiers):
            name, kind = notifier.get("name"), notifier.get("type")
            if not isinstance(name, str) or not name:
                raise ValueError(f"notifiers[{index}] needs a name")
            if not isinstance(kind, str) or not kind:
                raise ValueError(f"notifier {name!r} needs a type")
            if name in seen:
                raise ValueError(f"notifier name {name!r} is used twice")
            seen.add(name)
        return notifiers

    def repo(self, name: str) -> RepoConfig:
        for repo in self.repos:
            if repo.name.lower() == name.lower():
                return repo
        return RepoConfig(name=name)

    def resolve_path(self, value: str) -> Path:
        path = Path(os.path.expandvars(value)).expanduser()
        return path if path.is_absolute() else self.base_dir / path

    def impact_roots(self) -> list[tuple[str, Path]]:
        """Each ``[impact] code`` entry as written (its name in ``affects[].root``) and where
        it is on disk."""
        return [(entry, self.resolve_path(entry)) for entry in self.impact.code]

    def store_path(self) -> Path:
        if self.store.path:
            return self.resolve_path(self.store.path)
        state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return Path(state_home) / "release-watch"


_SECRET_NAMES = ("GITHUB_TOKEN", "GH_TOKEN", "SLACK_BOT_TOKEN", "SLACK_WEBHOOK_URL")


class Secrets(BaseModel):
    """Tokens, from the environment only; their repr and str are masked by ``SecretStr``.

    ``Secrets()`` reads the environment (the names in any case); values given to it (tests)
    are taken as they are. A plain model rather than pydantic-settings: reading four
    variables is not worth that library's import on every command (a third of a no-change
    poll's start-up)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=False)

    github_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GITHUB_TOKEN", "GH_TOKEN"))
    slack_bot_token: SecretStr | None = Field(default=None, validation_alias="SLACK_BOT_TOKEN")
    slack_webhook_url: SecretStr | None = Field(default=None, validation_alias="SLACK_WEBHOOK_URL")

    def __init__(self, **values: Any) -> None:
        if not values:
            found = {name.upper(): value for name, value in os.environ.items()}
            values = {name: found[name] for name in _SECRET_NAMES if name in found}
        super().__init__(**values)


def _merge(defaults: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = dict(defaults)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"config file {escape_controls(str(path))} does not exist") from None
    except OSError as error:
        raise ConfigError(f"cannot read config file {escape_controls(str(path))}: "
                          f"{error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{escape_controls(str(path))} is not valid TOML: {error}") from None


def describe_validation_error(error: ValidationError, source: str) -> str:
    """One line per bad key, e.g. ``poll.interval: '10 minutes' is not a duration``."""
    lines: list[str] = []
    for problem in error.errors():
        where = ".".join(str(part) for part in problem["loc"]) or "(top level)"
        message = problem["msg"].removeprefix("Value error, ")
        if problem["type"] == "extra_forbidden":
            message = "unknown key (misspelled?)"
        line = f"{source}: {where}: {message}"
        if line not in lines:
            lines.append(line)
    return "\n".join(lines)


def config_from_dict(data: dict[str, Any], *, base_dir: Path, source: str) -> Config:
    if "orgs" in data and "repos" not in data:
        # The built-in repos are the watch list of a file that names nothing to watch; a file
        # naming [[orgs]] has said what it wants.
        data = {**data, "repos": []}
    merged = _merge(_read_toml(default_config_path()), data)
    try:
        return Config.model_validate({**merged, "base_dir": base_dir, "source": source})
    except ValidationError as error:
        raise ConfigError(describe_validation_error(error, source)) from None


def find_config_file(explicit: str | None, environ: dict[str, str] | None = None) -> Path | None:
    """``--config``, else ``$RELEASE_WATCH_CONFIG``, else ``./release-watch.toml`` if present."""
    env = os.environ if environ is None else environ
    if explicit:
        return Path(explicit)
    if env.get("RELEASE_WATCH_CONFIG"):
        return Path(env["RELEASE_WATCH_CONFIG"])
    local = Path("release-watch.toml")
    return local if local.is_file() else None


def load_config(path: Path | None) -> Config:
    if path is None:
        return config_from_dict({}, base_dir=Path.cwd(), source="built-in defaults")
    return config_from_dict(_read_toml(path), base_dir=path.resolve().parent,
                            source=escape_controls(str(path)))
