"""Two daemons on one PostgreSQL store (real processes, the fake GitHub and the fake Slack): one
leads and posts each release once, the other stands by; kill -9 the leader in the middle of a
delivery and the standby takes over, finishes that delivery from its saved progress (at most
the one message in flight twice) and posts the next release once, within 60 s."""

from __future__ import annotations

import time

import httpx
import pytest
from conftest import SLACK_TOKEN, release_notes
from daemon_support import wait_for
from failover_support import (
    POSTS,
    REPO,
    Replica,
    compare,
    killed_at_end,
    reference,
    sent,
    wait_for_roles,
)
from fakes.pypi import FakePackageIndex
from fakes.slack import Scripted

# Two real replicas on PostgreSQL, end to end: slow, and their waits (60 s each at most) may
# take a loaded machine longer than the usual deadline.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

XLA = release_notes("xla/v2.0.0.md")
LEASE = "3s"


def posted(fake_slack, tag: str) -> bool:
    return any(tag in json for json in sent(fake_slack))


def test_the_standby_takes_over_after_a_kill_mid_delivery(fake_github, fake_slack, tmp_path,
                                                          postgres_url):
    fake_slack.add_token(SLACK_TOKEN, channels=["#releases"])
    fake_github.add_repo(REPO)
    replicas = [Replica(tmp_path, name, fake_github.url, fake_slack.api_url, postgres_url,
                        LEASE) for name in ("a", "b")]
    first, second = replicas
    with killed_at_end(replicas):
        first.start()
        wait_for_roles([first])
        second.start()
        leader = wait_for_roles(replicas)
        assert leader is first
        standby = second
        gauges = [httpx.get(f"http://127.0.0.1:{r.port}/metrics", timeout=10).text
                  for r in (leader, standby)]
        assert "release_watch_leader 1\n" in gauges[0]
        assert "release_watch_leader 0\n" in gauges[1]
        fake_github.add_release(REPO, tag="v1.0", body=XLA)
        wait_for(lambda: posted(fake_slack, "v1.0"), what="v1.0 posted")
        # The thread of v2.0 goes out slowly; the leader is killed once its parent is in.
        fake_slack.script(POSTS, *[Scripted(delay=0.4)] * 60)
        fake_github.add_release(REPO, tag="v2.0", body=XLA)
        wait_for(lambda: posted(fake_slack, "v2.0"), what="v2.0's first message")
        leader.kill()
        killed = time.monotonic()
        at_kill = sum(count for json, count in sent(fake_slack).items() if "v2.0" in json)
        fake_slack.unscript(POSTS)
        wait_for(lambda: standby.role() == "leader", timeout=60, what="the standby to lead")
        took_over = time.monotonic() - killed
        fake_github.add_release(REPO, tag="v3.0", body=XLA)
        wait_for(lambda: posted(fake_slack, "v3.0"), timeout=60, what="v3.0 after the kill")
        expected = reference([("v1.0", XLA), ("v2.0", XLA), ("v3.0", XLA)], tmp_path / "ref")
        wait_for(lambda: compare(expected, sent(fake_slack))[0] == 0, timeout=60,
                 what="every message of the three releases")
        time.sleep(2)  # a few more polls and retries of the new leader must add nothing
    lost, duplicated = compare(expected, sent(fake_slack))
    assert lost == 0 and duplicated <= 1, (lost, duplicated)
    of_v2 = sum(count for json, count in expected.items() if "v2.0" in json)
    assert 1 <= at_kill < of_v2  # the kill came in the middle of v2.0's thread
    extra = sent(fake_slack) - expected
    assert all("v2.0" in json for json in extra)  # only the one in flight at the kill
    assert took_over < 60
    assert "this replica leads now" in standby.log
    assert "Traceback" not in standby.log


def test_a_leader_whose_lease_was_taken_stands_by_and_posts_nothing(fake_github, fake_slack,
                                                                   tmp_path, postgres_url):
    """Its next renewal reads that the lease is no longer its own: from then on it starts
    nothing; once the other term lapses it leads again, in a new term, and posts what came."""
    import psycopg

    fake_slack.add_token(SLACK_TOKEN, channels=["#releases"])
    fake_github.add_repo(REPO)
    replica = Replica(tmp_path, "a", fake_github.url, fake_slack.api_url, postgres_url, LEASE)
    with killed_at_end([replica]):
        replica.start()
        wait_for_roles([replica])
        with psycopg.connect(postgres_url, autocommit=True) as db:
            db.execute("UPDATE rw_lease SET holder = 'elsewhere', token = token + 1, "
                       "expires = clock_timestamp() + interval '12 seconds'")
        taken = time.monotonic()
        wait_for(lambda: replica.role() == "standby", timeout=30, what="the replica to stand by")
        fake_github.add_release(REPO, tag="v1.0", body=XLA)
        time.sleep(2)  # polls come round and do nothing while the other term holds
        if time.monotonic() - taken < 11:  # (a machine this slow proves nothing here)
            assert not posted(fake_slack, "v1.0")
        wait_for(lambda: posted(fake_slack, "v1.0"), timeout=60, what="v1.0 once it leads again")
        # The announcement is more than one message: the first posted says nothing of the rest.
        whole = sum(reference([("v1.0", XLA)], tmp_path / "ref").values())
        wait_for(lambda: sum(sent(fake_slack).values()) >= whole, timeout=30,
                 what="every message of v1.0")
        with psycopg.connect(postgres_url, autocommit=True) as db:
            holder, token = db.execute("SELECT holder, token FROM rw_lease").fetchone()
    assert token == 3 and holder != "elsewhere"  # a new term of its own
    assert "this replica is a standby now" in replica.log
    assert sum(sent(fake_slack).values()) == whole  # once, whole


def test_a_leader_whose_package_job_hangs_loses_the_lease_and_the_standby_announces(
        fake_github, fake_slack, tmp_path, postgres_url):
    """Issue 35: the leader announces v9.1.0 from its notes, then its package job for the
    release's wheel hangs where no timeout reaches (``RELEASE_WATCH_HANG_AT``). Past the job's
    deadline (its budget, 3 s, plus 10 s) it hands its lease back; the standby leads, and
    announces v9.2.0 (once); the hung replica posts nothing more."""
    fake_slack.add_token(SLACK_TOKEN, channels=["#releases"])
    fake_github.add_repo(REPO)
    with FakePackageIndex() as gone:
        index = gone.url  # nothing listens there: the standby's fetch would fail at once
    budget = (f'[impact]\ncode = ["."]\npackage_index = "{index}"\nindex_timeout = "1s"\n'
              'download_timeout = "1s"\nbuild_timeout = "1s"\n')
    replicas = [Replica(tmp_path, name, fake_github.url, fake_slack.api_url, postgres_url,
                        LEASE, extra=budget) for name in ("a", "b")]
    first, second = replicas
    with killed_at_end(replicas):
        first.start(RELEASE_WATCH_HANG_AT="package:fetch")
        wait_for_roles([first])
        second.start()
        assert wait_for_roles(replicas) is first
        fake_github.add_release(REPO, tag="v9.1.0", body=XLA)
        wait_for(lambda: posted(fake_slack, "v9.1.0"), what="v9.1.0 announced by the leader")
        wait_for(lambda: "the package torch_xla 9.1.0 job" in first.log, timeout=60,
                 what="the leader's package job to be stuck")
        wait_for(lambda: second.role() == "leader", timeout=60, what="the standby to lead")
        fake_github.add_release(REPO, tag="v9.2.0", body=XLA)
        wait_for(lambda: posted(fake_slack, "v9.2.0"), timeout=60, what="v9.2.0 announced")
        expected = reference([("v9.1.0", XLA), ("v9.2.0", XLA)], tmp_path / "ref")
        wait_for(lambda: compare(expected, sent(fake_slack))[0] == 0, timeout=60,
                 what="every message of the two releases")
        time.sleep(2)  # a few more polls of the new leader must add nothing
        roles = (first.role(), second.role())
    assert roles == ("standby", "leader")
    assert "handing back the leader's lease: the package torch_xla 9.1.0 job has run" in \
        first.log
    assert "this replica leads now" in second.log
    assert compare(expected, sent(fake_slack)) == (0, 0)  # each message once, none lost
    assert "Traceback" not in first.log + second.log
