"""The configuration's schema: one pydantic model per TOML table, strict (a misspelled key is an
error, ``extra="forbid"``), and ``Secrets``, read from the environment only."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)

from watcher.config.durations import Duration
from watcher.config.environment import secret_variables
from watcher.config.impact import Codebase, ImpactConfig
from watcher.errors import ConfigError

REPO_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
STORE_URL_SCHEMES = ("postgresql://", "postgres://")
STORE_URL_VARIABLE = "RELEASE_WATCH_STORE_URL"


class Section(BaseModel):
    # A table's schema is built when one is first validated, not when the class is defined:
    # an offline command validates only the tables it reads (``load_sections``), so the
    # schemas of the others (github, slack, repos, server, the whole ``Config``) are never
    # built in its process.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Unread:
    """A table of the file that the command running did not validate (``load_sections``):
    reading it is that command's mistake, said at once instead of answered from a table
    nobody checked."""

    __slots__ = ("_table",)

    def __init__(self, table: str) -> None:
        self._table = table

    def _refused(self) -> AttributeError:
        return AttributeError(f"[{self._table}] was not validated by this command: name it "
                              "among the sections it reads (load_sections)")

    def __getattr__(self, attribute: str) -> Any:
        raise self._refused()

    def __iter__(self) -> Any:
        raise self._refused()

    def __repr__(self) -> str:
        return f"Unread({self._table!r})"


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
    # The store on PostgreSQL instead of store.path (or $RELEASE_WATCH_STORE_URL): replicas
    # sharing it elect one leader, holding a lease this long (renewed every third of it).
    url: str = ""
    lease: Duration = Field(default=15.0, ge=1)

    @field_validator("url")
    @classmethod
    def _postgres_url(cls, url: str) -> str:
        if url and not url.lower().startswith(STORE_URL_SCHEMES):
            raise ValueError("store.url must be a postgresql:// URL (or empty: the embedded "
                             "store at store.path)")
        return url


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
    # status --check: a repo that failed this many polls in a row is unhealthy (a typo'd or
    # renamed repo answers 404 for ever while the others keep the last success fresh).
    max_failed_polls: int = Field(default=3, ge=1)

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
    # A mutable default is copied for each instance by pydantic, as ``default_factory`` would
    # (which costs the parse of a builtin's signature at import).
    exclude: list[str] = []
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
    # Who may change subscriptions with /release-watch (Slack user ids); empty: everyone in
    # the channel. Listing them and help are open to all.
    admins: list[str] = []

    @field_validator("admins")
    @classmethod
    def _user_ids(cls, admins: list[str]) -> list[str]:
        for admin in admins:
            if not re.fullmatch(r"[UW][A-Z0-9]{2,}", admin):
                raise ValueError(f"{admin!r} is not a Slack user id (U… or W…, from the "
                                 "user's profile: ⋮ > Copy member ID)")
        return admins


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

    def rule_patterns(self) -> list[tuple[str, list[str]]]:
        """The ``[[classify.rules]]`` as ``(subsystem, patterns)``, as the taxonomy takes them."""
        return [(rule.subsystem, rule.patterns) for rule in self.rules]


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (an IPv6 host in brackets, ``[::1]:9464``) → ``(host, port)``; port 0
    takes any free port (tests)."""
    host, colon, port = value.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise ValueError(f"{value!r} is not HOST:PORT, e.g. 127.0.0.1:9464")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"{value!r}: write an IPv6 address in brackets, e.g. [::1]:9464")
    if not re.fullmatch(r"[A-Za-z0-9.:-]+", host):
        raise ValueError(f"{value!r}: {host!r} is not a host name or IP address")
    if not 0 <= int(port) <= 65535:
        raise ValueError(f"{value!r}: port {port} is not in 0-65535")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach ``host`` (``localhost``, 127.0.0.0/8, ::1)."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name that may resolve to anything


class ServerConfig(Section):
    """``[server]``: the daemon's HTTP listener (/metrics, /healthz, /readyz, /feeds/)."""

    # None: no listener. A host other than loopback is reachable from other machines.
    listen: str | None = None
    # Connections the kernel completes and holds until the listener accepts them; the
    # standard library's 5 makes every sixth connect of a burst wait a 1 s SYN retry, longer
    # than a probe's timeout. Linux caps it at net.core.somaxconn (4096).
    backlog: int = Field(default=1024, ge=1, le=65535)

    @field_validator("listen")
    @classmethod
    def _host_and_port(cls, value: str | None) -> str | None:
        if value is not None:
            parse_listen(value)
        return value

    @property
    def address(self) -> tuple[str, int] | None:
        return None if self.listen is None else parse_listen(self.listen)


class Config(Section):
    github: GitHubConfig
    store: StoreConfig
    poll: PollConfig
    repos: list[RepoConfig]
    orgs: list[OrgConfig] = []
    slack: SlackConfig
    classify: ClassifyConfig
    impact: ImpactConfig = Field(default_factory=ImpactConfig)
    server: ServerConfig = Field(default_factory=ServerConfig)
    notifiers: list[dict[str, Any]]
    # Where relative paths in the file (a jsonl notifier's path, store.path) are anchored.
    base_dir: Path = Field(default_factory=Path.cwd, exclude=True)
    source: str = Field(default="built-in defaults", exclude=True)
    # The tables as written (defaults merged in), for `config check` to show "90s" as "90s".
    _written: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def written(self) -> dict[str, Any]:
        return self._written

    @field_validator("repos")
    @classmethod
    def _unique_repos(cls, repos: list[RepoConfig]) -> list[RepoConfig]:
        # Counted once each: ``names.count`` per repo was quadratic (5,000 repos, 25 million
        # comparisons on every start).
        seen = Counter(repo.name.lower() for repo in repos)
        duplicates = sorted(name for name, count in seen.items() if count > 1)
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
                raise ValueError(f"[[notifiers]] table {index + 1} needs a name")
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
        """Each codebase's path as written (its name in ``affects[].root``) and where it is on
        disk: the ``[impact] code`` entries, then the ``[[impact.codebases]]``."""
        return [(codebase.label, codebase.path) for codebase in self.impact_codebases()]

    def impact_codebases(self) -> list[Codebase]:
        """Every configured codebase with its name and link template: an ``[impact] code``
        entry is named after its folder and takes ``[impact] link``."""
        return self.impact.codebases_at(self.resolve_path)

    def store_url(self) -> str | None:
        """The PostgreSQL store's URL (``[store] url``, else ``$RELEASE_WATCH_STORE_URL``);
        None for the embedded store at ``store_path()``, the default. It may carry a
        password: show it through ``mask_url_credentials`` only."""
        url = self.store.url or os.environ.get(STORE_URL_VARIABLE, "").strip()
        if url and not url.lower().startswith(STORE_URL_SCHEMES):
            raise ConfigError(f"${STORE_URL_VARIABLE} must be a postgresql:// URL")
        return url or None

    def store_path(self) -> Path:
        if self.store.path:
            return self.resolve_path(self.store.path)
        state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return Path(state_home) / "release-watch"


class Secrets(BaseModel):
    """Tokens, from the environment only; their repr and str are masked by ``SecretStr``.

    ``Secrets()`` reads the environment (the names in any case); values given to it (tests)
    are taken as they are. A plain model rather than pydantic-settings: reading a few
    variables is not worth that library's import on every command (a third of a no-change
    poll's start-up)."""

    # Built on first use (as ``Section``): a command that asks for no token never builds it.
    model_config = ConfigDict(extra="ignore", populate_by_name=False, defer_build=True)

    github_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("GITHUB_TOKEN", "GH_TOKEN"))
    slack_bot_token: SecretStr | None = Field(default=None, validation_alias="SLACK_BOT_TOKEN")
    slack_webhook_url: SecretStr | None = Field(default=None, validation_alias="SLACK_WEBHOOK_URL")
    # /release-watch: Socket Mode's app-level token (xapp-…), or the request URL's secret.
    slack_app_token: SecretStr | None = Field(default=None, validation_alias="SLACK_APP_TOKEN")
    slack_signing_secret: SecretStr | None = Field(default=None,
                                                   validation_alias="SLACK_SIGNING_SECRET")

    def __init__(self, **values: Any) -> None:
        if not values:
            values = dict(secret_variables(os.environ))
        super().__init__(**values)

    def blank(self) -> list[str]:
        """The variables set to nothing but whitespace. An empty one counts as unset; one of
        spaces is a mistake (a signing secret of one space is a key anyone can sign with),
        refused by ``config check`` and ``run`` rather than used."""
        names = []
        for name, info in type(self).model_fields.items():
            value = getattr(self, name)
            if isinstance(value, SecretStr) and value.get_secret_value().isspace():
                alias = info.validation_alias
                names.append(alias.choices[0] if isinstance(alias, AliasChoices) else str(alias))
        return [str(name) for name in names]
