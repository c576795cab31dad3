"""The GitHub client against the loopback fake: headers, ETags, pagination, retries, rate limits.

Real httpx talks to ``FakeGitHub`` over a socket; ``sleep``, ``clock`` and ``rng`` are injected, so
only the read-timeout test waits (0.2 s) for real.
"""

from __future__ import annotations

import json
import logging
import random
import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest
from fakes.github import JSON_CT, FakeGitHub, Scripted
from pydantic import SecretStr

from watcher.errors import GitHubError, MalformedResponse, RateLimitError
from watcher.github.client import (
    GitHubClient,
    Listing,
    RetryPolicy,
    parse_link_header,
)
from watcher.github.ratelimit import rate_limit_wait
from watcher.github.unreachable import why_unreachable
from watcher.models import Release

REPO = "pytorch/pytorch"
LIST = f"/repos/{REPO}/releases"
NOW = 1_700_000_000.0
TOKEN = "ghp_canary_tok_5f3a9c"  # distinctive, so a leak cannot hide in ordinary words
RETRIES = 3
BACKOFF = 1.0
MAX_WAIT = 60


@dataclass
class Rig:
    client: GitHubClient
    http: httpx.Client
    slept: list[float]


@pytest.fixture
def make_client(fake_github: FakeGitHub) -> Iterator[Callable[..., Rig]]:
    opened: list[httpx.Client] = []

    def make(url: str | None = None, *, token: str | None = TOKEN, timeout: float = 5.0) -> Rig:
        api_url = url or fake_github.url
        secret = None if token is None else SecretStr(token)
        http = GitHubClient.make_http(api_url, secret, timeout=timeout)
        opened.append(http)
        slept: list[float] = []
        policy = RetryPolicy(retries=RETRIES, backoff=BACKOFF, max_rate_limit_wait=MAX_WAIT)
        client = GitHubClient(http, api_url=api_url, policy=policy, sleep=slept.append,
                              clock=lambda: NOW, rng=random.Random(0))
        return Rig(client, http, slept)

    yield make
    for http in opened:
        http.close()


@pytest.fixture
def rig(fake_github: FakeGitHub, make_client: Callable[..., Rig]) -> Rig:
    fake_github.set_token(TOKEN)
    return make_client()


@pytest.fixture
def other_host() -> Iterator[FakeGitHub]:
    with FakeGitHub() as other:
        yield other


def publish(fake: FakeGitHub, count: int, repo: str = REPO) -> None:
    """Releases v0 … v{count-1}; the API lists them newest (highest) first."""
    for n in range(count):
        fake.add_release(repo, tag=f"v{n}")


def tags(releases: list[Release]) -> list[str]:
    return [release.tag_name for release in releases]


def list_all(rig: Rig, repo: str = REPO, etags: dict[str, str] | None = None,
             max_pages: int = 5) -> Listing:
    return rig.client.list_releases(repo, etags=etags or {}, per_page=30, max_pages=max_pages)


def json_answer(status: int, payload: object) -> Scripted:
    return Scripted(status, {"content-type": JSON_CT}, json.dumps(payload))


# -- request headers ----------------------------------------------------------------------------

@pytest.mark.parametrize(("token", "authorization"),
                         [(TOKEN, f"Bearer {TOKEN}"), (None, None), ("", None)],
                         ids=["token", "no-token", "empty-token"])
def test_recommended_headers_are_sent(fake_github: FakeGitHub, make_client: Callable[..., Rig],
                                      token: str | None, authorization: str | None) -> None:
    publish(fake_github, 1)
    if token:
        fake_github.set_token(token)
    list_all(make_client(token=token))
    [request] = fake_github.requests
    assert request.status == 200
    assert request.headers["accept"] == "application/vnd.github+json"
    assert request.headers["x-github-api-version"] == "2022-11-28"
    assert request.headers["user-agent"].startswith("release-watch/")
    assert request.headers.get("authorization") == authorization


# -- listing and conditional requests -----------------------------------------------------------

def test_list_releases_newest_first_and_keeps_the_page_etag(fake_github: FakeGitHub,
                                                            rig: Rig) -> None:
    publish(fake_github, 3)
    listing = list_all(rig)
    assert tags(listing.releases) == ["v2", "v1", "v0"]
    assert all(isinstance(release, Release) for release in listing.releases)
    assert listing.releases[0].id == fake_github.releases(REPO)[0]["id"]
    first_page = rig.client.releases_url(REPO, 30)
    assert list(listing.etags) == [first_page]
    assert re.fullmatch(r'"[0-9a-f]{32}"', listing.etags[first_page])
    assert (listing.not_modified, listing.complete, listing.requests) == (False, True, 1)
    assert "if-none-match" not in fake_github.requests[0].headers


@pytest.mark.parametrize("weak", [False, True], ids=["strong-etag", "weak-etag"])
def test_etag_sent_back_verbatim_gives_a_free_304(fake_github: FakeGitHub, rig: Rig,
                                                  weak: bool) -> None:
    publish(fake_github, 3)
    first_page = rig.client.releases_url(REPO, 30)
    listing = list_all(rig)
    if weak:
        weak_tag = f"W/{listing.etags[first_page]}"
        fake_github.script(LIST, Scripted(headers={"etag": weak_tag}))
        listing = list_all(rig)
        assert listing.etags[first_page] == weak_tag
    fake_github.reset_requests()
    remaining = fake_github.rate_remaining

    unchanged = list_all(rig, etags=listing.etags)
    [request] = fake_github.requests
    assert request.headers["if-none-match"] == listing.etags[first_page]  # quotes, W/ and all
    assert request.status == 304
    assert unchanged.not_modified
    assert (unchanged.releases, unchanged.requests) == ([], 1)
    assert fake_github.rate_remaining == remaining

    fake_github.add_release(REPO, tag="v3")
    changed = list_all(rig, etags=listing.etags)
    assert not changed.not_modified
    assert tags(changed.releases) == ["v3", "v2", "v1", "v0"]
    assert changed.etags[first_page] != listing.etags[first_page]


# -- pagination ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("max_pages", "pages", "complete"),
                         [(1, [1], False), (2, [1, 2], False), (3, [1, 2, 3], True),
                          (5, [1, 2, 3], True)],
                         ids=["one-page", "cut-at-two", "exactly-three", "room-to-spare"])
def test_pagination_follows_next_up_to_max_pages(fake_github: FakeGitHub, rig: Rig,
                                                 max_pages: int, pages: list[int],
                                                 complete: bool) -> None:
    publish(fake_github, 75)
    listing = list_all(rig, max_pages=max_pages)
    newest_first = [f"v{n}" for n in range(74, -1, -1)]
    assert tags(listing.releases) == newest_first[: 30 * len(pages)]
    assert [int(request.query["page"]) for request in fake_github.requests] == pages
    assert {request.query["per_page"] for request in fake_github.requests} == {"30"}
    assert listing.requests == len(pages)
    assert len(listing.etags) == len(pages)
    assert listing.complete is complete


def _off_host_link(target: str, other: FakeGitHub) -> str:
    base = "http://evil.example" if target == "evil.example" else other.url
    return f'<{base}{LIST}?per_page=30&page=2>; rel="next"'


@pytest.mark.parametrize("target", ["evil.example", "other-port"])
def test_next_link_to_another_host_is_not_followed(fake_github: FakeGitHub,
                                                   other_host: FakeGitHub, rig: Rig,
                                                   target: str) -> None:
    publish(fake_github, 75)
    publish(other_host, 75)
    fake_github.script(LIST, Scripted(headers={"link": _off_host_link(target, other_host)}))
    listing = list_all(rig)
    assert listing.requests == 1
    assert tags(listing.releases) == [f"v{n}" for n in range(74, 44, -1)]
    assert [(r.path, r.query["page"]) for r in fake_github.requests] == [(LIST, "1")]
    assert other_host.requests == []  # the token never reached another origin


def test_ignored_off_host_link_marks_the_listing_incomplete(fake_github: FakeGitHub,
                                                            rig: Rig) -> None:
    publish(fake_github, 75)
    fake_github.script(LIST, Scripted(headers={"link": _off_host_link("evil.example",
                                                                      fake_github)}))
    listing = list_all(rig)
    assert len(listing.releases) == 30
    assert listing.complete is False


# -- transient failures -------------------------------------------------------------------------

def test_server_errors_then_success_recover_with_full_jitter(fake_github: FakeGitHub,
                                                             rig: Rig) -> None:
    publish(fake_github, 2)
    fake_github.script(LIST, Scripted.server_error(500), Scripted.server_error(502),
                       Scripted.server_error(503))
    listing = list_all(rig)
    assert tags(listing.releases) == ["v1", "v0"]
    assert [request.status for request in fake_github.requests] == [500, 502, 503, 200]
    assert len(rig.slept) == 3
    for attempt, delay in enumerate(rig.slept):
        assert 0 <= delay <= BACKOFF * 2**attempt
    rng = random.Random(0)  # full jitter: uniform over [0, backoff * 2**attempt]
    assert rig.slept == [rng.uniform(0, BACKOFF * 2**attempt) for attempt in range(3)]


def test_server_errors_past_the_retries_raise_naming_the_repo(fake_github: FakeGitHub,
                                                               rig: Rig) -> None:
    publish(fake_github, 1)
    fake_github.script(LIST, *[Scripted.server_error(500)] * (RETRIES + 1))
    with pytest.raises(GitHubError) as caught:
        list_all(rig)
    assert type(caught.value) is GitHubError
    assert REPO in str(caught.value)
    assert caught.value.status == 500
    assert len(fake_github.requests) == RETRIES + 1
    assert len(rig.slept) == RETRIES


BAD_BODIES = {
    "broken-json": Scripted.broken_json(),
    "html": Scripted.not_json(),
    "wrong-shape": json_answer(200, {"message": "hi"}),
    "missing-field": json_answer(200, [{"id": 1}]),
}


@pytest.mark.parametrize("bad", list(BAD_BODIES.values()), ids=list(BAD_BODIES))
def test_bad_body_once_is_retried(fake_github: FakeGitHub, rig: Rig, bad: Scripted) -> None:
    publish(fake_github, 2)
    fake_github.script(LIST, bad)
    listing = list_all(rig)
    assert tags(listing.releases) == ["v1", "v0"]
    assert len(fake_github.requests) == 2
    assert len(rig.slept) == 1


@pytest.mark.parametrize("bad", list(BAD_BODIES.values()), ids=list(BAD_BODIES))
def test_bad_body_every_time_is_malformed_response(fake_github: FakeGitHub, rig: Rig,
                                                   bad: Scripted) -> None:
    publish(fake_github, 2)
    fake_github.script(LIST, *[bad] * (RETRIES + 1))
    with pytest.raises(MalformedResponse) as caught:
        list_all(rig)
    assert REPO in str(caught.value)
    assert caught.value.status == 200
    assert len(fake_github.requests) == RETRIES + 1
    assert len(rig.slept) == RETRIES


def test_undecodable_body_is_retried_like_a_malformed_one(fake_github: FakeGitHub,
                                                          rig: Rig) -> None:
    publish(fake_github, 1)
    fake_github.script(LIST, Scripted(200, {"content-encoding": "gzip"}, "not gzip at all"))
    listing = list_all(rig)
    assert tags(listing.releases) == ["v0"]
    assert len(fake_github.requests) == 2


def test_read_timeout_is_retried(fake_github: FakeGitHub,
                                 make_client: Callable[..., Rig]) -> None:
    publish(fake_github, 1)
    fake_github.script(LIST, Scripted(delay=0.5))  # the one real wait: 0.2 s client timeout
    rig = make_client(timeout=0.2)
    listing = list_all(rig)
    assert tags(listing.releases) == ["v0"]
    assert len(fake_github.requests_to(LIST)) == 2
    assert len(rig.slept) == 1


def test_unreachable_host_gives_up_after_the_retries(make_client: Callable[..., Rig]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    rig = make_client(f"http://127.0.0.1:{port}")
    with pytest.raises(GitHubError) as caught:
        list_all(rig)
    assert "unreachable" in str(caught.value)
    assert f"after {RETRIES + 1} tries" in str(caught.value)
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
    assert len(rig.slept) == RETRIES


_PROXIES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


@pytest.mark.parametrize(("where", "says"), [
    ("closed-port", "refused the connection: nothing listens there, or a firewall rejects it"),
    ("no-dns", "the name nonexistent.invalid does not resolve (DNS): no internet access here?"),
], ids=["closed-port", "no-dns"])
def test_no_internet_names_the_fix_in_one_line(make_client: Callable[..., Rig],
                                               monkeypatch: pytest.MonkeyPatch, where: str,
                                               says: str) -> None:
    """A closed local port and a name that never resolves (RFC 2606 reserves .invalid), so no
    real network is touched: the one line says what failed and what fixes it (a closed port
    after the retries, a name that does not resolve at once)."""
    for name in _PROXIES:
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}" if where == "closed-port" else "https://nonexistent.invalid"
    rig = make_client(url)
    with pytest.raises(GitHubError) as caught:
        list_all(rig)
    message = str(caught.value)
    # A name that does not resolve is said at once: retrying in seconds changes nothing.
    tries = f"{RETRIES + 1} tries" if where == "closed-port" else "1 try"
    assert message.startswith(f"{REPO}: GitHub unreachable after {tries}: ")
    assert len(rig.slept) == (RETRIES if where == "closed-port" else 0)
    assert says in message and "\n" not in message
    assert ("behind a proxy, set HTTPS_PROXY (and NO_PROXY for hosts reached directly); else "
            "check github.api_url") in message.replace("Behind", "behind")
    assert "Errno" not in message  # httpx's words, not the fix


@contextmanager
def _answering(answer: bytes) -> Iterator[int]:
    """A loopback TCP server that reads what comes, writes ``answer`` and closes; its port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.05)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    conn.recv(65536)
                    conn.sendall(answer)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        server.close()


def test_a_tls_failure_and_a_failing_proxy_name_their_fix(
        make_client: Callable[..., Rig], monkeypatch: pytest.MonkeyPatch) -> None:
    """Both made for real on loopback: a server that does not speak TLS where https:// expects
    it (as a TLS-inspecting middlebox without its CA looks to httpx: an SSL error), and a
    proxy that refuses CONNECT with 403."""
    for name in _PROXIES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    with (_answering(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n") as port,
          pytest.raises(GitHubError) as tls):
        list_all(make_client(f"https://127.0.0.1:{port}"))
    assert f"the TLS connection to 127.0.0.1:{port} failed" in str(tls.value)
    assert "needs its CA in SSL_CERT_FILE" in str(tls.value) and "\n" not in str(tls.value)
    with _answering(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n") as port:
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
        with pytest.raises(GitHubError) as proxied:
            list_all(make_client("https://api.github.example"))
    assert isinstance(proxied.value.__cause__, httpx.ProxyError)
    assert ("the proxy refused or failed the connection to api.github.example: check "
            "HTTPS_PROXY and NO_PROXY") in str(proxied.value)


@pytest.mark.parametrize(("error", "says"), [
    (httpx.ConnectTimeout("timed out"), "no answer from api.github.com (connect timeout): a "
                                        "firewall may drop the connection; behind a proxy"),
    (httpx.ReadTimeout("timed out"), "api.github.com did not answer within github.timeout"),
], ids=["connect-timeout", "read-timeout"])
def test_timeouts_name_the_firewall(error: httpx.TimeoutException, says: str) -> None:
    """A dropped SYN cannot be made on loopback without waiting out a real timeout; the
    words for httpx's timeouts, as the client raises them, are checked directly."""
    error.request = httpx.Request("GET", "https://api.github.com/repos/a/b/releases")
    assert says in why_unreachable(error, "https://api.github.com")


# -- rate limits --------------------------------------------------------------------------------

WAITS = {
    "403-retry-after": (Scripted.rate_limited(retry_after=30), 30.0),
    "429-retry-after": (Scripted.rate_limited(retry_after=30, status=429), 30.0),
    "403-reset": (Scripted.rate_limited(reset=int(NOW) + 20), 21.0),
    "429-no-hint": (json_answer(429, {"message": "slow down"}), 60.0),
    "403-secondary-text": (json_answer(403, {"message": "You have exceeded a secondary rate "
                                                        "limit."}), 60.0),
}


@pytest.mark.parametrize(("limited", "wait"), list(WAITS.values()), ids=list(WAITS))
def test_rate_limit_waits_as_asked_then_succeeds(fake_github: FakeGitHub, rig: Rig,
                                                 limited: Scripted, wait: float) -> None:
    publish(fake_github, 1)
    fake_github.script(LIST, limited)
    listing = list_all(rig)
    assert tags(listing.releases) == ["v0"]
    assert rig.slept == [wait]
    assert [request.status for request in fake_github.requests] == [limited.status, 200]


@pytest.mark.parametrize(("limited", "reset_at"),
                         [(Scripted.rate_limited(retry_after=3600), NOW + 3600),
                          (Scripted.rate_limited(reset=int(NOW) + 3600), NOW + 3601)],
                         ids=["retry-after", "reset"])
def test_rate_limit_longer_than_allowed_raises_without_waiting(
        fake_github: FakeGitHub, rig: Rig, limited: Scripted, reset_at: float) -> None:
    publish(fake_github, 1)
    fake_github.script(LIST, limited)
    with pytest.raises(RateLimitError) as caught:
        list_all(rig)
    assert caught.value.reset_at == reset_at
    assert caught.value.status == 403
    assert REPO in str(caught.value)
    assert rig.slept == []
    assert len(fake_github.requests) == 1


def test_plain_403_is_an_error_without_retry(fake_github: FakeGitHub, rig: Rig) -> None:
    publish(fake_github, 1)
    fake_github.script(LIST, json_answer(403, {"message": "Forbidden"}))
    with pytest.raises(GitHubError) as caught:
        list_all(rig)
    assert type(caught.value) is GitHubError
    assert caught.value.status == 403
    assert len(fake_github.requests) == 1
    assert rig.slept == []


def test_rate_limited_twice_in_one_call_gives_up(fake_github: FakeGitHub, rig: Rig) -> None:
    publish(fake_github, 1)
    fake_github.script(LIST, Scripted.rate_limited(retry_after=30),
                       Scripted.rate_limited(retry_after=30))
    with pytest.raises(RateLimitError):
        list_all(rig)
    assert rig.slept == [30.0]
    assert len(fake_github.requests) == 2


def _spend_quota(fake: FakeGitHub, rig: Rig, reset: float) -> None:
    """A successful answer that says the quota is now 0 until ``reset``."""
    fake.script(LIST, Scripted(headers={"x-ratelimit-remaining": "0",
                                        "x-ratelimit-reset": str(int(reset))}))
    assert tags(list_all(rig).releases) == ["v0"]
    fake.reset_requests()


def test_exhausted_quota_skips_the_request(fake_github: FakeGitHub, rig: Rig) -> None:
    publish(fake_github, 1)
    _spend_quota(fake_github, rig, NOW + 3600)
    with pytest.raises(RateLimitError) as caught:
        list_all(rig)
    assert caught.value.reset_at == NOW + 3600
    with pytest.raises(RateLimitError):
        rig.client.get_release("pytorch/xla", 1)  # the quota is per token, not per repo
    assert fake_github.requests == []
    assert rig.slept == []


def test_quota_resetting_soon_is_waited_for(fake_github: FakeGitHub, rig: Rig) -> None:
    publish(fake_github, 1)
    _spend_quota(fake_github, rig, NOW + 20)
    assert tags(list_all(rig).releases) == ["v0"]
    assert rig.slept == [21.0]
    assert len(fake_github.requests) == 1


# -- single releases and client errors ----------------------------------------------------------

def test_get_release_and_none_once_deleted(fake_github: FakeGitHub, rig: Rig) -> None:
    kept = fake_github.add_release(REPO, tag="v1", body="notes")
    gone = fake_github.add_release(REPO, tag="v2")
    release = rig.client.get_release(REPO, kept["id"])
    assert release is not None
    assert (release.id, release.tag_name, release.body) == (kept["id"], "v1", "notes")
    fake_github.delete_release(REPO, gone["id"])
    assert rig.client.get_release(REPO, gone["id"]) is None
    assert [(r.path, r.status) for r in fake_github.requests] == [
        (f"{LIST}/{kept['id']}", 200), (f"{LIST}/{gone['id']}", 404)]
    assert rig.slept == []


def test_listing_an_unknown_repo_is_a_404_error(fake_github: FakeGitHub, rig: Rig) -> None:
    with pytest.raises(GitHubError) as caught:
        list_all(rig, repo="nobody/nothing")
    assert type(caught.value) is GitHubError
    assert caught.value.status == 404
    assert "nobody/nothing" in str(caught.value)
    assert len(fake_github.requests) == 1
    assert rig.slept == []


def test_bad_credentials_point_at_the_token_without_retry(fake_github: FakeGitHub,
                                                          rig: Rig) -> None:
    publish(fake_github, 1)
    fake_github.set_token("other")
    with pytest.raises(GitHubError) as caught:
        list_all(rig)
    assert caught.value.status == 401
    assert "GITHUB_TOKEN" in str(caught.value)
    assert len(fake_github.requests) == 1
    assert rig.slept == []


# -- secrets ------------------------------------------------------------------------------------

def _fail_with(fake: FakeGitHub, *answers: Scripted) -> str:
    fake.script(LIST, *answers)
    return REPO


LEAKS: dict[str, Callable[[FakeGitHub], str]] = {
    "401": lambda fake: (fake.set_token("other"), REPO)[1],
    "404": lambda fake: "nobody/nothing",
    "5xx": lambda fake: _fail_with(fake, *[Scripted.server_error()] * (RETRIES + 1)),
    "malformed": lambda fake: _fail_with(fake, *[Scripted.not_json()] * (RETRIES + 1)),
    "rate-limit": lambda fake: _fail_with(fake, Scripted.rate_limited(retry_after=3600)),
    "unreachable": lambda fake: (fake.stop(), REPO)[1],
}


@pytest.mark.parametrize("scenario", list(LEAKS))
def test_token_never_appears_in_errors_reprs_or_logs(fake_github: FakeGitHub, rig: Rig,
                                                     caplog: pytest.LogCaptureFixture,
                                                     scenario: str) -> None:
    caplog.set_level(logging.DEBUG)
    publish(fake_github, 1)
    repo = LEAKS[scenario](fake_github)
    with pytest.raises(GitHubError) as caught:
        list_all(rig, repo=repo)
    error = caught.value
    texts = [str(error), repr(error), str(error.__cause__), repr(error.__cause__),
             str(error.url), repr(rig.client), repr(rig.http), repr(rig.http.headers),
             caplog.text]
    assert [text for text in texts if TOKEN in text] == []
    assert rig.http.headers["authorization"] == f"Bearer {TOKEN}"  # it was there to leak


# -- pure helpers -------------------------------------------------------------------------------

API = "https://api.github.com/repositories/65600975/releases"


@pytest.mark.parametrize(("value", "expected"), [
    (f'<{API}?page=2>; rel="next", <{API}?page=5>; rel="last"',
     {"next": f"{API}?page=2", "last": f"{API}?page=5"}),
    (f'<{API}?page=1>; rel="prev", <{API}?page=3>; rel="next", <{API}?page=3>; rel="last", '
     f'<{API}?page=1>; rel="first"',
     {"prev": f"{API}?page=1", "next": f"{API}?page=3", "last": f"{API}?page=3",
      "first": f"{API}?page=1"}),
    (f'<{API}?page=2>  ;  rel="next"', {"next": f"{API}?page=2"}),
    (None, {}),
    ("", {}),
    ("not a link header", {}),
], ids=["next-last", "all-four", "loose-spacing", "none", "empty", "garbage"])
def test_parse_link_header(value: str | None, expected: dict[str, str]) -> None:
    assert parse_link_header(value) == expected


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after": "30"}, 30.0),
    ({"retry-after": " 7 "}, 7.0),
    ({"retry-after": "5", "x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 99)},
     5.0),
    ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 20)}, 21.0),
    ({"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) - 50)}, 1.0),
    ({"x-ratelimit-remaining": "12", "x-ratelimit-reset": str(int(NOW) + 20)}, 60.0),
    ({}, 60.0),
], ids=["retry-after", "retry-after-padded", "retry-after-wins", "until-reset",
        "reset-passed", "quota-left", "no-hint"])
def test_rate_limit_wait(headers: dict[str, str], expected: float) -> None:
    assert rate_limit_wait(httpx.Response(403, headers=headers), NOW) == expected
