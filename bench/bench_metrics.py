"""What ``/metrics`` costs a poll: 100 scrapes during a no-change poll of 500 repos.

The daemon (``Daemon`` with ``[server] listen = "127.0.0.1:0"``, started paused) runs in this
process; the loopback fake GitHub (``tests/fakes/github.py``) runs in a process of its own and
serves ``org/repo-N``, one small release each, as in ``bench_poll.py`` (REST path, pacer off).
A first poll records the baseline, so each measured poll is 500 conditional requests answered
304. A scraper in a third process (as Prometheus is) sends ``GET /metrics`` 100 times, evenly
spread over 80 % of the time a poll takes, while the poll runs; the daemon's side of each
scrape (parsing the request, rendering, sending 119 KB) runs in this process and competes with
the poll's threads for its interpreter.

Two polls: with no latency, where the poll is all CPU (the worst case for a scrape), and with
50 ms of latency per answer, as bench_poll.py's concurrent row (GitHub itself answers in 100 to
300 ms). Figures, each the median over rounds in which the kinds take turns going first: the
poll with 100 scrapes against the same daemon's poll with none (target: under 5 % more wall
time), with the daemon process's CPU per scrape; the poll of a daemon with metrics on but not
scraped against one with no listener (the hooks' own cost); one scrape of an idle daemon.
And the floor: the same 100 scrapes of the same body during the same poll, served by another
process (a static answer over plain sockets), so the daemon does nothing for them: what
scraping costs the machine (the scraper, the kernel's copies, the cores they take from the poll
and the fake GitHub), which no listener in the daemon's process can go below.
"""

from __future__ import annotations

import gc
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run_all import TESTS, TOKEN, Row, print_table, seconds, timed, verdict

from watcher.app import Dependencies, build_daemon
from watcher.config import Config, Secrets, config_from_dict
from watcher.daemon.loop import Daemon

REPOS = 500
SCRAPES = 100
REPEAT = 21
REPEAT_LATENCY = 9
LATENCY = 0.05  # seconds the fake waits before each answer (GitHub's own: ~0.1-0.3 s)
TARGET = 0.05

# Waits for "GO <interval>" on stdin, then scrapes SCRAPES times at that interval over one
# keep-alive connection and prints how many answers came back 200 and how long all took. Plain
# sockets: the scraper's own work (Prometheus runs elsewhere) should take as little of this
# machine's two cores from the poll as it can.
SCRAPER = """
import socket, sys, time
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
REQUEST = f"GET /metrics HTTP/1.1\\r\\nHost: {host}\\r\\n\\r\\n".encode()

def scrape(conn, buffer):
    conn.sendall(REQUEST)
    while b"\\r\\n\\r\\n" not in buffer:
        buffer += conn.recv(65536)
    head, _, body = buffer.partition(b"\\r\\n\\r\\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\\r\\n")[0])
    while len(body) < length:
        body += conn.recv(65536)
    return head.split(b" ")[1] == b"200", body[length:]

with socket.create_connection((host, port)) as conn:
    scrape(conn, b"")  # connected before the clock starts
    print("READY", flush=True)
    for line in sys.stdin:
        interval = float(line.split()[1])
        start, ok, rest = time.perf_counter(), 0, b""
        for index in range(count):
            answered, rest = scrape(conn, rest)
            ok += answered
            pause = start + (index + 1) * interval - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
        print(f"DONE {ok} {time.perf_counter() - start:.4f}", flush=True)
"""


def daemon_config(api_url: str, store: Path, *, listen: bool) -> Config:
    data: dict[str, object] = {
        "github": {"api_url": api_url, "graphql_threshold": 10**9},
        "store": {"path": str(store)},
        "repos": [{"name": f"org/repo-{index}"} for index in range(REPOS)],
        "notifiers": [{"name": "log", "type": "jsonl", "path": str(store.parent / "e.jsonl")}],
    }
    if listen:
        data["server"] = {"listen": "127.0.0.1:0"}
    return config_from_dict(data, base_dir=store.parent, source="bench_metrics")


def started(config: Config) -> Daemon:
    deps = Dependencies(stdout=io.StringIO(), secrets=Secrets(GITHUB_TOKEN=TOKEN), environ={})
    daemon = build_daemon(config, deps)
    daemon.start(paused=True)  # the scheduler is there (/healthz), no job runs by itself
    assert daemon.runtime is not None
    daemon.runtime.client.pacer = daemon.runtime.client.graphql_pacer = None
    return daemon


def poll(daemon: Daemon, *, unchanged: bool = True) -> tuple[float, float]:
    """(wall seconds, this process's CPU seconds) of one poll."""
    assert daemon.runtime is not None
    poller = daemon.runtime.poller
    repos = poller.watched()[0]
    reports = []
    cpu = time.process_time()
    wall = timed(lambda: reports.append(poller.poll(repos)))
    cpu = time.process_time() - cpu
    clean = all(o.not_modified for o in reports[0].outcomes) or not unchanged
    if reports[0].failed or not clean:
        raise RuntimeError("the benchmark poll was not a clean no-change poll")
    return wall, cpu


class Scraper:
    """The scraping process; ``during`` runs a poll while it scrapes."""

    def __init__(self, host: str, port: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SCRAPER, host, str(port), str(SCRAPES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._expect("READY")

    def _expect(self, word: str) -> list[str]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline().split()
        if not line or line[0] != word:
            raise RuntimeError(f"scraper said {line!r}, not {word}")
        return line[1:]

    def start(self, interval: float) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"GO {interval}\n")
        self.process.stdin.flush()

    def finished(self) -> tuple[int, float]:
        """(scrapes answered 200, seconds the scrapes took)."""
        ok, took = self._expect("DONE")
        return int(ok), float(took)

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


# The floor's server: the daemon's scrape body, answered to every request over keep-alive
# connections, by a process of its own doing nothing else.
STATIC = r"""
import socket, sys, threading
body = open(sys.argv[1], "rb").read()
head = (f"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n"
        f"content-length: {len(body)}\r\n\r\n").encode()
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)

def serve(conn):
    buffer = b""
    while data := conn.recv(65536):
        buffer += data
        while b"\r\n\r\n" in buffer:
            buffer = buffer.partition(b"\r\n\r\n")[2]
            conn.sendmsg([head, body])

while True:
    threading.Thread(target=serve, args=(server.accept()[0],), daemon=True).start()
"""


class StaticServer:
    def __init__(self, body: bytes, tmp: Path) -> None:
        path = tmp / "metrics-body"
        path.write_bytes(body)
        self.process = subprocess.Popen(
            [sys.executable, "-c", STATIC, str(path)], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)


# The fake GitHub in a process of its own: in the daemon's process there are then only the
# poll's threads and the listener, as in production (in process, the fake's 20 server threads
# would compete with the listener for the interpreter's lock too, which no deployment does).
FAKE = """
import sys
sys.path.insert(0, sys.argv[1])
from fakes.github import FakeGitHub
fake = FakeGitHub(latency=float(sys.argv[4])).start()
fake.set_token(sys.argv[2])
for index in range(int(sys.argv[3])):
    fake.add_release(f"org/repo-{index}", tag="v1.0.0", name="v1.0.0",
                     body="## Bug Fixes\\n\\n- Fix a crash on empty input (#12)\\n")
print(fake.url, flush=True)
for line in sys.stdin:
    fake.reset_requests()  # its request log would grow all run long
fake.stop()
"""


class FakeProcess:
    def __init__(self, latency: float) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", FAKE, str(TESTS), TOKEN, str(REPOS), str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        if not self.url.startswith("http://"):
            raise RuntimeError(f"the fake GitHub did not start: {self.url!r}")

    def reset_requests(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("reset\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def measure(fake: FakeProcess, tmp: Path, repeat: int, *, floor: bool = False) -> dict[str, float]:
    plain = started(daemon_config(fake.url, tmp / "plain" / "store", listen=False))
    listening = started(daemon_config(fake.url, tmp / "listening" / "store", listen=True))
    try:
        for daemon in (plain, listening):
            poll(daemon, unchanged=False)  # the baseline poll: every later one is 304s
        # Spread over ~80 % of a quiet poll, so all the scrapes land while the poll runs.
        interval = 0.8 * statistics.median(poll(listening)[0] for _ in range(3)) / SCRAPES
        listener = listening.service.listener
        assert listener is not None
        kinds = ["plain", "quiet", "scraped"]
        scrapers = {"scraped": Scraper(listener.host, listener.port)}
        static = None
        if floor:
            static = StaticServer(listening_scrape(listener.url + "/metrics")[0], tmp)
            scrapers["elsewhere"] = Scraper("127.0.0.1", static.port)
            kinds.append("elsewhere")
        runs: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
        answered, spans = [], []
        try:
            for round_ in range(repeat):
                # Each kind goes first, second... in turn: a drift of the machine's load
                # within a round falls on all of them alike.
                turn = round_ % len(kinds)
                for kind in kinds[turn:] + kinds[:turn]:
                    fake.reset_requests()  # the fake's request log would grow all run long
                    gc.collect()  # each poll starts with nothing for the collector to do
                    if kind in scrapers:
                        scrapers[kind].start(interval)
                    runs[kind].append(poll(plain if kind == "plain" else listening))
                    if kind in scrapers:
                        ok, took = scrapers[kind].finished()
                        answered.append(ok)
                        spans.append(took)
        finally:
            for scraper in scrapers.values():
                scraper.close()
            if static is not None:
                static.stop()
        body = listening_scrape(listener.url + "/metrics")
    finally:
        plain.stop()
        listening.stop()

    def added(kind: str, base: str, index: int) -> float:
        # Each round's poll against its round's baseline, then the median over the rounds.
        return statistics.median(
            a[index] / b[index] - 1 for a, b in zip(runs[kind], runs[base], strict=True)
        )

    floor_figures = {"floor": added("elsewhere", "quiet", 0)} if floor else {}
    return {
        **floor_figures,
        "scraped": statistics.median(w for w, _ in runs["scraped"]),
        "quiet": statistics.median(w for w, _ in runs["quiet"]),
        "plain": statistics.median(w for w, _ in runs["plain"]),
        "added": added("scraped", "quiet", 0),
        "added_cpu": added("scraped", "quiet", 1),
        "hooks": added("quiet", "plain", 0),
        "hooks_cpu": added("quiet", "plain", 1),
        # The daemon's own CPU per scrape: what the scraped poll's process spent over the quiet
        # one's, round by round.
        "per_scrape": statistics.median(
            (a[1] - b[1]) / SCRAPES for a, b in zip(runs["scraped"], runs["quiet"], strict=True)
        ),
        "answered": min(answered),
        "late": max(spans),
        "bytes": len(body[0]),
        "scrape": body[1],
    }


def listening_scrape(url: str) -> tuple[bytes, float]:
    """One scrape's body and its median time on a quiet daemon (20 scrapes)."""
    import httpx

    with httpx.Client() as client:
        client.get(url)
        times = []
        for _ in range(20):
            start = time.perf_counter()
            body = client.get(url).content
            times.append(time.perf_counter() - start)
    return body, statistics.median(times)


def scenario(latency: float, repeat: int, tmp: Path, *, floor: bool = False) -> dict[str, float]:
    fake = FakeProcess(latency)
    try:
        return measure(fake, tmp / f"latency-{latency}", repeat, floor=floor)
    finally:
        fake.stop()


def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="bench-metrics-") as tmp:
        worst = scenario(0.0, REPEAT, Path(tmp), floor=True)
        real = scenario(LATENCY, REPEAT_LATENCY, Path(tmp))
    rows = []
    for figures, how in (
        (worst, "no latency: the poll all CPU"),
        (real, f"{LATENCY * 1000:.0f} ms latency"),
    ):
        added = figures["added"]
        rows.append(
            Row(
                f"no-change poll, {REPOS} repos, {how}, {SCRAPES} scrapes of /metrics during it",
                seconds(figures["scraped"]),
                f"{seconds(figures['quiet'])} not scraped",
                f"wall {added:+.1%}, process CPU {figures['added_cpu']:+.1%} "
                f"({figures['per_scrape'] * 1000:.2f} ms a scrape, "
                f"{int(figures['answered'])}/{SCRAPES} answered 200); "
                + verdict(added < TARGET, f"< {TARGET:.0%}"),
            )
        )
    rows.append(
        Row(
            f"the floor: the same {SCRAPES} scrapes, no latency, served by another process",
            f"wall {worst['floor']:+.1%}",
            f"wall {worst['added']:+.1%} served by the daemon",
            "what scraping costs this machine (scraper, kernel), the daemon doing nothing for it",
        )
    )
    rows.append(
        Row(
            f"no-change poll, {REPOS} repos, no latency, metrics on (listener, not scraped)",
            seconds(worst["quiet"]),
            f"{seconds(worst['plain'])} no listener",
            f"wall {worst['hooks']:+.1%}, process CPU {worst['hooks_cpu']:+.1%}: the hooks' cost",
        )
    )
    rows.append(
        Row(
            f"one /metrics scrape after a {REPOS}-repo poll",
            seconds(worst["scrape"]),
            f"{worst['bytes'] / 1024:.0f} KB",
            "median of 20, over one connection, the daemon idle",
        )
    )
    return rows


if __name__ == "__main__":
    print_table(run())
