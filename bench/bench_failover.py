"""Failover under kill -9, 20 times: two replicas of `release-watch run` on one PostgreSQL store
(a throwaway server, ``tests/postgres_support.py``) against the loopback fakes. Each round, a
new release is published while Slack answers each post after 0.4 s; once its first message is
in, the leader is killed with SIGKILL in the middle of its thread; the standby must take over
and finish it; the killed replica is started again as the next standby.

Figures: messages lost and duplicated over all rounds, against what one embedded daemon posts
for the same releases (a duplicate is the message in flight at a kill: at most one per kill);
the takeover, from the kill to the standby's ``/readyz`` saying ``leader``, and to its first
post, against the lease plus one renewal (``[store] lease = "3s"``, renewed every second:
the bound the design gives).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from run_all import TESTS, Row, print_table, release_notes, seconds, verdict

KILLS = 20
LEASE = 3.0


def run() -> list[Row]:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from conftest import SLACK_TOKEN
    from daemon_support import wait_for
    from failover_support import POSTS, REPO, Replica, compare, reference, sent, wait_for_roles
    from fakes.github import FakeGitHub
    from fakes.slack import FakeSlack, Scripted
    from postgres_support import cluster, skip_reason

    if skip_reason() is not None:
        return [Row("bench_failover", "skipped", "-", str(skip_reason()))]
    body = release_notes("xla/v2.0.0.md")
    servers = cluster()
    postgres = next(servers)
    ready, first_post, rounds = [], [], []
    with tempfile.TemporaryDirectory() as temp, FakeGitHub() as github, FakeSlack() as slack:
        root = Path(temp)
        slack.add_token(SLACK_TOKEN, channels=["#releases"])
        github.add_repo(REPO)
        url = postgres.database()
        replicas = [Replica(root, name, github.url, slack.api_url, url, f"{LEASE:g}s")
                    for name in ("a", "b")]
        try:
            replicas[0].start()
            wait_for_roles(replicas[:1])
            replicas[1].start()
            for kill in range(1, KILLS + 1):
                leader = wait_for_roles(replicas)
                standby = next(replica for replica in replicas if replica is not leader)
                tag = f"v{kill}.0"
                before = sum(sent(slack).values())
                slack.script(POSTS, *[Scripted(delay=0.4)] * 40)
                github.add_release(REPO, tag=tag, body=body)
                wait_for(lambda tag=tag: any(tag in key for key in sent(slack)),
                         what=f"{tag}'s first message")
                leader.kill()
                killed = time.monotonic()
                slack.unscript(POSTS)
                in_flight = sum(sent(slack).values())
                wait_for(lambda s=standby: s.role() == "leader", timeout=60, what="takeover")
                ready.append(time.monotonic() - killed)
                wait_for(lambda n=in_flight: sum(sent(slack).values()) > n, timeout=60,
                         what="the new leader's first post")
                first_post.append(time.monotonic() - killed)
                rounds.append(in_flight - before)
                leader.start()  # the killed one comes back as the next standby
                print(f"kill {kill}: leader after {ready[-1]:.1f} s, first post after "
                      f"{first_post[-1]:.1f} s", file=sys.stderr, flush=True)
            expected = reference([(f"v{n}.0", body) for n in range(1, KILLS + 1)],
                                 root / "reference")
            wait_for(lambda: compare(expected, sent(slack))[0] == 0, timeout=120,
                     what="every message")
            time.sleep(3)  # more polls and retries must add nothing
            lost, duplicated = compare(expected, sent(slack))
        finally:
            for replica in replicas:
                replica.kill()
            next(servers, None)  # the server and its directory go
    bound = LEASE + LEASE / 3
    return [
        Row("bench_failover", f"{KILLS} kills mid-thread: {lost} lost, {duplicated} duplicated",
            f"at most {KILLS} (one in flight a kill)",
            verdict(lost == 0 and duplicated <= KILLS, "0 lost, <= 1 per kill")),
        Row("bench_failover", f"takeover to leader: median {seconds(statistics.median(ready))}"
            f", max {seconds(max(ready))}", f"lease + a renewal: {seconds(bound)}",
            verdict(max(ready) <= bound + 1.0, "within the bound (+1 s for the fakes)")),
        Row("bench_failover", f"kill to first post: median "
            f"{seconds(statistics.median(first_post))}, max {seconds(max(first_post))}",
            "60 s (the issue's limit)", verdict(max(first_post) < 60, "< 60 s")),
    ]


if __name__ == "__main__":
    print_table(run())
