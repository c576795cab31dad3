"""``release-watch upgrade``: the version the code is on from its pins to the newest release,
the notes of every release in between fetched from the fake GitHub (conditionally, cached in
the store apart from the bot's records), each (use, change) pair under its release."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES

NOTES = FIXTURES / "releases" / "pytorch"
RELEASES = [("v2.5.0", "v2.5.0.md"), ("v2.5.1", None), ("v2.6.0", "v2.6.0-torch-load.md"),
            ("v2.7.0", "v2.7.0.md"), ("v2.8.0", "v2.8.0.md"), ("v2.9.0", "v2.9.0.md"),
            ("v2.10.0", "v2.10.0.md")]
TRAIN = textwrap.dedent("""\
    import torch


    def export(model, args):
        torch.onnx.export(model, args, "model.onnx")


    def load(path):
        return torch.load(path)
    """)
LISTING = "/repos/pytorch/pytorch/releases"


def publish(fake_github, releases=RELEASES) -> None:
    """Oldest first, as they came out: the listing has the newest first."""
    for tag, notes in releases:
        body = (NOTES / notes).read_text() if notes else "## Bug fixes\n- A fix (#1)\n"
        fake_github.add_release("pytorch/pytorch", tag=tag, name=tag, body=body)


@pytest.fixture
def trainer(tmp_path: Path) -> Path:
    root = tmp_path / "trainer"
    root.mkdir()
    (root / "train.py").write_text(TRAIN)
    (root / "requirements.txt").write_text("numpy\ntorch==2.5.0\n")
    return root


def pairs(report: dict) -> list[tuple[str, int, str, str, str, str]]:
    return sorted((use["path"], use["line"], use["api"], use["tier"], use["release"],
                   item["text"].split("\n")[0]) for item in report["items"]
                  for use in item.get("affects", []))


@pytest.mark.slow
def test_upgrade_gives_the_uses_of_impact_over_the_range_after_the_pinned_version(
        run_cli, fake_github, write_config, trainer):
    publish(fake_github)
    config = write_config(repos=("pytorch/pytorch",))
    upgraded = run_cli("--config", str(config), "upgrade", "--code", str(trainer),
                       "--format", "json")
    assert upgraded.code == 1, upgraded.stderr
    report = json.loads(upgraded.stdout)
    plan = report["upgrade"]
    assert (plan["from"], plan["to"]) == ("2.5.0", "2.10.0")
    assert plan["releases"] == ["v2.5.1", "v2.6.0", "v2.7.0", "v2.8.0", "v2.9.0", "v2.10.0"]
    assert plan["decided_by"].endswith("pinned at " + str(trainer) + "/requirements.txt:2")
    assert "torch 2.5.0 -> 2.10.0" in upgraded.stderr  # the plan, apart from the JSON
    assert run_cli("--config", str(config), "poll").code == 0
    ranged = run_cli("--config", str(config), "impact", "--range", "v2.6.0..v2.10.0",
                     "--code", str(trainer), "--format", "json")
    assert pairs(report) == pairs(json.loads(ranged.stdout))
    found = {(line, release, tier) for _, line, _, tier, release, _ in pairs(report)}
    # One export call, changed by 2.8 (opset) and by 2.9 (dynamo, opset): each listed. Only
    # 2.9's dynamo default is the package's own change (breaks); 2.8's opset and 2.6's
    # weights_only defaults rest on the notes' words (check).
    assert {(5, "v2.9.0", "breaks"), (5, "v2.8.0", "check"), (9, "v2.6.0", "check")} <= found
    assert (5, "v2.8.0", "breaks") not in found


@pytest.mark.slow
def test_a_second_run_asks_conditionally_and_the_bot_still_announces_what_it_fetched(
        run_cli, fake_github, write_config, trainer, tmp_path):
    publish(fake_github, RELEASES[:-1])
    config = write_config(repos=("pytorch/pytorch",))
    assert run_cli("--config", str(config), "poll").code == 0  # the bot's baseline
    publish(fake_github, RELEASES[-1:])  # 2.10 comes out; CI sees it first
    first = run_cli("--config", str(config), "upgrade", "--code", str(trainer))
    fake_github.reset_requests()
    second = run_cli("--config", str(config), "upgrade", "--code", str(trainer))
    assert (first.code, second.code) == (1, 1) and first.stdout == second.stdout
    assert second.stdout.startswith("torch 2.5.0 -> 2.10.0: pinned at ")
    assert [request.status for request in fake_github.requests_to(LISTING)] == [304]
    assert fake_github.requests_to(LISTING)[0].headers.get("if-none-match")
    assert run_cli("--config", str(config), "poll").code == 0
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [(e["tag"], e["event"]) for e in events][-1] == ("v2.10.0", "published")


def test_from_and_to_choose_the_releases_from_excluded_to_included(
        run_cli, fake_github, write_config, trainer):
    publish(fake_github, [*RELEASES[:4], ("v2.11.0-rc1", None)])
    config = write_config(repos=("pytorch/pytorch",))
    result = run_cli("--config", str(config), "upgrade", "--code", str(trainer), "--from",
                     "2.5.1", "--to", "v2.7.0", "--format", "json", "--only-affecting")
    plan = json.loads(result.stdout)["upgrade"]
    assert (plan["releases"], plan["decided_by"]) == (["v2.6.0", "v2.7.0"], "--from")
    newest = run_cli("--config", str(config), "upgrade", "--code", str(trainer),
                     "--format", "json")
    assert json.loads(newest.stdout)["upgrade"]["to"] == "2.7.0"  # never the pre-release
    missing = run_cli("--config", str(config), "upgrade", "--code", str(trainer), "--to",
                      "2.99")
    assert missing.code == 2
    assert missing.stderr.strip() == ("release-watch: --to 2.99: pytorch/pytorch has no such "
                                      "release (the newest is v2.7.0)")


def test_pins_that_disagree_exit_two_in_one_line_unless_from_is_given(
        run_cli, fake_github, write_config, trainer):
    publish(fake_github, RELEASES[:3])
    (trainer / "docker").mkdir()
    (trainer / "docker" / "requirements.txt").write_text("torch==2.4.1\n")
    config = write_config(repos=("pytorch/pytorch",))
    refused = run_cli("--config", str(config), "upgrade", "--code", str(trainer))
    assert refused.code == 2 and len(refused.stderr.splitlines()) == 1
    assert "pins torch in several ways" in refused.stderr and "--from" in refused.stderr
    assert run_cli("--config", str(config), "upgrade", "--code", str(trainer), "--from",
                   "2.5.0", "--fail-on", "check").code == 1


def test_the_torch_xla_pin_follows_the_repo(run_cli, fake_github, write_config, trainer):
    (trainer / "requirements.txt").write_text("torch==2.5.0\ntorch_xla[tpu]==2.6.0\n")
    for number, tag in enumerate(("v2.6.0", "v2.7.0", "v2.8.0")):
        fake_github.add_release("pytorch/xla", tag=tag, body="## Bug fixes\n- x (#1)\n",
                                release_id=300 + number)
    config = write_config(repos=("pytorch/xla",))
    result = run_cli("--config", str(config), "upgrade", "--repo", "pytorch/xla", "--code",
                     str(trainer), "--format", "json")
    assert result.code == 0, result.stderr
    plan = json.loads(result.stdout)["upgrade"]
    assert (plan["package"], plan["from"], plan["releases"]) == (
        "torch_xla", "2.6.0", ["v2.7.0", "v2.8.0"])


def test_github_unreachable_is_one_line_and_exit_one(run_cli, tmp_path, trainer):
    config = tmp_path / "rw.toml"
    config.write_text('[github]\napi_url = "http://127.0.0.1:9"\nretries = 0\n'
                      '[store]\npath = "store"\n')
    result = run_cli("--config", str(config), "upgrade", "--code", str(trainer))
    assert result.code == 1
    assert len(result.stderr.strip().splitlines()) == 1 and "unreachable" in result.stderr


def test_not_us_in_the_store_is_suppressed_with_suppressions_store(
        run_cli, fake_github, write_config, trainer, tmp_path):
    from watcher.impact import Suppression
    from watcher.store import Store

    publish(fake_github, RELEASES[:3])
    config = write_config(repos=("pytorch/pytorch",))
    store = Store.open(tmp_path / "store")
    store.put_suppression(Suppression(api="torch.load", codebase="trainer", path="train.py",
                                      code="return torch.load(path)", by="U1"))
    store.close()
    # torch.load's flipped default is check (the words alone): the gate fails on check.
    plain = run_cli("--config", str(config), "upgrade", "--code", str(trainer), "--format",
                    "json", "--fail-on", "check")
    kept = run_cli("--config", str(config), "upgrade", "--code", str(trainer), "--format",
                   "json", "--suppressions", "store", "--fail-on", "check")
    assert plain.code == 1 and kept.code == 0, kept.stdout
    assert json.loads(plain.stdout)["summary"]["suppressed"]["store"] == 0
    assert json.loads(kept.stdout)["summary"]["suppressed"] == {
        "total": 1, "inline": 0, "baseline": 0, "store": 1}
