"""Issue 29's attack rows replayed against a live listener on loopback: for each, the attempts
made, how many were refused, and how long one took (median and worst).

The listener is the daemon's (``watcher.server.Listener``) serving the real request URL
endpoint (``handlers.slack.slash_command_endpoint``) over the real subscribe service and a
store in a temporary directory; a restart is a new store connection, service and listener on
the same directory. The secrets and URL rows run ``release-watch config check`` in-process
with the environment given. The baseline is a valid signed command answered in the same run.

    python bench/bench_attacks.py [--markdown]
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import logging
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode

from run_all import TESTS, Row, print_table, seconds

from handlers.slack import slash_command_endpoint
from watcher.server import Listener, Response, Route
from watcher.store import Store
from watcher.subscribe import CommandSettings, SlashCommands

SECRET = "bench-signing-secret-0123456789abcdef"
FRAMING = {
    "Content-Length 1²": "Content-Length: 1\u00b2\r\n",
    "Content-Length of 5,000 digits": "Content-Length: " + "9" * 5000 + "\r\n",
    "Content-Length twice": "Content-Length: 5\r\nContent-Length: 0\r\n",
    "Content-Length and chunked": "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
    "Transfer-Encoding gzip": "Transfer-Encoding: gzip\r\n",
    "NUL in a field": "X: a\x00b\r\n",
}
TIMESTAMPS = ["1\u00b2", "9" * 5000, "-1", "1.5", "0x10", "1 1"]


class Served:
    """The request URL on a live listener over a store in ``path``."""

    def __init__(self, path: Path) -> None:
        self.store = Store.open(path)
        settings = CommandSettings(repos=["pytorch/pytorch"])
        self.commands = SlashCommands(self.store, lambda: settings, lambda: datetime.now(UTC))
        endpoint = slash_command_endpoint(SECRET, self.commands.respond_once, time.time)
        self.listener = Listener("127.0.0.1", 0, {
            "/slack/commands": Route(endpoint, frozenset({"POST"})),
            "/healthz": lambda request: Response(200, b"ok\n"),
        })
        self.listener.start()

    def close(self) -> None:
        self.listener.stop()
        self.store.close()


@contextlib.contextmanager
def served(path: Path) -> Iterator[Served]:
    server = Served(path)
    try:
        yield server
    finally:
        server.close()


def signed_request(text: str, channel: str, *, timestamp: str | None = None,
                   user: str = "U0BENCH") -> bytes:
    body = urlencode({"team_id": "T0BENCH", "channel_id": channel, "channel_name": "bench",
                      "user_id": user, "command": "/release-watch", "text": text}).encode()
    stamp = str(int(time.time()))
    signature = "v0=" + hmac.new(SECRET.encode(), f"v0:{stamp}:".encode() + body,
                                 hashlib.sha256).hexdigest()
    return (f"POST /slack/commands HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            f"X-Slack-Request-Timestamp: {timestamp or stamp}\r\n"
            f"X-Slack-Signature: {signature}\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode() + body


def send(port: int, data: bytes) -> bytes:
    """What the listener answers to ``data`` sent as it is (``tests/fakes/loopback.py``)."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from fakes.loopback import exchange

    return exchange(port, data)


def status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def attempts(tries: list[Callable[[], bool]]) -> tuple[int, list[float]]:
    """How many of ``tries`` were refused (each returns whether it was), and each one's time."""
    refused, took = 0, []
    for attempt in tries:
        start = time.perf_counter()
        refused += attempt()
        took.append(time.perf_counter() - start)
    return refused, took


def row(name: str, refused: int, took: list[float], baseline: float, note: str = "",
        *, verb: str = "refused") -> Row:
    figure = f"{len(took)} attempts, {refused} {verb}"
    spent = f"median {seconds(statistics.median(took))}, worst {seconds(max(took))}"
    return Row(f"attack: {name}", figure, seconds(baseline),
               f"{spent}{'; ' + note if note else ''}")


def replays(path: Path, baseline: float) -> list[Row]:
    captured = [signed_request("subscribe distributed", f"C0REPLAY{n}") for n in range(20)]
    with served(path) as server:
        for request in captured:
            assert status(send(server.listener.port, request)) == 200
    with served(path) as server:  # restarted: a new process would find the same store
        refused, took = attempts([lambda r=r: status(send(server.listener.port, r)) == 401
                                  for r in captured])
        kept = len(server.store.subscriptions())
    rows = [row("signed request replayed after a restart", refused, took, baseline,
                f"{kept} subscriptions kept of 20 sent")]
    with served(path) as server:
        answers: list[int] = []
        took = []
        for round_ in range(10):
            request = signed_request("subscribe cuda", f"C0RACE{round_}")
            gate = threading.Barrier(8)

            def post(request: bytes = request, gate: threading.Barrier = gate) -> None:
                gate.wait()
                answers.append(status(send(server.listener.port, request)))

            threads = [threading.Thread(target=post) for _ in range(8)]
            start = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            took.append(time.perf_counter() - start)
        done = sum(1 for sub in server.store.subscriptions() if sub.channel.startswith("C0RACE"))
    rows.append(Row("attack: 8 copies of one signed request at once", f"{len(answers)} attempts, "
                    f"{answers.count(401)} refused", seconds(baseline),
                    f"{done} of 10 rounds had an effect, exactly one each; a round "
                    f"median {seconds(statistics.median(took))}"))
    return rows


def framing(port: int, baseline: float) -> list[Row]:
    rows = []
    tries = [lambda f=f: status(send(port, f"POST /slack/commands HTTP/1.1\r\nHost: x\r\n{f}\r\n"
                                      .encode())) in (400, 411, 501) for f in FRAMING.values()]
    refused, took = attempts(tries)
    rows.append(row("malformed framing", refused, took, baseline,
                    f"{', '.join(FRAMING)}: 400/501, never 500 or a silent close"))
    tries = [lambda t=t: status(send(port, signed_request("help", "C0BENCH", timestamp=t))) == 401
             for t in TIMESTAMPS]
    refused, took = attempts(tries)
    rows.append(row("malformed timestamps", refused, took, baseline,
                    "1², 5,000 digits, -1, 1.5, 0x10, '1 1': 401 and one warning, never 500"))
    return rows


def burst(backlog: int) -> float:
    server = Listener("127.0.0.1", 0, {"/healthz": lambda request: Response(200, b"ok\n")},
                      backlog=backlog)
    server.start()
    clients = []
    try:
        for _ in range(500):
            client = socket.socket()
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", server.port))
            clients.append(client)
        start = time.monotonic()
        answer = send(server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200")
        return time.monotonic() - start
    finally:
        for client in clients:
            client.close()
        server.stop()


def backlog_rows() -> list[Row]:
    probes = {backlog: [burst(backlog) for _ in range(5)] for backlog in (1024, 128, 5)}
    ours = probes[1024]
    return [Row("attack: a probe during a burst of 500 connects (backlog 1024)",
                f"5 probes, {sum(t >= 0.1 for t in ours)} past 100 ms",
                f"backlog 128: median {seconds(statistics.median(probes[128]))}; "
                f"5: {seconds(statistics.median(probes[5]))}",
                f"median {seconds(statistics.median(ours))}, worst {seconds(max(ours))}")]


def slash_rows(port: int, baseline: float) -> list[Row]:
    def answer(request: bytes) -> bytes:
        return send(port, request).split(b"\r\n\r\n", 1)[1]

    ids = ["C123\nforged", "#general", "c0lower", "X0123", "C" * 40, ""]
    refused, took = attempts([lambda c=c: b"not a Slack id" in answer(
        signed_request("subscribe", c)) for c in ids])
    rows = [row("channel ids of no Slack shape", refused, took, baseline, "one line each")]
    hostile = "subscribe \x1b[31m\x07 \u202eexe.txt"
    refused, took = attempts([lambda: b"\\\\x1b" in answer(signed_request(hostile, "C0BENCH"))
                              and b"\\u001b" not in answer(signed_request(hostile, "C0BENCH"))])
    rows.append(row("ESC, BEL and U+202E echoed", refused, took, baseline, "shown as escapes",
                    verb="neutralised"))
    big = [signed_request("subscribe " + "x" * size, f"C0BIG{size}") for size in
           (5_000, 100_000, 500_000)]
    refused, took = attempts([lambda r=r: b"Slack sends at most 4,000" in answer(r) for r in big])
    rows.append(row("text of 5 KB, 100 KB, 500 KB", refused, took, baseline,
                    "one line, before the store is waited for"))
    words = " ".join(f"w{index}" for index in range(600))
    sizes: list[int] = []
    refused, took = attempts([lambda: sizes.append(len(answer(signed_request(
        f"subscribe {words}", "C0WORDS")))) is None])
    rows.append(row("600 unknown words", 1, took, baseline, f"answer of {sizes[0]} bytes "
                    "(first 3 named, the rest counted)", verb="bounded"))
    return rows


def secrets_rows(baseline: float) -> list[Row]:
    from watcher.app import Dependencies
    from watcher.cli.commandline import main
    from watcher.config import Secrets

    def check(env: dict[str, str], config: Path) -> tuple[int, str]:
        out, err = io.StringIO(), io.StringIO()
        deps = Dependencies(stdout=out, secrets=Secrets.model_validate(env), environ=env)
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(["--config", str(config), "config", "check"], deps)
        return code, out.getvalue() + err.getvalue()

    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "release-watch.toml"
        config.write_text('[github]\napi_url = "https://octo:hunter22@ghe.example/api/v3'
                          '?access_token=ghp_querysecret"\n[store]\npath = "store"\n'
                          '[[repos]]\nname = "pytorch/pytorch"\n[[notifiers]]\nname = "log"\n'
                          'type = "jsonl"\npath = "e.jsonl"\n')
        names = ["SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "GITHUB_TOKEN",
                 "SLACK_WEBHOOK_URL"]
        tries = [lambda n=n, v=v: check({n: v}, config)[0] == 2 for n in names
                 for v in (" ", "\t\n ")]
        refused, took = attempts(tries)
        rows = [row("secrets of nothing but whitespace (config check)", refused, took,
                    baseline, "exit 2, one line naming the variable")]
        refused, took = attempts([lambda: (lambda shown: "hunter22" not in shown
                                           and "ghp_querysecret" not in shown)(
            check({}, config)[1])])
        rows.append(row("credentials inside [github] api_url (config check)", refused, took,
                        baseline, "user:pass@ and ?access_token= shown as ***", verb="masked"))
    return rows


def run() -> list[Row]:
    logging.getLogger().addHandler(logging.NullHandler())  # the refusals' warnings: not here
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "store"
        with served(path) as server:
            port = server.listener.port
            valid = [signed_request("help", "C0BENCH", user=f"U0B{n}") for n in range(20)]
            _, took = attempts([lambda r=r: status(send(port, r)) == 200 for r in valid])
            baseline = statistics.median(took)
            rows = framing(port, baseline) + slash_rows(port, baseline)
        rows = replays(path, baseline) + rows
    return rows + backlog_rows() + secrets_rows(baseline)


if __name__ == "__main__":
    print_table(run())
