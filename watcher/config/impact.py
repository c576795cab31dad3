"""The ``[impact]`` table: the codebases whose use of PyTorch each release is checked against,
as a list of paths (``code``, with one ``link``) or as ``[[impact.codebases]]`` entries, each
with its own name and link template; and the package index their API atlases come from, with
the budget every wheel it serves is held to (``watcher/impact/atlas/budget.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from watcher.config.durations import Duration
from watcher.config.sizes import Size

__all__ = ["Codebase", "CodebaseConfig", "ImpactConfig"]


def checked_link(link: str | None, key: str) -> str | None:
    if link is not None and not link.startswith(("https://", "http://")):
        raise ValueError(f"{key} {link!r} must be an http(s) URL with {{path}} and {{line}} in it")
    if link is not None and "{path}" not in link:
        raise ValueError(f"{key} needs {{path}} (and usually #L{{line}}) in it")
    return link


class CodebaseConfig(BaseModel):
    """One ``[[impact.codebases]]`` entry: ``name`` is how uses name it
    (``affects[].codebase``), ``link`` the template of a link to one of its lines."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str = Field(min_length=1)
    path: str = Field(min_length=1)  # relative to the config file
    link: str | None = None

    @field_validator("link")
    @classmethod
    def _link_is_a_template(cls, link: str | None) -> str | None:
        return checked_link(link, "impact.codebases link")


class ImpactConfig(BaseModel):
    """``[impact]``: the codebases whose use of PyTorch each release is checked against."""

    # Built on first validation (as ``schema.Section``): only a command reading [impact].
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    # Mutable defaults: pydantic copies them for each instance (``schema.OrgConfig``).
    code: list[str] = []  # directories; relative to the config file
    # A use's link: "{path}" (relative to its code root) and "{line}" are filled in.
    link: str | None = None
    codebases: list[CodebaseConfig] = []
    # The package index whose JSON API ({base}/pypi/{package}/{version}/json) gives the wheels
    # of releases newer than the atlases bundled (watcher/impact/atlas/index.py); a mirror's.
    package_index: str = "https://pypi.org"
    # Hosts a wheel's download may be redirected to besides the host its URL names (the
    # JSON itself is followed on the index's own host only).
    package_hosts: list[str] = []
    # A version that could not be fetched or built is asked for again after this long.
    package_retry: Duration = Field(default=3600.0, ge=1)
    # The budget of one wheel: see config/default.toml for what each bounds.
    index_timeout: Duration = Field(default=60.0, gt=0)
    download_timeout: Duration = Field(default=1800.0, gt=0)
    download_min_rate: Size = Field(default=10_000, ge=0)
    download_slow_for: Duration = Field(default=30.0, gt=0)
    wheel_max_size: Size = Field(default=1_500_000_000, gt=0)
    module_max_size: Size = Field(default=16_000_000, gt=0)
    modules_max_size: Size = Field(default=400_000_000, gt=0)
    build_memory: Size = Field(default=512_000_000, ge=64_000_000)
    build_cpu: Duration = Field(default=120.0, ge=1)
    build_timeout: Duration = Field(default=300.0, gt=0)

    @field_validator("package_hosts")
    @classmethod
    def _hosts_are_names(cls, hosts: list[str]) -> list[str]:
        for host in hosts:
            if not host or "/" in host or ":" in host:
                raise ValueError(f"impact.package_hosts: {host!r} is not a host name (e.g. "
                                 "files.example.com, without scheme or port)")
        return [host.lower() for host in hosts]

    @field_validator("link")
    @classmethod
    def _link_is_a_template(cls, link: str | None) -> str | None:
        return checked_link(link, "impact.link")

    @field_validator("package_index")
    @classmethod
    def _index_is_a_url(cls, base: str) -> str:
        if not base.startswith(("https://", "http://")):
            raise ValueError(f"impact.package_index {base!r} must be an http(s) URL, e.g. "
                             "https://pypi.org")
        return base.rstrip("/")

    @model_validator(mode="after")
    def _names_are_distinct(self) -> ImpactConfig:
        seen: set[str] = set()
        for codebase in self.codebases:
            if codebase.name in seen:
                raise ValueError(f"impact.codebases: the name {codebase.name!r} is used twice")
            seen.add(codebase.name)
        return self

    def codebases_at(self, resolve: Callable[[str], Path]) -> list[Codebase]:
        found = [Codebase(entry, resolve(entry), derived_name(entry), self.link)
                 for entry in self.code]
        found += [Codebase(entry.path, resolve(entry.path), entry.name, entry.link)
                  for entry in self.codebases]
        return found


def derived_name(entry: str) -> str:
    """An ``[impact] code`` entry's name: its folder's (``/srv/trainer`` is ``trainer``)."""
    return Path(entry.rstrip("/\\")).name or entry


@dataclass(frozen=True)
class Codebase:
    """A configured codebase: ``label`` its path as written (``affects[].root``, and the key
    of its index in the store), ``path`` where it is, ``name`` (``affects[].codebase``),
    ``link`` its link template."""

    label: str
    path: Path
    name: str
    link: str | None = None
