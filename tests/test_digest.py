"""Digests: queued per notifier; in Slack one parent message per repository, each with its own
thread, in the watch list's order; sent message by message, resumed after the last one sent,
and cleared only once the whole digest was delivered."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import timedelta

import pytest
from conftest import SLACK_TOKEN, release_notes
from daemon_support import environment
from fakes.slack import Scripted
from readable import message_text

ENV = {"SLACK_BOT_TOKEN": SLACK_TOKEN}
V27 = release_notes("pytorch/v2.7.0.md")
XLA = release_notes("xla/v2.0.0.md")


def digest_notifier(name: str, channel: str, filters: str = "") -> str:
    return (f'[[notifiers]]\nname = "{name}"\ntype = "slack"\nchannel = "{channel}"\n'
            f'mode = "digest"\ndigest_schedule = "0 9 * * MON"\n{filters}\n')


THREE_CHANNELS = (digest_notifier("xla", "#xla", 'repos = ["pytorch/xla"]')
                  + digest_notifier("dist", "#dist-training", 'subsystems = ["distributed"]')
                  + digest_notifier("breaking", "#breaking",
                                    'kinds = ["bc_breaking", "deprecation"]'))


def a_week(fake_github, run_cli, config, clock):
    """Two releases and one edit over a week, polled as the daemon would."""
    fake_github.add_repo("pytorch/pytorch")
    fake_github.add_repo("pytorch/xla")
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0  # empty baseline
    clock.now += timedelta(days=1)
    v27 = fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0",
                                  body=V27)
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0
    clock.now += timedelta(days=2)
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA)
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0
    clock.now += timedelta(days=2)
    heading = "#### FullyShardedDataParallel2 (FSDP2)\n"
    assert heading in V27
    fake_github.edit_release("pytorch/pytorch", v27["id"], body=V27.replace(
        heading, heading + "- Support `reshard_after_forward=int` in FSDP2 (#150000)\n", 1))
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0
    clock.now += timedelta(days=2)


@pytest.mark.slow
def test_a_week_routed_to_three_channels_matches_each_filter(fake_github, fake_slack,
                                                             write_config, run_cli, clock):
    config = write_config(notifiers=THREE_CHANNELS, slack_url=fake_slack.api_url)
    a_week(fake_github, run_cli, config, clock)
    assert fake_slack.messages == []  # digest notifiers only queue
    status = run_cli("--config", str(config), "digest", env=ENV)
    assert status.code == 0, status.stderr

    def text(channel: str) -> str:
        return "\n".join(m.all_text() for m in fake_slack.channel_messages(channel))

    xla = text("xla")
    assert "v2.0" in xla and "PyTorch 2.7.0" not in xla
    assert "LazyTensor" in xla and "lazy_tensor" not in xla  # names, not ids
    dist = text("dist-training")
    assert "PyTorch 2.7.0" in dist and "v2.0" in dist and "edited" in dist
    assert "*Distributed*" in dist and "*torch.compile*" not in dist
    breaking = text("breaking")
    assert "PyTorch 2.7.0" in breaking and "v2.0" not in breaking  # XLA 2.0 has no BC items
    assert "Dropped support for Triton" in breaking
    assert "deprecation" in breaking and "new features" not in breaking
    parents = [m for m in fake_slack.messages if m.thread_ts is None]
    # one parent per notifier and repository it has something for
    assert [(m.channel, m.blocks[0]["text"]["text"].split(":")[0]) for m in parents] == [
        ("xla", "pytorch/xla"), ("dist-training", "pytorch/pytorch"),
        ("dist-training", "pytorch/xla"), ("breaking", "pytorch/pytorch")]
    assert all(re.fullmatch(r"pytorch/(pytorch|xla): release digest \d{4}-\d\d-\d\d to "
                            r"\d{4}-\d\d-\d\d", m.blocks[0]["text"]["text"]) for m in parents)
    # sent and cleared: nothing left for the next digest
    assert run_cli("--config", str(config), "digest", env=ENV).code == 0
    assert len([m for m in fake_slack.messages if m.thread_ts is None]) == 4


def test_digest_queue_survives_a_failed_send_and_resends_without_duplicates(
        fake_github, fake_slack, write_config, run_cli, clock):
    notifiers = digest_notifier("dist", "#dist-training", 'subsystems = ["distributed"]'
                                '\nretries = 0')
    config = write_config(notifiers=notifiers, slack_url=fake_slack.api_url)
    a_week(fake_github, run_cli, config, clock)
    fake_slack.script("/api/chat.postMessage", Scripted(), Scripted.server_error())
    failed = run_cli("--config", str(config), "digest", env=ENV)
    assert failed.code == 1
    assert len(fake_slack.messages) == 1
    assert run_cli("--config", str(config), "digest", env=ENV).code == 0
    parents = [m for m in fake_slack.messages if m.thread_ts is None]
    assert len(parents) == 2 and len(fake_slack.messages) >= 4  # a parent and thread per repo
    blocks = [json.dumps(m.blocks, sort_keys=True) for m in fake_slack.messages]
    assert len(set(blocks)) == len(blocks)  # the parent that went out was not sent again


def planned(run_cli, config, name: str) -> list[dict]:
    """The digest's messages as ``digest --dry-run`` prints them (it sends nothing)."""
    dry = run_cli("--config", str(config), "digest", "--dry-run", env=ENV)
    assert dry.code == 0, dry.stderr
    return json.loads(dry.stdout.removeprefix(f"# digest for {name}\n"))


PERIOD = re.compile(r"\d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d")


def posted_as_planned(fake_slack, plan: list[dict]) -> None:
    """Every planned message posted exactly once, in order, each reply in its own parent's
    thread (the period aside: a digest run in a process of its own ends it at the real date)."""
    def blocks(messages: list) -> list[str]:
        return [PERIOD.sub("PERIOD", json.dumps(m, sort_keys=True)) for m in messages]

    assert blocks([m.blocks for m in fake_slack.messages]) == blocks([m["blocks"] for m in plan])
    parent = None
    for message, meant in zip(fake_slack.messages, plan, strict=True):
        if meant["thread_reply"]:
            assert message.thread_ts == parent.ts
        else:
            assert message.thread_ts is None
            parent = message


def test_two_repos_are_two_parents_each_with_its_own_thread_and_counts(
        fake_github, fake_slack, write_config, run_cli, clock):
    # the watch list names pytorch/xla first: its parent comes first
    config = write_config(notifiers=digest_notifier("weekly", "#releases"),
                          repos=("pytorch/xla", "pytorch/pytorch"), slack_url=fake_slack.api_url)
    a_week(fake_github, run_cli, config, clock)
    plan = planned(run_cli, config, "weekly")
    assert run_cli("--config", str(config), "digest", env=ENV).code == 0
    assert all(r.error is None for r in fake_slack.requests), [r.error for r in fake_slack.requests]
    posted_as_planned(fake_slack, plan)
    xla, torch = [m for m in fake_slack.messages if m.thread_ts is None]
    assert xla.blocks[0]["text"]["text"].startswith("pytorch/xla: release digest ")
    assert torch.blocks[0]["text"]["text"].startswith("pytorch/pytorch: release digest ")
    assert "*1 release event, 42 changes*" in xla.all_text()
    # The release and its edit of the same week are one entry: the release as it now is
    # (609 items and the one the edit added), its edit noted; nothing counted twice.
    assert ("*1 release event, 610 changes (11 BC-breaking changes, 2 deprecations, "
            "10 highlights)*") in torch.all_text()
    assert "Most important: 11 BC-breaking changes" in torch.all_text()
    assert "Most important" not in xla.all_text()  # XLA 2.0 has none of those kinds
    xla_thread = message_text(fake_slack.thread(xla.ts))
    torch_thread = message_text(fake_slack.thread(torch.ts))
    assert "v2.0" in xla_thread and "LazyTensor" in xla_thread
    assert "PyTorch 2.7.0" not in xla_thread and "Dropped support for Triton" not in xla_thread
    assert "PyTorch 2.7.0" in torch_thread and "released: 610 changes (edited once)" in torch_thread
    assert torch_thread.count("• <https://github.com/pytorch/pytorch/releases/tag/v2.7.0|") == 1
    assert "LazyTensor" not in torch_thread
    assert "*Changes per subsystem*" in xla_thread and "*Changes per subsystem*" in torch_thread
    assert "more changes in pytorch/pytorch: see the release notes" in torch_thread
    assert len(fake_slack.messages) == 2 + len(fake_slack.thread(xla.ts)) + len(
        fake_slack.thread(torch.ts))


@pytest.mark.slow
def test_a_failure_before_the_second_parent_resumes_there_sending_each_message_once(
        fake_github, fake_slack, write_config, run_cli, clock):
    config = write_config(notifiers=digest_notifier("weekly", "#releases", "retries = 0"),
                          slack_url=fake_slack.api_url)
    a_week(fake_github, run_cli, config, clock)
    plan = planned(run_cli, config, "weekly")
    parents = [n for n, m in enumerate(plan) if not m["thread_reply"]]
    assert len(parents) == 2 and parents[1] >= 2  # the first repo's parent and its thread
    second = parents[1]
    fake_slack.script("/api/chat.postMessage", *[Scripted()] * second, Scripted.server_error())
    assert run_cli("--config", str(config), "digest", env=ENV).code == 1
    assert len(fake_slack.messages) == second  # the first repo's parent and whole thread
    assert run_cli("--config", str(config), "digest", env=ENV).code == 0
    posted_as_planned(fake_slack, plan)
    assert run_cli("--config", str(config), "digest", env=ENV).code == 0  # cleared: no more
    assert len(fake_slack.messages) == len(plan)


@pytest.mark.slow
def test_a_crash_inside_the_second_repo_s_thread_resumes_after_the_last_message_sent(
        fake_github, fake_slack, write_config, run_cli, clock):
    config = write_config(notifiers=digest_notifier("weekly", "#releases",
                                                    'min_interval = "0s"'),
                          slack_url=fake_slack.api_url)
    a_week(fake_github, run_cli, config, clock)
    plan = planned(run_cli, config, "weekly")
    parents = [n for n, m in enumerate(plan) if not m["thread_reply"]]
    crash_after = parents[1] + 1  # the second parent went out and its progress was saved
    crashed = subprocess.run(
        [sys.executable, "-m", "watcher", "--config", str(config), "digest"],
        env=environment(RELEASE_WATCH_CRASH_AT=f"slack:progress-saved:{crash_after}"),
        cwd=config.parent, capture_output=True, text=True, timeout=120)
    assert crashed.returncode == -9, crashed.stderr
    assert len(fake_slack.messages) == crash_after
    assert run_cli("--config", str(config), "digest", env=ENV).code == 0
    posted_as_planned(fake_slack, plan)


def test_a_webhook_digest_is_one_message_per_repo_within_slacks_limits(
        fake_github, fake_slack, write_config, run_cli, clock):
    notifiers = ('[[notifiers]]\nname = "hook"\ntype = "slack"\ndelivery = "webhook"\n'
                 'mode = "digest"\n')
    config = write_config(notifiers=notifiers, slack_url=fake_slack.api_url)
    a_week(fake_github, run_cli, config, clock)
    env = {"SLACK_WEBHOOK_URL": fake_slack.webhook_url}
    assert run_cli("--config", str(config), "digest", env=env).code == 0
    assert all(r.error is None for r in fake_slack.requests)  # the fake refuses past the limits
    torch, xla = fake_slack.messages
    assert torch.via == xla.via == "webhook"
    assert torch.blocks[0]["text"]["text"].startswith("pytorch/pytorch: release digest ")
    assert xla.blocks[0]["text"]["text"].startswith("pytorch/xla: release digest ")
    assert "PyTorch 2.7.0" in torch.all_text() and "LazyTensor" not in torch.all_text()
    assert "v2.0" in xla.all_text() and "PyTorch 2.7.0" not in xla.all_text()
    assert "are below" in torch.all_text()  # no thread: the items follow in the message


def test_nothing_pending_sends_nothing_unless_asked(fake_github, fake_slack, write_config,
                                                    run_cli):
    fake_github.add_repo("pytorch/xla")
    quiet = digest_notifier("quiet", "#xla")
    loud = digest_notifier("loud", "#breaking", "send_empty_digest = true")
    config = write_config(repos=("pytorch/xla",), notifiers=quiet + loud,
                          slack_url=fake_slack.api_url)
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0
    assert run_cli("--config", str(config), "digest", env=ENV).code == 0
    assert fake_slack.channel_messages("xla") == []
    (message,) = fake_slack.channel_messages("breaking")
    assert "Nothing new" in message.all_text()


def test_console_and_jsonl_digests(fake_github, write_config, run_cli, clock):
    notifiers = ('[[notifiers]]\nname = "screen"\ntype = "console"\nmode = "digest"\n'
                 '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "digest.jsonl"\n'
                 'mode = "digest"\nkinds = ["bc_breaking"]\n')
    config = write_config(notifiers=notifiers)
    a_week(fake_github, run_cli, config, clock)
    assert not (config.parent / "digest.jsonl").exists()
    dry = run_cli("--config", str(config), "digest", "--dry-run")
    assert dry.code == 0 and "Digest for screen" in dry.stdout
    assert not (config.parent / "digest.jsonl").exists()
    result = run_cli("--config", str(config), "digest")
    assert result.code == 0
    assert "Digest for screen" in result.stdout and "pytorch/xla" in result.stdout
    written = (config.parent / "digest.jsonl").read_text().splitlines()
    lines = [json.loads(line) for line in written]
    # the edit added no BC-breaking item, so this notifier's digest does not carry it
    assert [(e["event"], e["tag"]) for e in lines] == [("published", "v2.7.0")]
    assert all(item["kind"] == "bc_breaking" for e in lines for item in e["items"])


def test_digest_for_an_unknown_notifier_is_a_usage_error(write_config, run_cli):
    config = write_config()
    result = run_cli("--config", str(config), "digest", "--notifier", "nope")
    assert result.code == 2 and "no digest notifier named 'nope'" in result.stderr


def test_digest_schedule_without_digest_mode_is_noted(run_cli, tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[[notifiers]]\nname = "x"\ntype = "console"\ndigest_schedule = "0 9 * * *"\n')
    result = run_cli("--config", str(path), "config", "check")
    assert result.code == 0 and "the schedule is unused" in result.stdout
    path.write_text('[[notifiers]]\nname = "x"\ntype = "console"\nmode = "digest"\n'
                    'digest_schedule = "0 9 * *"\n')
    bad = run_cli("--config", str(path), "config", "check")
    assert bad.code == 2 and "5-field cron" in bad.stderr


# Count words as a person would not write them: "1 changes", "1 deprecations", "1 bc-breaking".
WRONG_COUNTS = re.compile(
    r"\b1 (?:[Cc]hanges|[Dd]eprecations|bc-breaking|BC-breaking(?! change)|[Bb]ug fixes|"
    r"[Nn]ew features|[Ii]mprovements|[Hh]ighlights|[Rr]egressions|release events|uses|files|"
    r"repositories|more changes|more release events|more subsystems|releases)\b")


def test_counts_read_right_and_every_digest_item_says_its_kind(fake_github, fake_slack,
                                                              write_config, run_cli, clock):
    body = ("# Backwards Incompatible Changes\n### Remove `torch.widget` (#1)\nIt is gone.\n"
            "# Deprecations\n### `torch.gadget` is deprecated (#2)\nUse `torch.gizmo`.\n"
            "# Bug fixes\n## Distributed\n- Fix a hang in c10d (#3)\n")
    notifiers = (digest_notifier("weekly", "#breaking")
                 + '[[notifiers]]\nname = "screen"\ntype = "console"\nmode = "digest"\n'
                 + '[[notifiers]]\nname = "now"\ntype = "console"\n'
                 + '[[notifiers]]\nname = "now-slack"\ntype = "slack"\nchannel = "#xla"\n')
    config = write_config(repos=("pytorch/pytorch",), notifiers=notifiers,
                          slack_url=fake_slack.api_url)
    fake_github.add_repo("pytorch/pytorch")
    first = run_cli("--config", str(config), "poll", env=ENV)
    assert first.stdout == "baseline: 0 releases recorded for pytorch/pytorch\n"
    clock.now += timedelta(days=1)
    fake_github.add_release("pytorch/pytorch", tag="v9.0", name="PyTorch 9.0", body=body)
    polled = run_cli("--config", str(config), "poll", env=ENV)
    assert polled.code == 0, polled.stderr
    result = run_cli("--config", str(config), "digest", env=ENV)
    assert result.code == 0, result.stderr
    slack = "\n".join(m.all_text() for m in fake_slack.channel_messages("breaking"))
    event_post = "\n".join(m.all_text() for m in fake_slack.channel_messages("xla"))
    for text in (result.stdout, polled.stdout, slack, event_post):
        assert not WRONG_COUNTS.search(text), WRONG_COUNTS.search(text)
    console = result.stdout
    for line in ("    Distributed: 1 change (1 bug fix)",
                 "      - Bug fix: [c10d] Fix a hang in c10d (#3)",
                 "    ONNX: 1 change (1 deprecation)",
                 "      - Deprecation: [ONNX?] `torch.gadget` is deprecated (#2)",
                 "    Python frontend: 1 change (1 BC-breaking change)",
                 "      - BC-breaking: [Python frontend?] Remove `torch.widget` (#1)"):
        assert line in console.splitlines(), line
    assert "Most important: 1 BC-breaking change, 1 deprecation" in slack
    assert "• *BC-breaking:* " in slack and "• *Deprecation:* " in slack
    assert "3 changes (1 BC-breaking change, 1 deprecation)" in slack
    assert "; 1 BC-breaking change, 1 deprecation" in event_post
