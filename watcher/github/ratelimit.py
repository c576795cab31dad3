"""GitHub's rate-limit answers: the ``x-ratelimit-*`` headers of a response, whether a 403/429
is a rate limit, and how long GitHub asks us to wait (docs.github.com, "Rate limits for the
REST API": ``retry-after``, else ``x-ratelimit-reset`` when nothing remains, else a minute)."""

from __future__ import annotations

from dataclasses import dataclass

import httpx


@dataclass(frozen=True)
class RateLimitReading:
    """The ``x-ratelimit-*`` headers of one answer."""

    limit: int | None
    remaining: int | None
    reset: float | None  # UTC epoch seconds
    resource: str | None = None

    def fresher(self, other: RateLimitReading | None) -> RateLimitReading:
        """This reading or ``other``, whichever is later: answers from concurrent requests
        arrive in any order, and within one reset window less remaining is more recent."""
        if other is None or other.reset != self.reset:
            return self
        return self if (self.remaining or 0) <= (other.remaining or 0) else other

    @classmethod
    def from_headers(cls, headers: httpx.Headers) -> RateLimitReading | None:
        def number(name: str) -> int | None:
            value = headers.get(name)
            return int(value) if value and value.strip().isdigit() else None

        if "x-ratelimit-remaining" not in headers:
            return None
        reset = number("x-ratelimit-reset")
        return cls(number("x-ratelimit-limit"), number("x-ratelimit-remaining"),
                   float(reset) if reset is not None else None, headers.get("x-ratelimit-resource"))


def is_rate_limited(response: httpx.Response) -> bool:
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    if response.headers.get("x-ratelimit-remaining") == "0" or "retry-after" in response.headers:
        return True
    return "rate limit" in response.text.lower()


def rate_limit_wait(response: httpx.Response, now: float) -> float:
    """Seconds GitHub asks us to wait before trying again."""
    retry_after = response.headers.get("retry-after", "").strip()
    if retry_after.isdigit():
        return float(retry_after)
    reading = RateLimitReading.from_headers(response.headers)
    if reading and reading.remaining == 0 and reading.reset is not None:
        return max(0.0, reading.reset - now) + 1.0
    return 60.0  # "Otherwise, wait for at least one minute before retrying."
