"""A digest of 10,000 queued events, as a whole ``release-watch digest`` process against the
loopback fake Slack: its peak memory and the messages it posts.

The store holds 10,000 events for one Slack digest notifier (100 repos, 100 events each, 30
real items each from the PyTorch v2.7.0 notes, every kind represented), queued the way a poll
queues them. ``release-watch digest`` reads that queue and posts the digest; the figures are
the process's peak RSS (``ru_maxrss``, read by a small wrapper process, as in
``bench_first_poll.py``), its wall time and what reached Slack (top-level messages and thread
replies). The baseline is the same command over 100 queued events. A digest posts a parent
message per repository with its thread, at most ``digest_max_repos`` (default 20) of them, the
other repositories named in one last message; the same queue is also sent with
``digest_max_repos = 100``, a parent for each of the 100 repositories. Targets: peak RSS under
100 MiB, and at most ``digest_max_repos`` + 1 top-level messages however long the queue. Posts
are not paced here (``min_interval = "0s"``); at Slack's one post a second each post is a
second of the digest's wall time.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from run_all import TESTS, Row, print_table, release_notes, seconds, verdict

from handlers.slack.digest_plan import DIGEST_MAX_REPOS
from watcher.delivery.events import added, make_event
from watcher.models import ClassifiedItem, Event, Release
from watcher.notes.analyze import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy
from watcher.store.store import Store

EVENTS = 10_000
BASELINE = 100
REPOS = 100
ITEMS_EACH = 30
TARGET_MB = 100.0
SLACK_TOKEN = "xoxb-bench-token-5678"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
MAX_REPOS = DIGEST_MAX_REPOS  # the Slack notifier's default digest_max_repos

WRAPPER = ("import resource, subprocess, sys; "
           "code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL); "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)")


def real_items() -> list[ClassifiedItem]:
    """The v2.7.0 notes' items, the rarer kinds first so every event carries some."""
    items = Analyzer(builtin_taxonomy()).items(release_notes("pytorch/v2.7.0.md"),
                                                repo="pytorch/pytorch")
    common = {"bug_fix", "improvement"}
    return sorted(items, key=lambda item: item.kind in common)


def an_event(n: int, items: list[ClassifiedItem]) -> Event:
    repo = f"org/repo-{n % REPOS}"
    start = (n * 7) % (len(items) - ITEMS_EACH)
    release = Release(id=n, tag_name=f"v{n // REPOS}.{n % 7}",
                      html_url=f"https://github.com/{repo}/releases/tag/v{n}")
    return make_event("published", repo, release, f"{n:064x}",
                      added(items[start:start + ITEMS_EACH]), NOW)


def queued_store(path: Path, count: int, items: list[ClassifiedItem]) -> None:
    store = Store.open(path)
    try:
        with store.transaction():
            for n in range(count):
                store.add_event(an_event(n, items), [], NOW, ["weekly"])
    finally:
        store.close()


def digest_config(folder: Path, slack_api: str, extra: str = "") -> Path:
    config = folder / "release-watch.toml"
    config.write_text(f'[store]\npath = "store"\n[slack]\napi_url = "{slack_api}"\n'
                      '[[notifiers]]\nname = "weekly"\ntype = "slack"\nchannel = "#digest"\n'
                      f'mode = "digest"\nmin_interval = "0s"\n{extra}')
    return config


def digest_run(template: Path, folder: Path, slack_api: str, extra: str = ""
               ) -> tuple[float, float]:
    """(peak RSS in MB, wall seconds) of ``release-watch digest`` over a copy of ``template``."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copytree(template, folder / "store")
    config = digest_config(folder, slack_api, extra)
    env = {"SLACK_BOT_TOKEN": SLACK_TOKEN, "PATH": "/usr/bin:/bin"}
    argv = [sys.executable, "-m", "watcher", "--config", str(config), "digest"]
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAPPER, *argv], env=env, cwd=folder,
                          capture_output=True, text=True, timeout=1800)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"digest failed: {done.stderr[-500:]}")
    return int(done.stdout.split()[-1]) / 1024, took


def run() -> list[Row]:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from fakes.slack import FakeSlack

    items = real_items()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-digest-") as name, FakeSlack() as slack:
        tmp = Path(name)
        slack.add_token(SLACK_TOKEN, channels=["#digest"])
        figures = {}
        runs = [(BASELINE, ""), (EVENTS, ""), (EVENTS, f"digest_max_repos = {REPOS}\n")]
        for n, (count, extra) in enumerate(runs):
            template = tmp / f"template-{count}"
            if not template.exists():
                queued_store(template, count, items)
            before = len(slack.messages)
            peak, took = digest_run(template, tmp / f"run-{n}", slack.api_url, extra)
            posted = slack.messages[before:]
            parents = sum(1 for m in posted if m.thread_ts is None)
            figures[n] = (peak, took, parents, len(posted) - parents)
        base_peak, base_took, base_parents, base_replies = figures[0]
        peak, took, parents, replies = figures[1]
        rows.append(Row(f"digest of {EVENTS:,} queued events: peak RSS", f"{peak:.0f} MB",
                        f"{base_peak:.0f} MB with {BASELINE}",
                        f"{seconds(took)} (vs {seconds(base_took)}); "
                        + verdict(peak < TARGET_MB, f"< {TARGET_MB:.0f} MB")))
        rows.append(Row(f"digest of {EVENTS:,} queued events ({REPOS} repos): Slack messages",
                        f"{parents} top-level + {replies} replies",
                        f"{base_parents} + {base_replies} with {BASELINE}",
                        verdict(parents <= MAX_REPOS + 1,
                                f"at most digest_max_repos ({MAX_REPOS}) + 1 top-level")))
        peak, took, parents, replies = figures[2]
        rows.append(Row(f"the same with digest_max_repos = {REPOS}: a parent per repo",
                        f"{parents} top-level + {replies} replies", f"peak RSS {peak:.0f} MB",
                        f"{seconds(took)}; "
                        + verdict(parents == REPOS and peak < TARGET_MB,
                                  f"{REPOS} parents, < {TARGET_MB:.0f} MB")))
    return rows


if __name__ == "__main__":
    print_table(run())
