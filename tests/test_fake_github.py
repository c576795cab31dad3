"""Checks that the fake GitHub speaks the protocol the watcher relies on, over a real socket."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from fakes.github import FakeGitHub, Scripted

REPO = "pytorch/pytorch"
LIST = f"/repos/{REPO}/releases"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake


@pytest.fixture
def client(gh: FakeGitHub) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=gh.url, timeout=5) as c:
        yield c


def test_pagination_link_header_across_three_pages(gh: FakeGitHub, client: httpx.Client) -> None:
    for n in range(5):
        gh.add_release(REPO, tag=f"v2.{n}.0")
    tags: list[str] = []
    url: str | None = f"{LIST}?per_page=2&page=1"
    while url:
        resp = client.get(url)
        assert resp.status_code == 200
        tags += [r["tag_name"] for r in resp.json()]
        url = resp.links.get("next", {}).get("url")
    assert tags == [f"v2.{n}.0" for n in (4, 3, 2, 1, 0)]
    middle = client.get(LIST, params={"per_page": 2, "page": 2}).headers["link"]
    assert middle == (
        f'<{gh.url}{LIST}?per_page=2&page=1>; rel="prev", '
        f'<{gh.url}{LIST}?per_page=2&page=3>; rel="next", '
        f'<{gh.url}{LIST}?per_page=2&page=3>; rel="last", '
        f'<{gh.url}{LIST}?per_page=2&page=1>; rel="first"'
    )
    assert len(gh.requests_to(LIST)) == 4


def test_release_shape_matches_github(gh: FakeGitHub, client: httpx.Client) -> None:
    stored = gh.add_release(REPO, tag="v2.4.0", body="notes")
    [listed] = client.get(LIST).json()
    assert listed == stored
    assert listed["id"] == 1000
    assert listed["published_at"] == "2024-01-01T00:00:00Z"
    assert listed["html_url"] == f"https://github.com/{REPO}/releases/tag/v2.4.0"
    assert listed["url"] == f"{gh.url}/repos/{REPO}/releases/1000"


def test_etag_304_costs_no_quota_and_edit_changes_etag(
    gh: FakeGitHub, client: httpx.Client
) -> None:
    rel = gh.add_release(REPO, tag="v2.4.0", body="old")
    first = client.get(LIST)
    etag = first.headers["etag"]
    assert etag.startswith('"') and len(etag) == 34
    assert first.headers["x-ratelimit-remaining"] == "4999"
    for sent in (etag, f"W/{etag}"):
        again = client.get(LIST, headers={"If-None-Match": sent})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == etag
        assert again.headers["x-ratelimit-remaining"] == "4999"
    assert gh.rate_remaining == 4999
    gh.edit_release(REPO, rel["id"], body="new")
    changed = client.get(LIST, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    assert changed.json()[0]["body"] == "new"


def test_scripted_500_then_normal(gh: FakeGitHub, client: httpx.Client) -> None:
    gh.add_release(REPO, tag="v2.4.0")
    gh.script(LIST, Scripted.server_error(), Scripted(200, {"x-extra": "1"}))
    assert client.get(LIST).status_code == 500
    extra = client.get(LIST)
    assert extra.headers["x-extra"] == "1" and extra.json()[0]["tag_name"] == "v2.4.0"
    assert client.get(LIST).status_code == 200
    assert [r.status for r in gh.requests] == [500, 200, 200]


def test_rate_limited_headers(gh: FakeGitHub, client: httpx.Client) -> None:
    gh.add_release(REPO, tag="v2.4.0")
    gh.script(LIST, Scripted.rate_limited(reset=1_700_000_000, retry_after=7, status=429))
    resp = client.get(LIST)
    assert resp.status_code == 429
    assert resp.headers["x-ratelimit-remaining"] == "0"
    assert resp.headers["x-ratelimit-reset"] == "1700000000"
    assert resp.headers["retry-after"] == "7"
    assert resp.json()["message"].startswith("API rate limit exceeded")


def test_broken_and_non_json_bodies(gh: FakeGitHub, client: httpx.Client) -> None:
    gh.add_release(REPO, tag="v2.4.0")
    gh.script(LIST, Scripted.broken_json(), Scripted.not_json())
    broken = client.get(LIST)
    assert broken.content == b'[{"id": 1, "tag_na'
    with pytest.raises(json.JSONDecodeError):
        broken.json()
    html = client.get(LIST)
    assert html.text == "<html>unicorn</html>" and "text/html" in html.headers["content-type"]


def test_drafts_hidden_without_token(gh: FakeGitHub, client: httpx.Client) -> None:
    gh.add_release(REPO, tag="v2.4.0")
    draft = gh.add_release(REPO, tag="v2.5.0", draft=True)
    assert [r["tag_name"] for r in client.get(LIST).json()] == ["v2.4.0"]
    assert client.get(f"{LIST}/{draft['id']}").status_code == 404
    gh.set_token("s3cret")
    seen = client.get(LIST, headers={"Authorization": "Bearer s3cret"}).json()
    assert [r["tag_name"] for r in seen] == ["v2.5.0", "v2.4.0"]


def test_deleted_release_404_and_latest(gh: FakeGitHub, client: httpx.Client) -> None:
    stable = gh.add_release(REPO, tag="v2.4.0")
    gone = gh.add_release(REPO, tag="v2.5.0")
    gh.add_release(REPO, tag="v2.6.0-rc1", prerelease=True)
    assert client.get(f"{LIST}/{gone['id']}").status_code == 200
    gh.delete_release(REPO, gone["id"])
    missing = client.get(f"{LIST}/{gone['id']}")
    assert missing.status_code == 404 and missing.json() == {"message": "Not Found"}
    assert client.get(f"{LIST}/latest").json()["id"] == stable["id"]
    assert client.get("/repos/nobody/nothing/releases").status_code == 404
    assert client.post(LIST).status_code == 405


def test_token_enforced(gh: FakeGitHub, client: httpx.Client) -> None:
    gh.add_release(REPO, tag="v2.4.0")
    gh.set_token("s3cret")
    for auth in (None, "Bearer wrong"):
        resp = client.get(LIST, headers={"Authorization": auth} if auth else {})
        assert resp.status_code == 401 and resp.json() == {"message": "Bad credentials"}
    for auth in ("Bearer s3cret", "token s3cret"):
        assert client.get(LIST, headers={"Authorization": auth}).status_code == 200
    assert gh.requests[-1].headers["authorization"] == "token s3cret"


def test_stop_cuts_keep_alive_connections(gh: FakeGitHub, client: httpx.Client) -> None:
    gh.add_release(REPO, tag="v2.4.0")
    assert client.get(LIST).status_code == 200
    gh.stop()
    with pytest.raises(httpx.TransportError):
        client.get(LIST)
