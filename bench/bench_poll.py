"""A poll where nothing changed, of 2, 50 and 500 repos on the loopback fake GitHub.

Every request of that poll is conditional (the ETags come from a first, baseline poll), so it
should cost one request per repo and no quota at all. Figures: HTTP requests sent, requests
that cost quota (the fake's ``rate_remaining`` delta), wall time next to the same conditional
GETs sent with a bare httpx client (the floor), and, with 50 ms of server latency, concurrent
(``github.concurrency``, default 20) against sequential (``concurrency = 1``). The batched
GraphQL check is off here (``graphql_threshold``): this is the REST path it replaces.

The fake runs in this process and shares its GIL, so absolute times include the server's work;
every figure and its baseline pay that alike.
"""

from __future__ import annotations

import io
import math
import statistics
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from run_all import TOKEN, Row, fake_github, print_table, seconds, timed, times, verdict

from watcher.app import Dependencies, Runtime, build_runtime
from watcher.config import Config, Secrets, config_from_dict
from watcher.poller import PollReport

if TYPE_CHECKING:
    from fakes.github import FakeGitHub

SIZES = (2, 50, 500)
LATENCY = 0.05
SPEEDUP_TARGET = 15.0  # at 500 repos; 20 connections make 500 / ceil(500 / 20) = 20 the ideal
REPEAT = 3


def poll_config(api_url: str, store: Path, names: list[str], concurrency: int | None = None
                ) -> Config:
    # The REST path: one conditional request per repo (bench_scale.py measures the batched
    # GraphQL check that replaces it above 50 repos with a token).
    github: dict[str, object] = {"api_url": api_url, "graphql_threshold": 10**9}
    if concurrency is not None:
        github["concurrency"] = concurrency
    return config_from_dict({"github": github, "store": {"path": str(store)},
                             "repos": [{"name": name} for name in names], "notifiers": []},
                            base_dir=store.parent, source="bench_poll")


def open_runtime(config: Config) -> Runtime:
    deps = Dependencies(stdout=io.StringIO(), secrets=Secrets(GITHUB_TOKEN=TOKEN))
    runtime = build_runtime(config, deps)
    # Several 500-request polls a minute would wait for the per-minute ceiling, which is not
    # what is measured here (bench_scale.py measures pacing, on a virtual clock).
    runtime.client.pacer = runtime.client.graphql_pacer = None
    return runtime


def poll(runtime: Runtime) -> PollReport:
    report = runtime.poller.poll(runtime.poller.watched()[0])
    if report.failed:
        raise RuntimeError(f"bench poll failed: {report.failed[0].error}")
    return report


def measured_poll(runtime: Runtime, fake: FakeGitHub, *,
                  unchanged: bool) -> tuple[int, int, float]:
    """(requests sent, requests that cost quota, wall seconds) of one poll."""
    requests, quota = len(fake.requests), fake.rate_remaining
    reports: list[PollReport] = []
    wall = timed(lambda: reports.append(poll(runtime)))
    if unchanged and not all(outcome.not_modified for outcome in reports[0].outcomes):
        raise RuntimeError("a no-change poll saw a change: the benchmark is not measuring 304s")
    return len(fake.requests) - requests, quota - fake.rate_remaining, wall


def bare_conditional_gets(runtime: Runtime) -> float:
    """The floor: the same conditional GETs on the same keep-alive client and thread count,
    with no store, no planning and no bookkeeping."""
    github = runtime.config.github
    urls = [runtime.client.releases_url(repo.name, github.per_page)
            for repo in runtime.config.repos]
    etags = runtime.store.etags(urls)

    def get(url: str) -> None:
        if runtime.http.get(url, headers={"If-None-Match": etags[url]}).status_code != 304:
            raise RuntimeError(f"{url}: expected 304")

    workers = max(1, min(github.concurrency, len(urls)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return timed(lambda: list(pool.map(get, urls)))


def bench_size(fake: FakeGitHub, size: int, tmp: Path) -> list[Row]:
    names = [f"org/repo-{index}" for index in range(size)]
    store = tmp / f"store-{size}"
    config = poll_config(fake.url, store, names)
    runtime = open_runtime(config)
    try:
        _, first_quota, _ = measured_poll(runtime, fake, unchanged=False)
        runs = [measured_poll(runtime, fake, unchanged=True) for _ in range(REPEAT)]
        requests, quota, _ = runs[0]
        wall = statistics.median(run[2] for run in runs)
        floor = statistics.median(bare_conditional_gets(runtime) for _ in range(REPEAT))
        fake.latency = LATENCY
        concurrent = statistics.median(measured_poll(runtime, fake, unchanged=True)[2]
                                       for _ in range(REPEAT))
        bare = statistics.median(bare_conditional_gets(runtime) for _ in range(REPEAT))
        workers = config.github.concurrency
    finally:
        fake.latency = 0.0
        runtime.close()
    sequential_runtime = open_runtime(poll_config(fake.url, store, names, concurrency=1))
    try:
        fake.latency = LATENCY
        sequential = measured_poll(sequential_runtime, fake, unchanged=True)[2]
    finally:
        fake.latency = 0.0
        sequential_runtime.close()

    label = f"no-change poll, {size} repos"
    speedup = sequential / concurrent
    ideal = size / math.ceil(size / workers)
    speed_note = (f"{times(speedup)} faster; bare httpx GETs {times(sequential / bare)}, "
                  f"ideal {times(ideal)}")
    if size == max(SIZES):
        speed_note += "; " + verdict(speedup >= SPEEDUP_TARGET, f"≥ {SPEEDUP_TARGET:g}x")
    return [
        Row(f"{label}: HTTP requests", str(requests), f"{size} repos",
            f"{requests / size:.2f} per repo"),
        Row(f"{label}: requests costing quota", str(quota),
            f"{first_quota} on the first poll",
            "free: every answer a 304" if quota == 0 else "COSTS QUOTA"),
        Row(f"{label}: wall", seconds(wall), f"{seconds(floor)} bare httpx 304 GETs",
            f"{times(wall / floor)} the floor"),
        Row(f"{label}, {LATENCY * 1000:.0f} ms latency: concurrent ({workers})",
            seconds(concurrent), f"{seconds(sequential)} sequential", speed_note),
    ]


def run() -> list[Row]:
    fake = fake_github()
    try:
        fake.set_token(TOKEN)
        for index in range(max(SIZES)):
            fake.add_release(f"org/repo-{index}", tag="v1.0.0", name="v1.0.0",
                             body="## Bug Fixes\n\n- Fix a crash on empty input (#12)\n")
        with tempfile.TemporaryDirectory(prefix="bench-poll-") as tmp:
            return [row for size in SIZES for row in bench_size(fake, size, Path(tmp))]
    finally:
        fake.stop()


if __name__ == "__main__":
    print_table(run())
