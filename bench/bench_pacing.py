"""Two one-shot polls of 1,000 repos, back to back, on one store: the busiest minute of REST
requests the fake GitHub saw, against GitHub's secondary limit of 900 a minute.

Each poll is its own runtime (its own store connection and pacers, as two ``release-watch
poll`` processes would be) on a virtual clock (the pacers' waits take no real time; the
clock says when each request was let go), REST only (no GraphQL check, no PR labels). The
first poll reads every repo (1,000 requests), the second finds nothing changed (1,000
conditional requests). The figure is the pacing window kept in the store, which both polls
share; the baseline is each poll pacing on its own, as before. Target: at most 900.
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from bench_scale import GITHUB_PER_MINUTE, NO_CHECK, VirtualTime, busiest_minute, repo_names
from run_all import TOKEN, Row, fake_github, print_table, verdict

from watcher.app import Dependencies, build_runtime
from watcher.config import Secrets, config_from_dict
from watcher.github.pacing import Pacer

REPOS = 1_000
POLLS = 2


class Recorded(Pacer):
    """The pacer a runtime built, recording when it let each request go (one fetch thread,
    so nothing moves the clock between the wait and the record)."""

    def __init__(self, pacer: Pacer, sent: list[float], *, shared: bool) -> None:
        super().__init__(pacer.per_minute, clock=pacer.clock, sleep=pacer.sleep,
                         window=pacer.window, shared=pacer.shared if shared else None,
                         key=pacer.key)
        self.sent = sent

    def wait(self) -> float:
        waited = super().wait()
        self.sent.append(self.clock())
        return waited


def polls(api_url: str, store: Path, *, shared: bool) -> tuple[list[float], int]:
    """(REST send times, requests) of ``POLLS`` polls back to back, each a runtime of its own."""
    clock = VirtualTime()
    config = config_from_dict({
        "github": {"api_url": api_url, "graphql_threshold": NO_CHECK, "concurrency": 1},
        "classify": {"use_pr_labels": False}, "store": {"path": str(store)},
        "repos": [{"name": name} for name in repo_names(REPOS)], "notifiers": []},
        base_dir=store.parent, source="bench_pacing")
    sent: list[float] = []
    for _ in range(POLLS):
        deps = Dependencies(stdout=io.StringIO(), sleep=clock.sleep, clock=clock.clock,
                            epoch=clock.epoch, secrets=Secrets(GITHUB_TOKEN=TOKEN))
        runtime = build_runtime(config, deps)
        try:
            assert runtime.client.pacer is not None
            runtime.client.pacer = Recorded(runtime.client.pacer, sent, shared=shared)
            report = runtime.poller.poll(runtime.poller.watched()[0])
            if report.failed:
                raise RuntimeError(f"bench poll failed: {report.failed[0].error}")
        finally:
            runtime.close()
    return sent, len(sent)


def run() -> list[Row]:
    fake = fake_github()
    try:
        fake.set_token(TOKEN)
        for name in repo_names(REPOS):
            fake.add_release(name, tag="v1.0.0", name="v1.0.0",
                             body="## Bug Fixes\n\n- Fix a crash on empty input (#12)\n")
        fake.rate_remaining = fake.rate_limit = 10**9  # quota is not what is measured
        with tempfile.TemporaryDirectory(prefix="bench-pacing-") as name:
            tmp = Path(name)
            together, requests = polls(fake.url, tmp / "shared", shared=True)
            apart, _ = polls(fake.url, tmp / "apart", shared=False)
    finally:
        fake.stop()
    peak, before = busiest_minute(together), busiest_minute(apart)
    span = (max(together) - min(together)) / 60
    return [Row(f"{POLLS} back-to-back polls of {REPOS:,} repos (REST): busiest minute",
                f"{peak} requests", f"{before} with each poll pacing alone",
                f"{requests:,} requests over {span:.1f} min; "
                + verdict(peak <= GITHUB_PER_MINUTE, f"<= {GITHUB_PER_MINUTE}"))]


if __name__ == "__main__":
    print_table(run())
