"""What GitHub's REST API answers, typed (a repo's releases, an org's repos, one page), and
the policy for retrying what fails on the way (exponential backoff, full jitter).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

from watcher.models import Release

_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="([^"]+)"')


@cache
def adapter(shape: Any) -> TypeAdapter[Any]:
    """Built on first use: a poll of 304s never decodes a body, so never pays for these."""
    return TypeAdapter(shape)


class OrgRepo(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    full_name: str
    archived: bool = False
    disabled: bool = False


RELEASES, RELEASE, ORG_REPOS, GRAPHQL = list[Release], Release, list[OrgRepo], dict[str, Any]


@dataclass
class Listing:
    """The outcome of listing one repo's releases."""

    not_modified: bool
    releases: list[Any] = field(default_factory=list)  # Release (or OrgRepo for an org)
    etags: dict[str, str] = field(default_factory=dict)  # page URL → ETag to keep
    complete: bool = True  # False when max_pages cut the listing short
    requests: int = 0
    last_pages: set[str] = field(default_factory=set)  # page URLs that had no next page


@dataclass(frozen=True)
class Page:
    """One page of a repo's releases: unchanged (304), or its releases and ETag."""

    not_modified: bool
    releases: list[Release] = field(default_factory=list)
    etag: str | None = None
    last: bool = False  # no next page


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry transient failures (exponential backoff, full jitter)."""

    retries: int = 3
    backoff: float = 2.0
    cap: float = 60.0
    max_rate_limit_wait: float = 60.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        return rng.uniform(0, min(self.cap, self.backoff * 2**attempt))


def parse_link_header(value: str | None) -> dict[str, str]:
    """``<url>; rel="next", <url>; rel="last"`` → ``{"next": url, "last": url}``."""
    return {rel: url for url, rel in _LINK.findall(value or "")}


