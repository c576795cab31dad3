"""The daemon's package step (issue 35): a release whose wheel drips or fails is announced
within one poll interval, an unrelated release beside it too, and its package's diff follows
once a sound wheel is served (a real daemon process against the loopback fakes); jobs say in
the log what they wait for, a job past its deadline is stuck, and a leader with a stuck job
hands its lease back (an injected clock and a scripted lease)."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from atlas_support import V1, V2, write_wheel
from conftest import release_notes
from daemon_support import Daemon, daemon_config, wait_for
from fakes.pypi import FakePackageIndex
from test_leader import Clock, ScriptedLease
from test_package_later import NOTES, TITLE, TRAIN

from watcher.daemon.jobs import JobWatch
from watcher.daemon.leader import Leadership

XLA = release_notes("xla/v2.0.0.md")


def test_a_long_job_says_what_it_waits_for_and_one_past_its_deadline_is_stuck(caplog):
    clock = Clock()
    jobs = JobWatch(monotonic=clock, tell_every=60)
    with caplog.at_level(logging.INFO), jobs.running("package torch 2.16.0", 100,
                                                     "asking the index") as doing:
        clock.now += 30
        jobs.tell()
        doing("downloading torch-2.16.0.whl (12 MB of 80 MB)")
        clock.now += 31
        jobs.tell()
        jobs.tell()  # once a minute, not each look
        assert jobs.stuck() is None
        clock.now += 40
        stuck = jobs.stuck()
        assert stuck == ("the package torch 2.16.0 job has run 101s: downloading "
                         "torch-2.16.0.whl (12 MB of 80 MB) (its deadline 100s)")
        jobs.stuck()
    assert jobs.stuck() is None  # ended
    assert [record.getMessage() for record in caplog.records] == [
        "the package torch 2.16.0 job has run 61s: downloading torch-2.16.0.whl "
        "(12 MB of 80 MB)",
        "the package torch 2.16.0 job has run 101s: downloading torch-2.16.0.whl "
        "(12 MB of 80 MB), past its deadline of 100s: it is stuck"]


def test_a_leader_with_a_stuck_job_hands_its_lease_back_until_the_job_ends(caplog):
    clock, changes = Clock(), []
    stuck: list[str] = []
    lease = ScriptedLease(7, 7, 8)
    leadership = Leadership(lease, 15, monotonic=clock, on_change=changes.append,
                            stuck=lambda: stuck[0] if stuck else None)
    assert leadership.renew() and leadership.leads()
    stuck.append("the package torch 2.16.0 job has run 2m")
    with caplog.at_level(logging.WARNING):
        assert not leadership.renew() and not leadership.renew()  # not renewed while stuck
    assert lease.released and not leadership.leads() and changes == [True, False]
    assert lease.answers == [7, 8]  # the lease was not asked for while stuck
    assert [r.getMessage() for r in caplog.records if "handing back" in r.getMessage()] == [
        "handing back the leader's lease: the package torch 2.16.0 job has run 2m; a standby "
        "takes over"]
    stuck.clear()
    assert leadership.renew() and leadership.token() == 7  # competes again once it ended


def _events(folder: Path) -> list[dict]:
    path = folder / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_daemon_announces_at_once_and_the_package_diff_follows(
        fake_github, fake_slack, tmp_path):
    """The wheel of v3.1.0 drips: the release is announced within one poll interval, and an
    xla release published while the worker is on the drip too; the drip is abandoned in one
    line; once a sound wheel is served (after ``package_retry``) the diff follows as an edit."""
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "train.py").write_text(TRAIN)
    fake_github.add_repo("pytorch/pytorch")
    fake_github.add_repo("pytorch/xla")
    with FakePackageIndex() as index:
        index.add("torch", "3.0.0", "torch-3.0.0-py3-none-any.whl",
                  write_wheel(tmp_path, "3.0.0", V1).read_bytes())
        dripping = index.add("torch", "3.1.0", "torch-3.1.0-py3-none-any.whl",
                             write_wheel(tmp_path, "3.1.0", V2).read_bytes() + b"\0" * 100_000,
                             drip=(200, 0.1))
        config = daemon_config(
            tmp_path / "rw.toml", fake_github.url, fake_slack.api_url,
            repos=("pytorch/pytorch", "pytorch/xla"),
            extra='[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'
                  f'[impact]\ncode = ["trainer"]\npackage_index = "{index.url}"\n'
                  'download_slow_for = "1s"\npackage_retry = "3s"\n')
        daemon = Daemon(config)
        try:
            wait_for(lambda: "baseline" in daemon.log, timeout=60, what="the first poll")
            fake_github.add_release("pytorch/pytorch", tag="v3.1.0", name="PyTorch 3.1.0",
                                    body=NOTES)
            added = time.monotonic()
            wait_for(lambda: len(_events(tmp_path)) >= 1, timeout=60, what="v3.1.0 announced")
            announced = time.monotonic() - added
            wait_for(lambda: "/files/torch-3.1.0-py3-none-any.whl" in index.requests,
                     timeout=60, what="the worker on the drip")
            fake_github.add_release("pytorch/xla", tag="v2.0.0", body=XLA)
            added = time.monotonic()
            wait_for(lambda: len(_events(tmp_path)) >= 2, timeout=60, what="xla announced")
            beside = time.monotonic() - added
            wait_for(lambda: "under the floor" in daemon.log, timeout=60,
                     what="the drip abandoned")
            dripping.drip = None
            dripping.data = write_wheel(tmp_path, "3.1.0", V2).read_bytes()
            wait_for(lambda: len(_events(tmp_path)) >= 3, timeout=60, what="the package diff")
        finally:
            code = daemon.terminate()
    found = _events(tmp_path)
    assert [(e["event"], e["tag"]) for e in found] == [
        ("published", "v3.1.0"), ("published", "v2.0.0"), ("edited", "v3.1.0")]
    assert announced < 1 + 4 and beside < 1 + 4  # one 1 s poll interval (and a loaded machine)
    verbose = next(item for item in found[2]["items"] if item["text"].startswith(TITLE))
    assert [(use["line"], use["tier"]) for use in verbose["affects"]] == [(6, "breaks")]
    said = [line for line in daemon.lines if "package torch 3.1.0 not read" in line]
    assert len(said) == 1 and "under the floor of 10 KB/s" in said[0]
    assert "; trying again after" in said[0]
    assert code == 0 and "Traceback" not in daemon.log
