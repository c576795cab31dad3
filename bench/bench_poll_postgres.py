"""A 500-repo poll where nothing changed, on the PostgreSQL store against the embedded one: the
same loopback fake GitHub, the same runtime (``build_runtime``), a first poll for the baseline,
then the no-change polls, taking turns between the two stores so load on the machine falls on
both alike. The store's share of such a poll is one transaction reading every repo's state and
ETag in one statement each and moving the poll timestamps in one batched update; the target is
1.5x the embedded store's wall time.

The PostgreSQL server is a throwaway one on a Unix socket (``tests/postgres_support.py``; its
fsync off, as for tests: a no-change poll's commit is what that changes).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from bench_poll import measured_poll, open_runtime
from run_all import TESTS, TOKEN, Row, fake_github, print_table, seconds, times, verdict

from watcher.config import Config, config_from_dict

SIZE = 500
REPEAT = 7
TARGET = 1.5


def config_for(api_url: str, store: Path, names: list[str], url: str | None) -> Config:
    table: dict[str, object] = {"path": str(store)}
    if url is not None:
        table["url"] = url
    return config_from_dict({"github": {"api_url": api_url, "graphql_threshold": 10**9},
                             "store": table, "repos": [{"name": name} for name in names],
                             "notifiers": []}, base_dir=store.parent, source="bench")


def run() -> list[Row]:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from postgres_support import cluster, skip_reason

    if skip_reason() is not None:
        return [Row("bench_poll_postgres", "skipped", "-", str(skip_reason()))]
    servers = cluster()
    postgres = next(servers)
    fake = fake_github()
    try:
        fake.set_token(TOKEN)
        names = [f"org/repo-{index}" for index in range(SIZE)]
        for name in names:
            fake.add_release(name, tag="v1.0.0", body="## Bug Fixes\n\n- Fix a crash (#12)\n")
        with tempfile.TemporaryDirectory(prefix="bench-pg-") as tmp:
            runtimes = {kind: open_runtime(config_for(fake.url, Path(tmp) / "store", names,
                                                      url))
                        for kind, url in (("embedded", None), ("postgres", postgres.database()))}
            try:
                for runtime in runtimes.values():
                    measured_poll(runtime, fake, unchanged=False)
                walls: dict[str, list[float]] = {kind: [] for kind in runtimes}
                for _ in range(REPEAT):
                    for kind, runtime in runtimes.items():
                        walls[kind].append(measured_poll(runtime, fake, unchanged=True)[2])
            finally:
                for runtime in runtimes.values():
                    runtime.close()
    finally:
        fake.stop()
        next(servers, None)
    embedded, on_postgres = (statistics.median(walls[kind]) for kind in ("embedded", "postgres"))
    ratio = on_postgres / embedded
    return [Row(f"no-change poll, {SIZE} repos, PostgreSQL store", seconds(on_postgres),
                f"{seconds(embedded)} embedded store",
                f"{times(ratio)}; " + verdict(ratio <= TARGET, f"<= {TARGET:g}x"))]


if __name__ == "__main__":
    print_table(run())
