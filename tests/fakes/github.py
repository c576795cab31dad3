"""A fake GitHub REST releases API served over real HTTP on loopback.

Why a real server instead of ``httpx.MockTransport``: the watcher's retry, timeout, keep-alive,
ETag and rate-limit code paths only get exercised honestly when bytes cross a socket.  The fake
uses nothing but the standard library so it runs anywhere the tests run, binds to an ephemeral
port so parallel test runs never collide, and never sleeps unless a test asks it to (``latency``
or ``Scripted.delay``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fakes.loopback import Answer, Served

JSON_CT = "application/json; charset=utf-8"
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
_NO_BODY = {204, 304}
_AUTHOR: dict[str, Any] = {
    "login": "octocat", "id": 1, "node_id": "MDQ6VXNlcjE=",
    "avatar_url": "https://github.com/images/error/octocat_happy.gif", "gravatar_id": "",
    "url": "https://api.github.com/users/octocat", "html_url": "https://github.com/octocat",
    "type": "User", "site_admin": False,
}  # fmt: skip


@dataclass(frozen=True)
class Scripted:
    """One canned answer; queued with ``FakeGitHub.script`` to inject faults deterministically."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | str | None = None  # None: the normal body (and ETag) for the path
    delay: float = 0.0  # real sleep before answering; only for timeout tests

    @classmethod
    def server_error(cls, status: int = 500) -> Scripted:
        """A GitHub-style 5xx, for retry/backoff tests."""
        return cls(status, {"content-type": JSON_CT}, json.dumps({"message": "Server Error"}))

    @classmethod
    def broken_json(cls) -> Scripted:
        """A 200 whose JSON is cut mid-stream, as seen behind flaky proxies."""
        return cls(200, {"content-type": "application/json"}, b'[{"id": 1, "tag_na')

    @classmethod
    def not_json(cls) -> Scripted:
        """A 200 HTML page, as returned by captive portals and GitHub's unicorn outage page."""
        return cls(200, {"content-type": "text/html; charset=utf-8"}, "<html>unicorn</html>")

    @classmethod
    def rate_limited(
        cls, *, retry_after: int | None = None, reset: int | None = None, status: int = 403
    ) -> Scripted:
        """GitHub's primary (403 + reset) or secondary (429/403 + retry-after) rate-limit answer."""
        headers = {"content-type": JSON_CT, "x-ratelimit-remaining": "0"}
        if reset is not None:
            headers["x-ratelimit-reset"] = str(reset)
        if retry_after is not None:
            headers["retry-after"] = str(retry_after)
        message = "API rate limit exceeded for 127.0.0.1. (But here's the good news: ...)"
        return cls(status, headers, json.dumps({"message": message}))


@dataclass(frozen=True)
class RecordedRequest:
    """What the server saw and answered, so tests can assert on the client's wire behaviour."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    status: int
    at: float = 0.0  # ``FakeGitHub.clock()`` when it was answered (tests give a fake clock)


class FakeGitHub(Served):
    """In-memory releases store plus an HTTP server that serves it the way api.github.com does."""

    def __init__(self, *, per_page_default: int = 30, latency: float = 0.0) -> None:
        self.per_page_default = per_page_default
        self.latency = latency
        self.rate_limit: int = 5000
        self.rate_remaining: int = self.rate_limit
        self.rate_reset: int = int(time.time()) + 3600
        self.requests: list[RecordedRequest] = []
        self.clock: Callable[[], float] = time.monotonic
        self._lock = threading.RLock()
        self._repos: dict[str, list[dict[str, Any]]] = {}
        self._archived: set[str] = set()
        self._ids: dict[str, int] = {}  # repo → repository id, as /repositories/{id} names it
        self._moved: dict[str, tuple[str, bool]] = {}  # old name → (new name, Location by id)
        self.pr_labels: dict[tuple[str, int], list[str]] = {}  # (repo, PR number) → labels
        self.graphql_checks = 0  # batched release-check queries answered
        self._scripts: dict[str, deque[Scripted]] = {}
        self._token: str | None = None
        self._next_id = 1000
        self._seq = 0
        self._updates = 0

    # -- state -------------------------------------------------------------------------------
    def add_repo(self, repo: str, *, archived: bool = False) -> None:
        """Make a repo exist with no releases (listing it gives 200 [] rather than 404); it is
        also listed by ``GET /orgs/{owner}/repos``."""
        with self._lock:
            self._repos.setdefault(repo, [])
            if archived:
                self._archived.add(repo)
            else:
                self._archived.discard(repo)

    def rename_repo(self, old: str, new: str, *, location: str = "id") -> None:
        """Rename (or transfer) a repo as github.com does: its releases and id go with it,
        and requests under the old name answer 301 with a ``Location`` of the same path under
        ``/repositories/{id}`` (``location="id"``, what GitHub sends) or ``/repos/{new}``
        (``location="name"``)."""
        with self._lock:
            self._repos[new] = self._repos.pop(old, [])
            self._ids[new] = self._repo_id(old)
            del self._ids[old]
            self._moved[old] = (new, location == "id")
            self._moved.pop(new, None)

    def _repo_id(self, repo: str) -> int:
        return self._ids.setdefault(repo, 500 + len(self._ids))

    def add_release(
        self, repo: str, *, tag: str, body: str = "", name: str | None = None,
        prerelease: bool = False, draft: bool = False, release_id: int | None = None,
        published_at: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Publish a release; it becomes the first (newest) entry of the repo's list."""
        with self._lock:
            releases = self._repos.setdefault(repo, [])
            rid = self._next_id if release_id is None else release_id
            if any(r["id"] == rid for r in releases):
                raise ValueError(f"release id {rid} already exists in {repo}")
            self._next_id = max(self._next_id, rid + 1)
            when = (_EPOCH + timedelta(hours=self._seq)).strftime("%Y-%m-%dT%H:%M:%SZ")
            self._seq += 1
            node = hashlib.sha256(f"{repo}:{rid}".encode()).hexdigest()[:16]
            release = {
                "id": rid, "node_id": f"RE_{node}", "tag_name": tag, "target_commitish": "main",
                "name": tag if name is None else name, "body": body, "draft": draft,
                "prerelease": prerelease, "created_at": published_at or when,
                "published_at": published_at or when, "author": dict(_AUTHOR), "assets": [],
                "_updated_at": self._tick(),  # GraphQL's updatedAt; not in the REST object
            }  # fmt: skip
            releases.insert(0, release)
            return self._render(repo, release)

    def edit_release(self, repo: str, release_id: int, **fields: Any) -> dict[str, Any]:
        """Change fields in place (list position is kept, like editing on github.com)."""
        with self._lock:
            release = self._find(repo, release_id)
            release.update(copy.deepcopy(fields))
            release["_updated_at"] = self._tick()
            return self._render(repo, release)

    def delete_release(self, repo: str, release_id: int) -> None:
        """Remove a release; later GETs by id answer 404."""
        with self._lock:
            self._repos[repo].remove(self._find(repo, release_id))

    def releases(self, repo: str) -> list[dict[str, Any]]:
        """Current releases newest first, drafts included (a view of state, not of the API)."""
        with self._lock:
            return [self._render(repo, r) for r in self._repos.get(repo, [])]

    def set_token(self, token: str | None) -> None:
        """Require ``Authorization: Bearer <token>`` (or ``token <token>``); None disables it."""
        with self._lock:
            self._token = token

    # -- fault injection and observation -----------------------------------------------------
    def script(self, path: str, *responses: Scripted) -> None:
        """Queue answers for requests whose path (query excluded) equals ``path``, FIFO."""
        with self._lock:
            self._scripts.setdefault(path, deque()).extend(responses)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """Requests whose path (query excluded) equals ``path``."""
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def reset_requests(self) -> None:
        with self._lock:
            self.requests.clear()

    # -- request handling (called from server threads) ---------------------------------------
    def _find(self, repo: str, release_id: int) -> dict[str, Any]:
        for release in self._repos.get(repo, []):
            if release["id"] == release_id:
                return release
        raise KeyError(f"no release {release_id} in {repo}")

    def _render(self, repo: str, release: dict[str, Any]) -> dict[str, Any]:
        api = self.url if self._server is not None else "https://api.github.com"
        rid, tag = release["id"], release["tag_name"]
        out: dict[str, Any] = {
            "url": f"{api}/repos/{repo}/releases/{rid}",
            "html_url": f"https://github.com/{repo}/releases/tag/{tag}",
            "assets_url": f"{api}/repos/{repo}/releases/{rid}/assets",
            "upload_url": f"https://uploads.github.com/repos/{repo}/releases/{rid}/assets"
            "{?name,label}",
            "tarball_url": f"{api}/repos/{repo}/tarball/{tag}",
            "zipball_url": f"{api}/repos/{repo}/zipball/{tag}",
        }
        out.update(copy.deepcopy({k: v for k, v in release.items() if not k.startswith("_")}))
        return out

    def _tick(self) -> str:
        """A fresh timestamp for ``updatedAt``: one second after the last one handed out."""
        self._updates += 1
        return (_EPOCH + timedelta(seconds=self._updates)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _route(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str]
    ) -> tuple[int, Any, dict[str, str]]:
        """Normal (unscripted) handling: (status, JSON payload, extra headers)."""
        if method != "GET":
            return 405, {"message": "Method Not Allowed"}, {"allow": "GET"}
        scheme, _, given = headers.get("authorization", "").partition(" ")
        authorized = scheme.lower() in ("bearer", "token") and given.strip() == self._token
        if self._token is not None and not authorized:
            return 401, {"message": "Bad credentials"}, {}
        if path == "/rate_limit":
            return 200, self._rate_limit_status(), {}
        if path == "/":  # the API root: URL templates of the endpoints, as api.github.com's
            return 200, {"current_user_url": f"{self.url}/user",
                         "repository_url": f"{self.url}/repos/{{owner}}/{{repo}}",
                         "rate_limit_url": f"{self.url}/rate_limit"}, {}
        parts = path.split("/")
        if len(parts) >= 3 and parts[1] == "repositories":
            return self._by_id(method, parts, query, headers)
        moved = self._moved.get("/".join(parts[2:4])) if parts[1:2] == ["repos"] else None
        if moved is not None:
            return self._moved_permanently(path, query, *moved)
        if len(parts) == 4 and parts[1] == "orgs" and parts[3] == "repos":
            return self._org_repos(path, query, parts[2])
        repo = "/".join(parts[2:4])
        shape_ok = len(parts) in (5, 6) and parts[1] == "repos" and parts[4] == "releases"
        if not shape_ok or repo not in self._repos:
            return 404, {"message": "Not Found"}, {}
        visible = [r for r in self._repos[repo] if authorized or not r["draft"]]
        if len(parts) == 5:
            return self._page(path, query, [self._render(repo, r) for r in visible])
        if parts[5] == "latest":
            found = [r for r in visible if not r["draft"] and not r["prerelease"]][:1]
        else:
            found = [r for r in visible if parts[5].isdigit() and r["id"] == int(parts[5])]
        if not found:
            return 404, {"message": "Not Found"}, {}
        return 200, self._render(repo, found[0]), {}

    def _by_id(self, method: str, parts: list[str], query: dict[str, str],
               headers: dict[str, str]) -> tuple[int, Any, dict[str, str]]:
        """``/repositories/{id}``: the repository; ``/repositories/{id}/…``: as ``/repos/…``."""
        names = [repo for repo, number in self._ids.items() if str(number) == parts[2]]
        if not names:
            return 404, {"message": "Not Found"}, {}
        if len(parts) == 3:
            return 200, {"id": self._ids[names[0]], "full_name": names[0],
                         "name": names[0].split("/")[1]}, {}
        path = "/".join(["", "repos", names[0], *parts[3:]])
        return self._route(method, path, query, headers)

    def _moved_permanently(self, path: str, query: dict[str, str], new: str,
                           by_id: bool) -> tuple[int, Any, dict[str, str]]:
        rest = path.split("/", 4)[4:]
        where = f"/repositories/{self._ids[new]}" if by_id else f"/repos/{new}"
        search = "&".join(f"{key}={value}" for key, value in query.items())
        location = self.url + "/".join([where, *rest]) + (f"?{search}" if search else "")
        answer = {"message": "Moved Permanently", "url": location,
                  "documentation_url": "https://docs.github.com/v3/#http-redirects"}
        return 301, answer, {"location": location}

    def _rate_limit_status(self) -> dict[str, Any]:
        """GET /rate_limit (docs.github.com/rest/rate-limit): free, it counts against nothing."""
        core = {"limit": self.rate_limit, "remaining": self.rate_remaining,
                "reset": self.rate_reset, "used": self.rate_limit - self.rate_remaining,
                "resource": "core"}
        return {"resources": {"core": core}, "rate": core}

    def _graphql(self, headers: dict[str, str], body: bytes) -> tuple[int, Any, dict[str, str]]:
        """Just enough GraphQL for this tool, answered in GitHub's shape: PR labels
        (``alias: pullRequest(number: N)`` fields of ``repository(owner: $owner, name: $name)``,
        null + a NOT_FOUND error for a number that is not a PR), and the batched release check
        (``alias: repository(owner: "o", name: "n") { releases(first: N, …) { nodes {…} } }``,
        null + NOT_FOUND for an unknown repository). GitHub's GraphQL API needs a token."""
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() not in ("bearer", "token") or not given.strip():
            return 401, {"message": "This endpoint requires you to be authenticated."}, {}
        try:
            request = json.loads(body)
            query = request["query"]
            if "releases(first:" in query:
                data, errors = self._release_check(query)
            else:
                data, errors = self._labels(query, request.get("variables") or {})
        except (ValueError, KeyError, TypeError):
            return 400, {"message": "Problems parsing JSON"}, {}
        answer: dict[str, Any] = {"data": data}
        if errors:
            answer["errors"] = errors
        return 200, answer, {"x-ratelimit-resource": "graphql"}

    def _labels(self, query: str, variables: dict[str, Any]
                ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        repo = f"{variables['owner']}/{variables['name']}"
        data: dict[str, Any] = {}
        errors = []
        for alias, number in re.findall(r"(\w+)\s*:\s*pullRequest\(number:\s*(\d+)\)", query):
            labels = self.pr_labels.get((repo, int(number)))
            if labels is None:
                data[alias] = None
                errors.append({"type": "NOT_FOUND", "path": ["repository", alias],
                               "message": f"Could not resolve to a PullRequest with the "
                                          f"number of {number}."})
            else:
                data[alias] = {"number": int(number),
                               "labels": {"nodes": [{"name": name} for name in labels]}}
        return {"repository": data}, errors

    _REPO_RELEASES = re.compile(r'(\w+)\s*:\s*repository\(owner:\s*"([^"]+)",\s*name:\s*"([^"]+)"'
                                r'\)\s*\{\s*releases\(first:\s*(\d+)')

    def _release_check(self, query: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        self.graphql_checks += 1
        data: dict[str, Any] = {}
        errors = []
        for alias, owner, name, first in self._REPO_RELEASES.findall(query):
            repo = f"{owner}/{name}"
            if repo not in self._repos:
                data[alias] = None
                errors.append({"type": "NOT_FOUND", "path": [alias],
                               "message": f"Could not resolve to a Repository with the name "
                                          f"'{repo}'."})
                continue
            nodes = [{"databaseId": r["id"], "tagName": r["tag_name"], "name": r["name"],
                      "isDraft": r["draft"], "isPrerelease": r["prerelease"],
                      "updatedAt": r["_updated_at"]} for r in self._repos[repo][:int(first)]]
            data[alias] = {"releases": {"nodes": nodes}}
        return data, errors

    def _org_repos(self, path: str, query: dict[str, str],
                   org: str) -> tuple[int, Any, dict[str, str]]:
        names = sorted(r for r in self._repos if r.split("/")[0].lower() == org.lower())
        if not names:
            return 404, {"message": "Not Found"}, {}
        items = [{"id": index + 1, "name": name.split("/")[1], "full_name": name,
                  "archived": name in self._archived, "disabled": False, "fork": False,
                  "html_url": f"https://github.com/{name}"}
                 for index, name in enumerate(names)]
        return self._page(path, query, items)

    def _page(
        self, path: str, query: dict[str, str], items: list[dict[str, Any]]
    ) -> tuple[int, Any, dict[str, str]]:
        """Slice one page and build GitHub's Link header (prev, next, last, first)."""

        def number(name: str, default: int, high: int) -> int:
            try:
                return min(max(int(query.get(name, default)), 1), high)
            except ValueError:
                return default

        per_page = number("per_page", self.per_page_default, 100)
        page = number("page", 1, sys.maxsize)
        last = max(1, math.ceil(len(items) / per_page))
        links: list[str] = []
        rels = [("prev", page - 1, page > 1), ("next", page + 1, page < last),
                ("last", last, page < last), ("first", 1, page > 1)]  # fmt: skip
        for rel, target, wanted in rels:
            if wanted and last > 1:
                links.append(f'<{self.url}{path}?per_page={per_page}&page={target}>; rel="{rel}"')
        extra = {"link": ", ".join(links)} if links else {}
        return 200, items[(page - 1) * per_page : page * per_page], extra

    def _handle(
        self, method: str, path: str, query: dict[str, str], headers: dict[str, str],
        body_in: bytes = b"",
    ) -> Answer:
        """Combine scripted and normal answers, apply ETag/304 and rate-limit bookkeeping."""
        with self._lock:
            queue = self._scripts.get(path)
            scripted = queue.popleft() if queue else None
            if method == "POST" and path == "/graphql":
                status, payload, extra = self._graphql(headers, body_in)
            else:
                status, payload, extra = self._route(method, path, query, headers)
            body = json.dumps(payload).encode()
            out_headers: dict[str, str] = {"content-type": JSON_CT, **extra}
            if status == 200:
                etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'
                out_headers["etag"] = etag
                inm = headers.get("if-none-match", "").split(",")
                sent = [t.strip().removeprefix("W/") for t in inm]
                if scripted is None and etag in sent:
                    status, body = 304, b""
            if scripted is not None:
                status = scripted.status
                if scripted.body is not None:
                    raw = scripted.body
                    body = raw.encode() if isinstance(raw, str) else raw
                    out_headers = {"content-type": JSON_CT}
            if status in _NO_BODY or status < 200:
                body = b""
            if not body:
                out_headers.pop("content-type", None)
            # GraphQL has a budget of its own; /rate_limit counts against nothing.
            if status == 200 and path not in ("/graphql", "/rate_limit"):
                self.rate_remaining = max(0, self.rate_remaining - 1)
            final = {
                "x-ratelimit-limit": str(self.rate_limit),
                "x-ratelimit-remaining": str(self.rate_remaining),
                "x-ratelimit-reset": str(self.rate_reset),
                "x-ratelimit-used": str(max(0, self.rate_limit - self.rate_remaining)),
                "x-ratelimit-resource": "core",
                **out_headers,
            }
            if scripted is not None:
                final.update({k.lower(): v for k, v in scripted.headers.items()})
            self.requests.append(RecordedRequest(method, path, query, headers, status,
                                                 self.clock()))
            return Answer(status, final, body, scripted.delay if scripted else 0.0)
