"""The daemon's resident memory over 500 scheduled polls against the loopback fake GitHub.

``Daemon`` (APScheduler) runs in this process with ``poll.interval`` made 20 ms through
``model_copy`` (which does not re-validate: the 1 s floor is for users). Two repos with real
notes; every 100th poll is followed by a change on the fake (an edit of the pytorch notes, or a
new xla release), so the daemon also parses, diffs and delivers, not only answers 304s.
RSS (``/proc/self/statm``) and the Python heap (``sys.getallocatedblocks()``) are sampled
after polls 50, 100, 200, 300, 400 and 500, in the scheduler's worker thread right after the
poll job returned.

It runs in a fresh interpreter (``run()`` starts this file with ``--json``), so the figures are
the daemon's and not what other benchmarks left in the process. The fake records every request
it answers; that log is cleared after each poll so the fake's growth is not counted either.
"""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from run_all import TOKEN, Row, fake_github, print_table, release_notes, seconds

from watcher.app import Dependencies, daemon_parts
from watcher.config import Config, Secrets, config_from_dict
from watcher.daemon.loop import Daemon

if TYPE_CHECKING:
    from fakes.github import FakeGitHub

POLLS = 500
SAMPLES = (50, 100, 200, 300, 400, 500)
CHANGE_EVERY = 100
INTERVAL = 0.02
FLAT_MB = 2.0  # growth from poll 100 to 500 below this counts as flat
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE / 2**20


class Sample:
    def __init__(self, poll: int, started: float) -> None:
        self.poll = poll
        self.seconds = time.perf_counter() - started
        self.rss = rss_mb()
        self.blocks = sys.getallocatedblocks()


class MeasuredDaemon(Daemon):
    """Counts its poll jobs, samples memory after some, and changes the fake now and then."""

    def __init__(self, config: Config, deps: Dependencies, fake: FakeGitHub) -> None:
        super().__init__(config, deps, daemon_parts(config))
        self.fake = fake
        self.polls = 0
        self.samples: list[Sample] = []
        self.done = threading.Event()
        self.started = time.perf_counter()

    def _poll_job(self) -> None:
        if self.done.is_set():
            return
        super()._poll_job()
        self.polls += 1
        self.fake.reset_requests()
        if self.polls in SAMPLES:
            self.samples.append(Sample(self.polls, self.started))
        if self.polls % CHANGE_EVERY == 0 and self.polls < POLLS:
            change_something(self.fake, self.polls)
        if self.polls >= POLLS:
            self.done.set()


def change_something(fake: FakeGitHub, poll: int) -> None:
    if (poll // CHANGE_EVERY) % 2:
        newest = fake.releases("pytorch/pytorch")[0]
        added = f"\n- Fixed a regression found after poll {poll} (#{90000 + poll})\n"
        body = newest["body"] + added
        fake.edit_release("pytorch/pytorch", newest["id"], body=body)
    else:
        fake.add_release("pytorch/xla", tag=f"v2.0.{poll}",
                         body=f"## Bug Fixes\n\n- Fix a crash seen at poll {poll} (#{poll})\n")


def daemon_config(api_url: str, tmp: Path) -> Config:
    config = config_from_dict({"github": {"api_url": api_url}, "store": {"path": "store"},
                               "notifiers": [{"name": "log", "type": "jsonl",
                                              "path": "events.jsonl"}]},
                              base_dir=tmp, source="bench_daemon_memory")
    poll = config.poll.model_copy(update={"interval": INTERVAL, "jitter": 0.0,
                                          "retry_interval": 3600})
    return config.model_copy(update={"poll": poll})


def measure(fake: FakeGitHub, tmp: Path) -> tuple[float, MeasuredDaemon, float]:
    deps = Dependencies(stdout=io.StringIO(), secrets=Secrets(GITHUB_TOKEN=TOKEN))
    daemon = MeasuredDaemon(daemon_config(fake.url, tmp), deps, fake)
    before = rss_mb()
    daemon.start()
    try:
        if not daemon.done.wait(timeout=POLLS * INTERVAL * 10 + 30):
            raise RuntimeError(f"only {daemon.polls} of {POLLS} polls ran in time")
    finally:
        daemon.stop()
    took = time.perf_counter() - daemon.started
    return before, daemon, took


def run() -> list[Row]:
    done = subprocess.run([sys.executable, __file__, "--json"], capture_output=True, text=True,
                          timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench_daemon_memory failed: {done.stderr[-2000:]}")
    return [Row(*row) for row in json.loads(done.stdout)]


def measured_rows() -> list[Row]:
    scheduler_log = logging.getLogger("apscheduler")
    level = scheduler_log.level
    # A 20 ms interval makes APScheduler warn whenever a poll overruns it (the run is skipped,
    # as max_instances=1 intends); that is expected here, not news.
    scheduler_log.setLevel(logging.ERROR)
    fake = fake_github()
    try:
        fake.set_token(TOKEN)
        fake.add_release("pytorch/pytorch", tag="v2.7.0", body=release_notes("pytorch/v2.7.0.md"))
        fake.add_release("pytorch/pytorch", tag="v2.8.0", body=release_notes("pytorch/v2.8.0.md"))
        fake.add_release("pytorch/xla", tag="v2.0.0", body=release_notes("xla/v2.0.0.md"))
        with tempfile.TemporaryDirectory(prefix="bench-daemon-") as tmp:
            before, daemon, took = measure(fake, Path(tmp))
            events = (Path(tmp) / "events.jsonl").read_text().count("\n")
    finally:
        fake.stop()
        scheduler_log.setLevel(level)

    at = {sample.poll: sample for sample in daemon.samples}
    rows = [Row(f"daemon RSS after poll {sample.poll}", f"{sample.rss:.1f} MB",
                f"{before:.1f} MB before start()",
                f"Python heap {sample.blocks} blocks; {seconds(sample.seconds)} since start()")
            for sample in daemon.samples]
    growth = at[POLLS].rss - at[100].rss
    blocks = at[POLLS].blocks - at[100].blocks
    rows.append(Row(f"daemon RSS growth, poll 100 -> {POLLS}", f"{growth:+.1f} MB",
                    f"{at[100].rss:.1f} MB at poll 100",
                    f"{growth * 1024 / (POLLS - 100):+.1f} KB/poll; "
                    f"Python heap {blocks:+d} blocks; "
                    f"{'flat' if growth < FLAT_MB else 'NOT FLAT'} (flat: < {FLAT_MB:g} MB); "
                    f"{POLLS} polls, {events} events delivered in {seconds(took)}"))
    return rows


if __name__ == "__main__":
    if "--json" in sys.argv[1:]:
        print(json.dumps(measured_rows()))
    else:
        print_table(measured_rows())
