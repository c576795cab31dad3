"""Watch lists from 500 to 5,000 repositories on the loopback fake GitHub (with a token).

1. Whole processes, 500 repos, nothing changed: ``release-watch poll`` over REST (500
   conditional requests), on the embedded store and (where a PostgreSQL server can be
   started) on PostgreSQL, and with the batched GraphQL check (10 queries), against a bare
   httpx script that sends the same 500 conditional requests over as many connections
   (interpreter start, ``import httpx`` and the requests; no store, no planning). Two
   figures each, medians of interleaved runs: the client's CPU time (user + system: its
   overhead, whatever the network) and the wall time a user waits.
2. In process, 500 / 2,000 / 5,000 repos on a virtual clock (the pacer's waits take no real
   time, and its clock says when each request was let go):
   * the first poll: its cost per repo (REST reads of every repo, records, the checks);
   * a no-change poll with the GraphQL check (the default above 50 repos with a token);
   * a no-change poll over REST only: its busiest minute (requests let go in any 60 s window,
     anywhere) against GitHub's 900 a minute, and how long the pacer made it wait against
     the least its own ceiling allows (``github.max_requests_per_minute`` requests a minute:
     ``ceil(N / ceiling) - 1`` minutes of waiting for N requests).
"""

from __future__ import annotations

import io
import json
import math
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from run_all import TESTS, TOKEN, Row, fake_github, print_table, seconds, timed, times, verdict

from watcher.app import Dependencies, Runtime, build_runtime
from watcher.config import Config, Secrets, config_from_dict
from watcher.github.pacing import Pacer

if TYPE_CHECKING:
    from fakes.github import FakeGitHub

SIZES = (500, 2_000, 5_000)
WHOLE = 500
REPEAT = 9
RATIO_TARGET = 1.5
GITHUB_PER_MINUTE = 900
NO_CHECK = 10**9  # graphql_threshold that turns the check off

BARE = textwrap.dedent("""
    import json, sys
    from concurrent.futures import ThreadPoolExecutor
    import httpx
    etags = json.load(open(sys.argv[1]))
    headers = {"Authorization": "Bearer " + sys.argv[2], "Accept": "application/vnd.github+json"}
    limits = httpx.Limits(max_connections=20, max_keepalive_connections=20)
    with httpx.Client(headers=headers, limits=limits) as http:
        def get(item):
            url, etag = item
            assert http.get(url, headers={"If-None-Match": etag}).status_code == 304
        with ThreadPoolExecutor(20) as pool:
            list(pool.map(get, etags.items()))
""")


class VirtualTime:
    """A clock that sleeping moves forward at once (the pacer sleeps under its own lock, so
    sleeps never overlap)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC).timestamp()

    def epoch(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def clock(self) -> datetime:
        return datetime.fromtimestamp(self.now, UTC)


class RecordingPacer(Pacer):
    def __init__(self, pacer: Pacer) -> None:
        super().__init__(pacer.per_minute, clock=pacer.clock, sleep=pacer.sleep)
        self.sent: list[float] = []

    def wait(self) -> float:
        waited = super().wait()
        self.sent.append(self.clock())
        return waited


def busiest_minute(times_sent: list[float]) -> int:
    ordered, most, start = sorted(times_sent), 0, 0
    for end, when in enumerate(ordered):
        while ordered[start] <= when - 60:
            start += 1
        most = max(most, end - start + 1)
    return most


def repo_names(count: int) -> list[str]:
    return [f"org/repo-{n}" for n in range(count)]


def scale_config(api_url: str, store: Path, count: int, threshold: int | None = None
                 ) -> Config:
    github: dict[str, object] = {"api_url": api_url}
    if threshold is not None:
        github["graphql_threshold"] = threshold
    return config_from_dict({"github": github, "store": {"path": str(store)},
                             "repos": [{"name": name} for name in repo_names(count)],
                             "notifiers": []}, base_dir=store.parent, source="bench_scale")


def virtual_runtime(config: Config, clock: VirtualTime) -> Runtime:
    deps = Dependencies(stdout=io.StringIO(), sleep=clock.sleep, clock=clock.clock,
                        epoch=clock.epoch, secrets=Secrets(GITHUB_TOKEN=TOKEN))
    runtime = build_runtime(config, deps)
    assert runtime.client.pacer is not None
    runtime.client.pacer = RecordingPacer(runtime.client.pacer)
    return runtime


def polled(runtime: Runtime, fake: FakeGitHub, clock: VirtualTime
           ) -> tuple[float, int, int, list[float], float]:
    """(wall seconds, REST requests, GraphQL queries, REST send times, virtual seconds)."""
    fake.reset_requests()
    fake.rate_remaining = fake.rate_limit = 10**9  # quota is not what is measured here
    pacer = runtime.client.pacer
    assert isinstance(pacer, RecordingPacer)
    pacer.sent.clear()
    started = clock.now
    wall = timed(lambda: runtime.poller.poll(runtime.poller.watched()[0]))
    graphql = len(fake.requests_to("/graphql"))
    return wall, len(fake.requests) - graphql, graphql, list(pacer.sent), clock.now - started


def size_rows(fake: FakeGitHub, count: int, tmp: Path) -> tuple[list[Row], float]:
    clock = VirtualTime()
    store = tmp / f"store-{count}"
    checked = virtual_runtime(scale_config(fake.url, store, count), clock)
    try:
        first, first_rest, first_graphql, _, _ = polled(checked, fake, clock)
        quiet, rest, graphql, _, _ = polled(checked, fake, clock)
    finally:
        checked.close()
    plain = virtual_runtime(scale_config(fake.url, store, count, NO_CHECK), clock)
    try:
        wall, rest_only, _, sent, stretched = polled(plain, fake, clock)
    finally:
        plain.close()
    peak = busiest_minute(sent)
    ceiling = plain.config.github.max_requests_per_minute
    least = (math.ceil(rest_only / ceiling) - 1) * 60.0  # what the ceiling itself asks for
    label = f"{count:,} repos"
    return [
        Row(f"first poll, {label}: per repo", seconds(first / count),
            f"{seconds(first)} in all", f"{first_rest:,} REST requests, {first_graphql} "
                                        "GraphQL queries"),
        Row(f"no-change poll, {label}, GraphQL check", seconds(quiet),
            f"{seconds(wall)} REST only ({rest_only:,} requests)",
            f"{graphql} queries, {rest} REST requests; {times(wall / quiet)} faster"),
        Row(f"no-change poll, {label}, REST only: busiest minute", f"{peak} requests",
            f"GitHub allows {GITHUB_PER_MINUTE}",
            verdict(peak <= GITHUB_PER_MINUTE, f"<= {GITHUB_PER_MINUTE}")),
        Row(f"no-change poll, {label}, REST only: waited for the pacer",
            f"{stretched / 60:.1f} min", f"{least / 60:.1f} min the ceiling of {ceiling} a "
                                         "minute asks for",
            verdict(stretched <= least + 1.0, "no wait beyond the ceiling's")),
    ], first / count


STORES = {"rest": "embedded store", "postgres": "PostgreSQL store"}


@contextmanager
def postgres_database() -> Iterator[str | None]:
    """A fresh database on a throwaway PostgreSQL server (``tests/postgres_support.py``), or
    None where none can be started here."""
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from postgres_support import cluster, skip_reason

    if skip_reason() is not None:
        yield None
        return
    servers = cluster()
    try:
        yield next(servers).database()
    finally:
        next(servers, None)


def whole_process_rows(fake: FakeGitHub, tmp: Path) -> list[Row]:
    with postgres_database() as url:
        return whole_process_rows_on(fake, tmp, url)


def whole_process_rows_on(fake: FakeGitHub, tmp: Path, url: str | None) -> list[Row]:
    names = "".join(f'[[repos]]\nname = "{name}"\n' for name in repo_names(WHOLE))
    stores = {"rest": "", "check": ""} | ({"postgres": f'url = "{url}"\n'} if url else {})
    files = {}
    for label, store in stores.items():
        threshold = 50 if label == "check" else NO_CHECK
        config = tmp / f"whole-{label}.toml"
        config.write_text(f'notifiers = []\n[github]\napi_url = "{fake.url}"\n'
                          f'graphql_threshold = {threshold}\n[store]\npath = "whole-{label}"\n'
                          + store + names)
        files[label] = config
    env = {"GITHUB_TOKEN": TOKEN, "PATH": "/usr/bin:/bin"}
    commands = {label: [sys.executable, "-m", "watcher", "--config", str(path), "poll"]
                for label, path in files.items()}
    for argv in commands.values():
        subprocess.run(argv, check=True, env=env, cwd=tmp, capture_output=True, timeout=300)
    store = build_runtime(scale_config(fake.url, tmp / "whole-rest", WHOLE),
                          Dependencies(secrets=Secrets(GITHUB_TOKEN=TOKEN))).store
    etags = store.etags([f"{fake.url}/repos/{name}/releases?per_page=30&page=1"
                         for name in repo_names(WHOLE)])
    store.close()
    (tmp / "etags.json").write_text(json.dumps(etags))
    commands["bare"] = [sys.executable, "-c", BARE, str(tmp / "etags.json"), TOKEN]
    took: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
    for _ in range(REPEAT):  # round-robin, so background load falls on all alike
        for label, argv in commands.items():
            forget_pacing(tmp / f"whole-{label}", url if label == "postgres" else None)
            took[label].append(measured_process(argv, env, tmp))
    wall = {label: statistics.median(run[0] for run in runs) for label, runs in took.items()}
    cpu = {label: statistics.median(run[1] for run in runs) for label, runs in took.items()}
    rows = []
    for label, store_name in STORES.items():
        if label not in took:
            rows.append(Row(f"no-change poll, {WHOLE} repos, whole process (REST, "
                            f"{store_name})", "skipped", "-", "no PostgreSQL server here"))
            continue
        rows += [
            Row(f"no-change poll, {WHOLE} repos, whole process (REST, {store_name}): CPU",
                seconds(cpu[label]), f"{seconds(cpu['bare'])} bare httpx, same {WHOLE} "
                                     "conditional GETs",
                f"{times(cpu[label] / cpu['bare'])}; "
                + verdict(cpu[label] / cpu["bare"] <= RATIO_TARGET, f"<= {RATIO_TARGET:g}x")),
            Row(f"… the wall time a user waits ({store_name})", seconds(wall[label]),
                f"{seconds(wall['bare'])} bare httpx",
                f"{times(wall[label] / wall['bare'])}; "
                + verdict(wall[label] / wall["bare"] <= RATIO_TARGET, f"<= {RATIO_TARGET:g}x")),
        ]
    check = wall["check"]
    rows.append(Row(f"no-change poll, {WHOLE} repos, whole process (GraphQL check)",
                    seconds(check), f"{seconds(wall['bare'])} bare httpx, {WHOLE} conditional "
                                    "GETs",
                    f"{times(check / wall['bare'])}; {WHOLE // 50} queries instead of {WHOLE} "
                    "requests; CPU " + times(cpu["check"] / cpu["bare"])))
    return rows


def forget_pacing(store: Path, url: str | None = None) -> None:
    """Each measured poll starts as a poll every ``poll.interval`` does: with no request of the
    last minute in the store's shared pacing window. Back to back, the runs would rightly wait
    for each other (500 + 500 requests in a minute is over ``max_requests_per_minute``), and
    the figure would be that wait, not a poll's cost; every request still pays for the
    window's bookkeeping."""
    if url is not None:
        import psycopg

        with psycopg.connect(url) as db:
            db.execute("DELETE FROM rw_pace")
    elif (store / "cache.db").exists():
        with sqlite3.connect(store / "cache.db") as db:
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'rw_pace'").fetchone():
                db.execute("DELETE FROM rw_pace")


def measured_process(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process run to its end."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{argv[:4]} exited {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def run() -> list[Row]:
    fake = fake_github()
    try:
        fake.set_token(TOKEN)
        for name in repo_names(max(SIZES)):
            fake.add_release(name, tag="v1.0.0", name="v1.0.0",
                             body="## Bug Fixes\n\n- Fix a crash on empty input (#12)\n")
        with tempfile.TemporaryDirectory(prefix="bench-scale-") as name:
            tmp = Path(name)
            rows = whole_process_rows(fake, tmp)
            per_repo: dict[int, float] = {}
            for count in SIZES:
                produced, per_repo[count] = size_rows(fake, count, tmp)
                rows += produced
            smallest = per_repo[min(SIZES)]
            rows.append(Row(f"first poll per repo, {max(SIZES):,} vs {min(SIZES)} repos",
                            times(per_repo[max(SIZES)] / smallest),
                            f"{seconds(smallest)} per repo at {min(SIZES)}",
                            "schema 1 measured 1.56x (24.4 vs 15.6 ms)"))
            return rows
    finally:
        fake.stop()


if __name__ == "__main__":
    print_table(run())
