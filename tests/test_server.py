"""The daemon's listener: routing, errors that never reach the client as tracebacks,
``/healthz`` (the scheduler runs), ``/readyz`` (exactly ``status --check``'s judgement, by the
same function), ``[server]`` in the config, and no endpoint that gives a secret away."""

from __future__ import annotations

import json
import logging
import socket

import httpx
import pytest
from conftest import SLACK_TOKEN, TOKEN
from fakes.github import Scripted
from fakes.loopback import exchange
from fakes.slack import WEBHOOK_PATH
from fakes.slack import Scripted as SlackScripted
from server_support import LISTEN, Served

from watcher.errors import WatcherError
from watcher.server import Listener, Request, Response, Route, dispatch


def ok(text: str):
    return lambda request: Response(200, text.encode())


ROUTES = {
    "/a": ok("a"),
    "/feeds/": ok("feeds"),
    "/feeds/special/": ok("special"),
    "/post": Route(ok("posted"), frozenset({"POST"})),
}


@pytest.mark.parametrize(
    ("method", "path", "status", "body"),
    [
        ("GET", "/a", 200, b"a"),
        ("HEAD", "/a", 200, b"a"),  # the listener leaves the body off
        ("GET", "/feeds/x.atom", 200, b"feeds"),
        ("GET", "/feeds/special/y", 200, b"special"),  # the longest prefix wins
        ("GET", "/feeds", 404, b"not found\n"),  # a prefix route is not its bare name
        ("GET", "/a/", 404, b"not found\n"),  # an exact route is exact
        ("GET", "/nothing", 404, b"not found\n"),
        ("POST", "/a", 405, b"method not allowed\n"),
        ("POST", "/post", 200, b"posted"),
        ("GET", "/post", 405, b"method not allowed\n"),
    ],
    ids=lambda v: str(v),
)
def test_routes_exact_and_by_prefix(method, path, status, body):
    response = dispatch(ROUTES, Request(method, path))
    assert (response.status, response.body) == (status, body)


def test_405_says_which_methods_are_allowed():
    assert dispatch(ROUTES, Request("PUT", "/a")).headers == {"allow": "GET, HEAD"}
    assert dispatch(ROUTES, Request("GET", "/post")).headers == {"allow": "POST"}


def test_a_failing_endpoint_is_a_bare_500_and_one_log_line(caplog):
    def broken(request: Request) -> Response:
        raise RuntimeError(f"boom with {TOKEN}\nsecond line")

    with caplog.at_level(logging.ERROR, logger="watcher.server.listener"):
        response = dispatch({"/x": broken}, Request("GET", "/x"))
    assert (response.status, response.body) == (500, b"internal error\n")
    (record,) = caplog.records
    assert record.exc_info is None and "\n" not in record.getMessage()
    assert "GET /x failed: RuntimeError: boom" in record.getMessage()


@pytest.fixture
def listener():
    def broken(request: Request) -> Response:
        raise ValueError("internal detail /etc/secret")

    routes = {
        **ROUTES,
        "/broken": broken,
        "/echo": Route(lambda r: Response(200, r.body + r.query.encode()), frozenset({"POST"})),
    }
    server = Listener("127.0.0.1", 0, routes)
    server.start()
    yield server
    server.stop()


def test_over_http_no_traceback_no_detail_and_head_has_no_body(listener):
    with httpx.Client(base_url=listener.url) as client:
        broken = client.get("/broken")
        assert broken.status_code == 500 and broken.text == "internal error\n"
        assert "Traceback" not in broken.text and "/etc/secret" not in broken.text
        head = client.head("/a")
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-length"] == "1"
        assert client.get("/nothing").status_code == 404
        assert client.delete("/a").status_code == 405
        echoed = client.post("/echo?x=1", content=b"payload")
        assert echoed.text == "payloadx=1"
        assert client.get("/a").headers["x-content-type-options"] == "nosniff"


def test_a_body_past_the_limit_is_refused(listener):
    from watcher.server.listener import MAX_BODY

    with httpx.Client(base_url=listener.url) as client:
        response = client.post("/echo", content=b"x" * (MAX_BODY + 1))
    assert response.status_code == 413


def raw(listener, data: bytes) -> bytes:
    """What the listener answers to ``data`` sent as is, until it closes the connection."""
    return exchange(listener.port, data, listener.host)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"GARBAGE\r\n\r\n", b"400"),
        (b"GET /a HTTP/2.0\r\n\r\n", b"400"),
        (b"GET /a HTTP/1.1\r\nno colon here\r\n\r\n", b"400"),
        (b"GET /a HTTP/1.1\r\nX: " + b"y" * 9000 + b"\r\n\r\n", b"400"),
        (b"GET /a HTTP/1.1\r\n" + b"X: y\r\n" * 101 + b"\r\n", b"431"),
        (b"POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", b"411"),
        (b"POST /echo HTTP/1.1\r\nContent-Length: x\r\n\r\n", b"400"),
        (b"GET /a HTTP/1.0\r\n\r\n", b"200"),  # HTTP/1.0: answered, then closed
        (b"GET /a HTTP/1.1\r\nConnection: close\r\n\r\n", b"200"),
    ],
    ids=[
        "no-version",
        "http2",
        "field-without-colon",
        "field-too-long",
        "too-many-fields",
        "chunked",
        "bad-length",
        "http-1.0",
        "connection-close",
    ],
)
def test_malformed_requests_are_refused_and_the_connection_closed(listener, data, status):
    answer = raw(listener, data)
    assert answer.split(b" ", 2)[1] == status, answer[:200]
    assert b"Traceback" not in answer


def test_keep_alive_serves_several_requests_on_one_connection(listener):
    request = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
    answer = raw(listener, request * 3 + b"GET /a HTTP/1.1\r\nConnection: close\r\n\r\n")
    assert answer.count(b"HTTP/1.1 200 OK") == 4


@pytest.mark.slow
@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"GET /a HTTP/1.1\r\n\r\n",  # answered, then idle on the kept-alive connection
        b"GET /a HT",
        b"GET /a HTTP/1.1\r\nHost: x\r\n",
        b"POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",
    ],
    ids=["idle", "idle-after-one", "part-of-the-line", "part-of-the-fields", "part-of-the-body"],
)
def test_a_client_that_stops_sending_is_dropped_unanswered_after_the_idle_timeout(
    listener, monkeypatch, data
):
    """The kernel times each wait (SO_RCVTIMEO): a request that stops coming is never
    answered as if it had ended, and the connection is closed (0.2 s here, 15 s for real)."""
    import time

    from watcher.server import listener as module

    monkeypatch.setattr(module, "IDLE_TIMEOUT", 0.2)
    start = time.monotonic()
    answer = raw(listener, data)
    assert 0.15 < time.monotonic() - start < 5
    assert answer.count(b"HTTP/1.1") == (1 if data.startswith(b"GET /a HTTP/1.1\r\n\r\n") else 0)


def test_a_port_in_use_is_one_clear_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(
            WatcherError,
            match=rf"cannot listen on 127.0.0.1:{port} "
            r"\(\[server\] listen\)",
        ):
            Listener("127.0.0.1", port, ROUTES).start()


# ---- the daemon's endpoints -----------------------------------------------------------------

JSONL = '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'


@pytest.fixture
def served(write_config, clock):
    made: list[Served] = []

    def serve(
        notifiers: str = JSONL, extra: str = "", env: dict[str, str] | None = None, **options
    ):
        config = write_config(LISTEN + extra, notifiers=notifiers, **options)
        made.append(Served(config, clock, env))
        return made[-1], config

    yield serve
    for server in made:
        server.close()


def test_healthz_is_200_while_the_scheduler_runs_and_503_once_stopped(served):
    server, _ = served()
    assert server.get("/healthz").status_code == 200
    server.daemon.stopping.set()  # SIGTERM: what is in flight finishes, nothing new starts
    stopping = server.get("/healthz")
    assert stopping.status_code == 503 and "stopp" in stopping.text
    server.daemon.stopping.clear()
    assert server.daemon.scheduler is not None
    server.daemon.scheduler.shutdown(wait=False)
    assert server.get("/healthz").status_code == 503
    url = server.url
    server.close()
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/healthz")
    server.close = lambda: None  # type: ignore[method-assign]


def check(run_cli, config) -> tuple[int, str]:
    result = run_cli("--config", str(config), "status", "--check", "--json")
    return result.code, json.loads(result.stdout)["health"]


def assert_same_judgement(server, run_cli, config, expected: int) -> dict:
    code, health = check(run_cli, config)
    ready = server.get("/readyz")
    assert ready.headers["content-type"] == "application/json"
    body = ready.json()
    assert (ready.status_code, body["ready"]) == ({0: 200, 1: 503}[code], code == 0)
    assert body["health"] == health
    assert body["role"] == "leader"  # the embedded store's one daemon always leads
    assert code == expected, health
    metrics = server.get("/metrics").text
    assert "# TYPE release_watch_leader gauge\nrelease_watch_leader 1\n" in metrics
    return body


def test_readyz_is_503_exactly_when_status_check_exits_1(served, run_cli, fake_github, clock):
    fake_github.set_token(TOKEN)
    fake_github.add_release("pytorch/pytorch", tag="v1", body="- Fix (#1)")
    fake_github.add_release("pytorch/xla", tag="v1", body="- Fix (#1)")
    server, config = served(
        extra='[poll]\ninterval = "10m"\nmax_failed_polls = 2\n', github="retries = 0"
    )
    assert "no successful poll" in assert_same_judgement(server, run_cli, config, 1)["health"]
    server.poll()
    assert_same_judgement(server, run_cli, config, 0)
    clock.sleep(31 * 60)  # past 3 poll intervals with no poll
    assert "older than" in assert_same_judgement(server, run_cli, config, 1)["health"]
    server.poll()
    assert_same_judgement(server, run_cli, config, 0)
    for _ in range(2):  # one repo fails poll.max_failed_polls polls in a row
        fake_github.script("/repos/pytorch/xla/releases", Scripted.server_error(502))
        clock.sleep(600)
        server.poll()
    assert (
        "pytorch/xla failed 2 polls in a row"
        in assert_same_judgement(server, run_cli, config, 1)["health"]
    )
    clock.sleep(600)
    server.poll()
    assert_same_judgement(server, run_cli, config, 0)


def test_readyz_masks_secrets_in_what_it_quotes(served, run_cli, fake_github, fake_slack):
    """A permanent delivery failure makes both unready; its recorded error quotes the webhook
    URL (http.client names it when it refuses one): neither shows it, nor does any endpoint."""
    fake_github.add_release("pytorch/xla", tag="v1", body="- Fix (#1)")
    notifiers = (
        '[[notifiers]]\nname = "hook"\ntype = "slack"\ndelivery = "webhook"\n'
        'webhook_url = { env = "TEAM_HOOK" }\nretries = 0\nmin_interval = "0s"\n'
    )
    env = {"TEAM_HOOK": fake_slack.webhook_url, "SLACK_BOT_TOKEN": SLACK_TOKEN}
    server, config = served(
        notifiers, env=env, repos=("pytorch/xla",), slack_url=fake_slack.api_url
    )
    fake_slack.script(WEBHOOK_PATH, SlackScripted.server_error())
    server.poll()
    assert server.daemon.runtime is not None
    store = server.daemon.runtime.store
    (delivery,) = store.pending_deliveries()
    store.delivery_failed(delivery, f"hook: refused {fake_slack.webhook_url}", permanent=True)
    ready = server.get("/readyz")
    assert ready.status_code == 503 and "cannot deliver: hook: refused ***" in ready.text
    assert fake_slack.webhook_url not in ready.text
    assert run_cli("--config", str(config), "status", "--check", env=env).code == 1
    secret = WEBHOOK_PATH.rsplit("/", 1)[-1]
    for path in ("/readyz", "/healthz", "/metrics", "/feeds/hook.atom"):
        text = server.get(path).text
        assert secret not in text and TOKEN not in text and SLACK_TOKEN not in text, path


def test_config_check_shows_server_and_refuses_a_bad_listen(write_config, run_cli):
    config = write_config('[server]\nlisten = "127.0.0.1:9464"\n')
    result = run_cli("--config", str(config), "config", "check")
    assert result.code == 0, result.stderr
    assert '"server": {\n    "listen": "127.0.0.1:9464",\n    "backlog": 1024\n  }' in result.stdout
    assert "reachable from other machines" not in result.stdout
    outside = run_cli(
        "--config", str(write_config('[server]\nlisten = "0.0.0.0:9464"\n')), "config", "check"
    )
    assert (
        outside.code == 0
        and "# note: [server] listen = 0.0.0.0:9464 is reachable from other machines"
        in outside.stdout
    )
    for bad, why in [
        ("9464", "is not HOST:PORT"),
        ("127.0.0.1:70000", "not in 0-65535"),
        ("::1:9464", "IPv6 address in brackets"),
        ("a b:9464", "not a host"),
    ]:
        config = write_config(f'[server]\nlisten = "{bad}"\n')
        result = run_cli("--config", str(config), "config", "check")
        assert result.code == 2, bad
        assert "server.listen" in result.stderr and why in result.stderr, (bad, result.stderr)


def test_without_listen_there_is_no_listener_and_no_metrics(write_config):
    from watcher.app import Dependencies, build_daemon
    from watcher.config import load_config
    from watcher.metrics import Metrics

    config = load_config(write_config())
    assert config.server.listen is None
    daemon = build_daemon(config, Dependencies())
    assert daemon.service.address is None and type(daemon.deps.metrics) is Metrics


@pytest.mark.slow
@pytest.mark.parametrize(
    ("host", "warned"), [("127.0.0.1", False), ("localhost", False), ("0.0.0.0", True)]
)
def test_a_host_other_than_loopback_says_it_is_reachable_from_outside(
    write_config, clock, caplog, host, warned
):
    config = write_config(f'[server]\nlisten = "{host}:0"\n')
    with caplog.at_level(logging.WARNING, logger="watcher.server.endpoints"):
        server = Served(config, clock)
    try:
        assert server.get("/healthz").status_code == 200
    finally:
        server.close()
    lines = [r.getMessage() for r in caplog.records if "reachable from other" in r.getMessage()]
    assert len(lines) == int(warned), lines


def test_a_reload_that_moves_the_listener_says_it_needs_a_restart(served, caplog):
    server, config = served()
    config.write_text(
        config.read_text().replace('listen = "127.0.0.1:0"', 'listen = "127.0.0.1:9999"')
    )
    from watcher.config import load_config

    with caplog.at_level(logging.WARNING, logger="watcher.server.endpoints"):
        assert server.daemon.reload(lambda: load_config(config))
    assert any("restarted" in r.getMessage() for r in caplog.records)
    assert server.get("/healthz").status_code == 200  # still served where it was
