"""The GitHub REST client: conditional, paginated, rate-limit aware release listing.

Rules it follows (docs.github.com, "Best practices for using the REST API" and "Using pagination
in the REST API"; see ../shared/data/github/api-notes.md):
  * send ``If-None-Match`` with the ETag exactly as received; a 304 is "unchanged" and costs no
    quota on an authorised request;
  * follow ``Link: <…>; rel="next"`` only up to a configured depth, and only on the API host (a
    token is never sent to another host);
  * on a 403/429 rate limit wait for ``retry-after``, else until ``x-ratelimit-reset``, else one
    minute, but never longer than ``max_rate_limit_wait``: past that, give up on the repo for
    this poll (``RateLimitError``) so the other repos still run;
  * 5xx, timeouts, dropped connections and bodies that are not the documented JSON get bounded
    retries with exponential backoff and full jitter;
  * a renamed or transferred repo answers ``301`` with a ``Location`` (``/repositories/ID/…``
    or ``/repos/NEW/NAME/…``): followed, on the API host only, and remembered for the poller
    to say that the config should name the new repo (``take_move``).
Sleep, clock and randomness are injected, so tests never wait.
"""

from __future__ import annotations

import logging
import random
import re
import ssl
import time
from collections.abc import Callable
from functools import cache
from typing import Any

import httpx
from pydantic import SecretStr, ValidationError

from watcher.errors import ConfigError, GitHubError, MalformedResponse, RateLimitError
from watcher.github.answers import OrgRepo, RetryPolicy, adapter
from watcher.github.jsonbody import decode
from watcher.github.pacing import Pacer
from watcher.github.ratelimit import RateLimitReading, is_rate_limited, rate_limit_wait
from watcher.github.unreachable import does_not_resolve, why_unreachable
from watcher.logs import RedactSecrets
from watcher.metrics import Metrics
from watcher.models import Release

logger = logging.getLogger(__name__)

API_VERSION = "2022-11-28"
USER_AGENT = "release-watch/0.1 (+https://github.com/release-watch)"
_TOKEN = re.compile(r"[\x21-\x7e]+")  # what an HTTP header carries; GitHub's are [A-Za-z0-9_]
_MOVED = frozenset({301, 302, 307, 308})
_MAX_REDIRECTS = 3
_NAME = r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"  # GitHub's owner/name: safe to log and show
_MOVED_TO = re.compile(rf"/repos/({_NAME})(?:/|$)|/repositories/(\d+)(?:/|$)")


@cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every client of the process, as httpx would make it (the CA bundle
    of SSL_CERT_FILE or certifi's): each one made loads the whole bundle, 23 ms, and a client
    is made for every poll."""
    return httpx.create_ssl_context()


class Exchange:
    """One request to GitHub and its answer, with every rule above; ``GitHubClient`` asks it
    for what a poll needs."""

    def __init__(self, http: httpx.Client, *, api_url: str, policy: RetryPolicy,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time,
                 rng: random.Random | None = None, pacer: Pacer | None = None,
                 graphql_pacer: Pacer | None = None, metrics: Metrics | None = None) -> None:
        self.http = http
        self.metrics = metrics or Metrics()  # each answer's status and rate limit, /metrics
        self.api_url = api_url.rstrip("/")
        self.policy = policy
        self.sleep = sleep
        self.clock = clock
        self.rng = rng or random.Random()
        self.last_rate_limit: RateLimitReading | None = None
        # GitHub's secondary limits count REST and GraphQL separately.
        self.pacer = pacer
        self.graphql_pacer = graphql_pacer
        self._moves: dict[str, str] = {}  # repo → the name GitHub redirected it to
        self._names: dict[int, str] = {}  # repository id → full name, once looked up
        self._replaced: set[tuple[str, int]] = set()  # (repo, release id) said to be mangled

    @property
    def authenticated(self) -> bool:
        """Whether requests carry a token (GitHub's GraphQL API needs one)."""
        return "authorization" in self.http.headers

    def masked(self, text: str) -> str:
        """``text`` with the token masked: an error carries URLs GitHub sent us to (a redirect,
        a next page) and GitHub's own words, either of which may quote the token back."""
        token = self.http.headers.get("authorization", "").partition(" ")[2]
        return RedactSecrets([token]).redact(text) if token else text

    @staticmethod
    def make_http(api_url: str, token: SecretStr | None, timeout: float,
                  transport: httpx.BaseTransport | None = None,
                  max_connections: int = 10) -> httpx.Client:
        """The one shared keep-alive client; the token lives only in its default headers."""
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION,
                   "User-Agent": USER_AGENT}
        if token is not None and token.get_secret_value():
            if not _TOKEN.fullmatch(token.get_secret_value()):
                # httpx would fail on it at the first request, with the header in its message.
                raise ConfigError("GITHUB_TOKEN holds characters no HTTP header can carry (not "
                                  "ASCII, a space or a control character); set it to the token "
                                  "exactly as GitHub issued it")
            headers["Authorization"] = f"Bearer {token.get_secret_value()}"
        limits = httpx.Limits(max_connections=max_connections,
                              max_keepalive_connections=max_connections)
        return httpx.Client(base_url=api_url.rstrip("/"), headers=headers, timeout=timeout,
                            transport=transport, limits=limits, follow_redirects=False,
                            verify=_tls_context() if transport is None else True)

    def _same_origin(self, url: str) -> bool:
        """Whether ``url`` is on the API host: the token must never travel anywhere else."""
        here, there = httpx.URL(self.api_url), httpx.URL(url)
        return (here.scheme, here.host, here.port) == (there.scheme, there.host, there.port)

    def _fetch(self, repo: str, url: str, etag: str | None, shape: Any, *,
               allow_404: bool = False,
               post: dict[str, Any] | None = None) -> tuple[httpx.Response, Any]:
        """GET (or POST ``post`` as JSON) with every retry rule; returns the response and its
        decoded body (None for 304/404). A body that is not the documented JSON is retried
        like a 5xx."""
        try:
            return self._fetch_retried(repo, url, etag, shape, allow_404, post)
        except GitHubError as error:
            error.url = self.masked(error.url or "")  # a redirect's or next page's URL
            raise

    def _fetch_retried(self, repo: str, url: str, etag: str | None, shape: Any,
                       allow_404: bool, post: dict[str, Any] | None
                       ) -> tuple[httpx.Response, Any]:
        attempt = redirects = 0
        waited_for_rate_limit = False
        while True:
            self._respect_known_limit(repo, url)
            try:
                response = self._send(url, etag, post)
            except httpx.RequestError as error:  # timeouts, refused/dropped connections, bad gzip
                failure = type(error).__name__
                if attempt >= self.policy.retries or does_not_resolve(error):
                    tries = f"{attempt + 1} tries" if attempt else "1 try"
                    raise GitHubError(f"{repo}: GitHub unreachable after {tries}: "
                                      f"{why_unreachable(error, self.api_url)}", repo=repo,
                                      url=url) from error
                self._backoff(repo, attempt, failure)
                attempt += 1
                continue
            status = response.status_code
            if status == 304 or (status == 404 and allow_404):
                return response, None
            if status in _MOVED and post is None and redirects < _MAX_REDIRECTS:
                url = self._follow(repo, url, response)
                redirects += 1
                continue
            if status == 200:
                try:
                    value, replaced = decode(adapter(shape), response.content)
                except ValidationError as error:
                    problem = self._shape_problem(error)
                else:
                    if replaced:
                        self._say_replaced(repo, value)
                    return response, value
                # Raised out here, not in the except: pydantic's error quotes the body's values,
                # which may echo the token, and would stay attached as this one's context.
                if attempt >= self.policy.retries:
                    raise MalformedResponse(
                        f"{repo}: GitHub's answer is not a release listing ({problem}), "
                        f"{attempt + 1} times", repo=repo, url=url, status=status)
                self._backoff(repo, attempt, f"a malformed body ({problem})")
                attempt += 1
                continue
            if is_rate_limited(response):
                self._wait_for_rate_limit(repo, url, response, waited_for_rate_limit)
                waited_for_rate_limit = True
                continue
            if status >= 500 and attempt < self.policy.retries:
                self._backoff(repo, attempt, f"HTTP {status}")
                attempt += 1
                continue
            raise GitHubError(self._describe(repo, response), repo=repo, url=url, status=status)

    def _follow(self, repo: str, url: str, response: httpx.Response) -> str:
        """Where a redirect points, if it stays on the API host (the token goes with it)."""
        location = response.headers.get("location")
        if not location:
            raise GitHubError(f"{repo}: GitHub answered HTTP {response.status_code} without "
                              "saying where to", repo=repo, url=url, status=response.status_code)
        target = str(response.url.join(location))
        if not self._same_origin(target):
            raise GitHubError(f"{repo}: GitHub redirects to another host "
                              f"({httpx.URL(target).host}); not followed, a token goes to the "
                              "API host only", repo=repo, url=url, status=response.status_code)
        moved = self._moved_to(target)
        if moved is not None and moved.lower() != repo.lower():
            self._moves[repo] = moved
        return target

    def _moved_to(self, target: str) -> str | None:
        """The repo a redirect points at: named in ``/repos/OWNER/NAME/…``, or looked up (once)
        for ``/repositories/ID/…``, GitHub's form for a renamed or transferred repo."""
        path = httpx.URL(target).path.removeprefix(httpx.URL(self.api_url).path.rstrip("/"))
        found = _MOVED_TO.match(path)
        if found is None:
            return None
        if found.group(1):
            return found.group(1)
        number = int(found.group(2))
        if number not in self._names:
            url = f"{self.api_url}/repositories/{number}"
            try:
                _, repo = self._fetch(f"repository {number}", url, None, OrgRepo)
            except GitHubError as error:
                logger.debug("cannot name repository %d: %s", number, error)
                return f"repository {number}"  # looked up again on the next redirect
            if not re.fullmatch(_NAME, repo.full_name):
                return f"repository {number}"
            self._names[number] = repo.full_name
        return self._names[number]

    def take_move(self, repo: str) -> str | None:
        """The repo GitHub redirected ``repo``'s requests to since the last call (renamed or
        transferred), or None."""
        return self._moves.pop(repo, None)

    def _say_replaced(self, repo: str, value: Any) -> None:
        """Once per release: its text held bytes that are not UTF-8 (or a lone surrogate),
        shown as U+FFFD."""
        for release in value if isinstance(value, list) else [value]:
            if not isinstance(release, Release) or (repo, release.id) in self._replaced:
                continue
            if any("\ufffd" in (text or "") for text in
                   (release.body, release.name, release.tag_name)):
                self._replaced.add((repo, release.id))
                logger.warning("%s: release %s holds text that is not valid UTF-8; it is "
                               "shown with U+FFFD in its place", repo, release.tag_name)

    def _send(self, url: str, etag: str | None, post: dict[str, Any] | None) -> httpx.Response:
        """One request, once its pacer lets it go; the rate-limit reading it carries kept."""
        endpoint = "rest" if post is None else "graphql"
        try:
            if post is not None:
                if self.graphql_pacer is not None:
                    self.graphql_pacer.wait()
                response = self.http.post(url, json=post)
            else:
                if self.pacer is not None:
                    self.pacer.wait()
                response = self.http.get(url, headers={"If-None-Match": etag} if etag else {})
        except httpx.RequestError:
            self.metrics.github_response(endpoint, None)
            raise
        self.metrics.github_response(endpoint, response.status_code)
        reading = RateLimitReading.from_headers(response.headers)
        if reading is not None and reading.resource in (None, "core"):
            self.last_rate_limit = reading.fresher(self.last_rate_limit)  # GraphQL apart
            if self.last_rate_limit.remaining is not None:
                self.metrics.rate_limit(self.last_rate_limit.remaining, self.last_rate_limit.limit)
        return response

    def _wait_for_rate_limit(self, repo: str, url: str, response: httpx.Response,
                             waited_already: bool) -> None:
        """Sleep as long as GitHub asks, once, up to ``max_rate_limit_wait``; else give up on
        the repo for this poll."""
        wait = rate_limit_wait(response, self.clock())
        if waited_already or wait > self.policy.max_rate_limit_wait:
            why = ("again after one wait" if waited_already else
                   f"more than github.max_rate_limit_wait={self.policy.max_rate_limit_wait:.0f}s")
            raise RateLimitError(
                f"{repo}: GitHub rate limit (HTTP {response.status_code}) asks for {wait:.0f}s, "
                f"{why}; skipped this poll", repo=repo, url=url, status=response.status_code,
                reset_at=self.clock() + wait)
        logger.info("%s: rate limited, waiting %.0fs as GitHub asks", repo, wait)
        self.sleep(wait)
        self.last_rate_limit = None

    @staticmethod
    def _shape_problem(error: ValidationError) -> str:
        first = error.errors()[0]
        if first["type"] == "json_invalid":
            return "invalid JSON"
        where = ".".join(str(part) for part in first["loc"]) or "body"
        return f"{where}: {first['msg']}"

    def _respect_known_limit(self, repo: str, url: str) -> None:
        """Do not spend a request we know GitHub will refuse: quota exhausted until reset."""
        reading = self.last_rate_limit
        if not reading or reading.remaining != 0 or reading.reset is None:
            return
        wait = reading.reset - self.clock() + 1.0
        if wait <= 0:
            return
        if wait > self.policy.max_rate_limit_wait:
            raise RateLimitError(f"{repo}: GitHub quota used up until reset in {wait:.0f}s; "
                                 "skipped this poll", repo=repo, url=url, reset_at=reading.reset)
        logger.info("%s: quota used up, waiting %.0fs for the reset", repo, wait)
        self.sleep(wait)
        self.last_rate_limit = None

    def _backoff(self, repo: str, attempt: int, failure: str) -> None:
        delay = self.policy.delay(attempt, self.rng)
        logger.warning("%s: %s from GitHub, retry %d/%d in %.1fs", repo, failure, attempt + 1,
                       self.policy.retries, delay)
        self.sleep(delay)

    @staticmethod
    def _describe(repo: str, response: httpx.Response) -> str:
        status = response.status_code
        if status == 401:
            return f"{repo}: GitHub says bad credentials (HTTP 401): check GITHUB_TOKEN"
        if status == 404:
            return f"{repo}: no such repository, or it is private and GITHUB_TOKEN cannot see it"
        if status == 403:
            return f"{repo}: GitHub refused access (HTTP 403)"
        if status in _MOVED:
            return (f"{repo}: GitHub redirected it more than {_MAX_REDIRECTS} times "
                    f"(HTTP {status}); not followed further")
        return f"{repo}: GitHub answered HTTP {status}"
