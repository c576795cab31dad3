"""End to end: `release-watch poll` against the loopback fake GitHub, as the issue's
"done means" states it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import release_notes
from fakes.github import Scripted

XLA_NOTES = release_notes("xla/v2.0.0.md")
V27 = release_notes("pytorch/v2.7.0.md")


def events(config: Path) -> list[dict]:
    path = config.parent / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def seed(fake_github) -> dict:
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body="- Fix a crash (#1)")
    newest = fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0",
                                     body=V27)
    fake_github.add_release("pytorch/xla", tag="v2.0", body=XLA_NOTES)
    return newest


def test_first_poll_records_a_baseline_and_announces_only_the_newest(fake_github, write_config,
                                                                     run_cli):
    seed(fake_github)
    config = write_config()
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    announced = [(e["repo"], e["tag"], e["event"]) for e in events(config)]
    assert announced == [("pytorch/pytorch", "v2.7.0", "published"),
                         ("pytorch/xla", "v2.0", "published")]
    status = run_cli("--config", str(config), "status", "--json")
    known = {r["repo"]: r["releases_known"] for r in json.loads(status.stdout)["repos"]}
    assert known == {"pytorch/pytorch": 2, "pytorch/xla": 1}


def test_first_run_can_announce_nothing(fake_github, write_config, run_cli):
    seed(fake_github)
    config = write_config("[poll]\nfirst_run_announce = 0\n")
    assert run_cli("--config", str(config), "poll").code == 0
    assert events(config) == []


CONSOLE = '[[notifiers]]\nname = "screen"\ntype = "console"\n'


def test_a_first_poll_says_its_baseline_in_one_line_per_repo(fake_github, write_config,
                                                             run_cli):
    seed(fake_github)
    config = write_config("[poll]\nfirst_run_announce = 0\n", notifiers=CONSOLE)
    dry = run_cli("--config", str(config), "poll", "--dry-run")
    assert dry.stdout.splitlines()[:2] == [
        "baseline: 2 releases would be recorded for pytorch/pytorch",
        "baseline: 1 release would be recorded for pytorch/xla"]
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() == ["baseline: 2 releases recorded for pytorch/pytorch",
                                          "baseline: 1 release recorded for pytorch/xla"]
    fake_github.add_release("pytorch/xla", tag="v2.1", body="- Add X (#1)\n")
    later = run_cli("--config", str(config), "poll")
    assert later.stdout.startswith("PyTorch/XLA v2.1 released\n") and "baseline" not in later.stdout


def test_poll_short_prints_a_summary_for_a_terminal(fake_github, write_config, run_cli):
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0", body=V27)
    config = write_config(repos=("pytorch/pytorch",), notifiers=CONSOLE)
    result = run_cli("--config", str(config), "poll", "--short")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "PyTorch 2.7.0 released" and lines[1].startswith("  609 changes: ")
    assert "  BC-breaking (11):" in lines and "  Deprecations (2):" in lines
    assert "  596 more changes: https://github.com/pytorch/pytorch/releases/tag/v2.7.0" in lines
    assert "Bug fixes" not in result.stdout and lines[-1] == (
        "baseline: 1 release recorded for pytorch/pytorch")
    assert len(lines) < 25  # against 700 and more lines in full


def test_unchanged_second_poll_is_one_conditional_request_per_repo(fake_github, write_config,
                                                                   run_cli):
    seed(fake_github)
    config = write_config()
    run_cli("--config", str(config), "poll")
    fake_github.reset_requests()
    quota = fake_github.rate_remaining
    assert run_cli("--config", str(config), "poll").code == 0
    assert sorted((r.path, r.status) for r in fake_github.requests) == [
        ("/repos/pytorch/pytorch/releases", 304), ("/repos/pytorch/xla/releases", 304)]
    assert all(r.headers.get("if-none-match") for r in fake_github.requests)
    assert fake_github.rate_remaining == quota
    assert len(events(config)) == 2  # nothing new


def test_new_release_is_one_published_event(fake_github, write_config, run_cli):
    seed(fake_github)
    config = write_config()
    run_cli("--config", str(config), "poll")
    fake_github.add_release("pytorch/pytorch", tag="v2.8.0", name="PyTorch 2.8.0",
                            body=release_notes("pytorch/v2.8.0.md"))
    assert run_cli("--config", str(config), "poll").code == 0
    new = events(config)[2:]
    assert [(e["event"], e["tag"]) for e in new] == [("published", "v2.8.0")]
    assert new[0]["summary"]["items"] == len(new[0]["items"]) > 300
    assert {item["change"] for item in new[0]["items"]} == {"added"}


@pytest.mark.slow
def test_editing_one_bullet_of_a_real_body_is_one_edited_event_with_that_change(
        fake_github, write_config, run_cli):
    release = seed(fake_github)
    config = write_config()
    run_cli("--config", str(config), "poll")
    old = "- Added Windows Arm64 Nightly Builds (#139760)"
    new = "- Added Windows Arm64 Nightly Builds and wheels (#139760)"
    assert old in V27
    # GitHub hands bodies back with CRLF; that churn alone must not count as an edit.
    fake_github.edit_release("pytorch/pytorch", release["id"],
                             body=V27.replace(old, new).replace("\n", "\r\n"))
    assert run_cli("--config", str(config), "poll").code == 0
    edited = events(config)[2:]
    assert len(edited) == 1 and edited[0]["event"] == "edited"
    assert edited[0]["items"] == [{
        "subsystem": "build", "kind": "new_feature", "text": new[2:],
        "section": ["New features", "Release Engineering"], "prs": [139760],
        "change": "changed", "old_text": old[2:], "decided_by": "heading", "confidence": 1.0,
        "origin": "notes"}]


def test_whitespace_and_line_ending_churn_is_not_an_edit(fake_github, write_config, run_cli):
    release = seed(fake_github)
    config = write_config()
    run_cli("--config", str(config), "poll")
    churned = "\r\n".join(line + "  " for line in V27.split("\n")) + "\r\n\r\n"
    fake_github.edit_release("pytorch/pytorch", release["id"], body=churned)
    assert run_cli("--config", str(config), "poll").code == 0
    assert len(events(config)) == 2


def test_server_error_then_success_recovers_within_the_poll(fake_github, write_config, run_cli,
                                                            clock):
    seed(fake_github)
    config = write_config()
    fake_github.script("/repos/pytorch/xla/releases", Scripted.server_error(),
                       Scripted.server_error(502))
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    assert [e["repo"] for e in events(config)] == ["pytorch/pytorch", "pytorch/xla"]
    assert len(clock.slept) == 2  # two backoffs, not real sleeps


def test_rate_limit_on_one_repo_does_not_stop_the_other(fake_github, write_config, run_cli):
    seed(fake_github)
    config = write_config()
    # A secondary rate limit: quota is left, but GitHub asks this caller to back off for an hour.
    secondary = Scripted(403, {"retry-after": "3600", "content-type": "application/json"},
                         '{"message": "You have exceeded a secondary rate limit."}')
    fake_github.script("/repos/pytorch/pytorch/releases", secondary)
    result = run_cli("--config", str(config), "poll")
    assert result.code == 1
    assert "pytorch/pytorch" in result.stderr and "rate limit" in result.stderr
    assert result.stderr.count("\n") == 1  # one clear line
    assert [e["repo"] for e in events(config)] == ["pytorch/xla"]
    status = json.loads(run_cli("--config", str(config), "status", "--json").stdout)
    failing = {r["repo"]: r["consecutive_failures"] for r in status["repos"]}
    assert failing == {"pytorch/pytorch": 1, "pytorch/xla": 0}
    # the next poll catches up on the skipped repo as a first run
    assert run_cli("--config", str(config), "poll").code == 0
    assert [e["repo"] for e in events(config)] == ["pytorch/xla", "pytorch/pytorch"]


def test_twice_with_jsonl_gives_contract_lines_then_none(fake_github, write_config, run_cli):
    seed(fake_github)
    config = write_config()
    assert run_cli("--config", str(config), "poll").code == 0
    first = (config.parent / "events.jsonl").read_text()
    assert run_cli("--config", str(config), "poll").code == 0
    assert (config.parent / "events.jsonl").read_text() == first
    for line in first.splitlines():
        event = json.loads(line)
        assert set(event) == {"id", "event", "repo", "release_id", "tag", "name", "url",
                              "prerelease", "published_at", "detected_at", "summary", "items"}
        assert event["id"].startswith(f"{event['repo']}:{event['release_id']}:published:")
        assert len(event["id"].rsplit(":", 1)[1]) == 64
        assert set(event["summary"]) == {"items", "by_subsystem", "by_kind"}
        assert event["published_at"].endswith("Z") and event["detected_at"].endswith("Z")
        for item in event["items"]:
            # Beyond the contract, only where they apply: the group, a guess's candidates.
            assert set(item) - {"group", "candidates"} == {
                "subsystem", "kind", "text", "section", "prs", "change", "decided_by",
                "confidence", "origin"}
            assert item["origin"] == "notes"  # "package" only with [impact] configured
            assert "candidates" not in item or (item["decided_by"] == "model" and all(
                isinstance(name, str) and 0 <= p <= 1 for name, p in item["candidates"]))
            assert item["decided_by"] in {"heading", "label", "rule", "model"}
            assert 0 <= item["confidence"] <= 1


def test_deleted_release_is_confirmed_by_a_direct_look_up(fake_github, write_config, run_cli):
    seed(fake_github)
    config = write_config()
    run_cli("--config", str(config), "poll")
    v26 = next(r for r in fake_github.releases("pytorch/pytorch") if r["tag_name"] == "v2.6.0")
    fake_github.delete_release("pytorch/pytorch", v26["id"])
    fake_github.reset_requests()
    assert run_cli("--config", str(config), "poll").code == 0
    assert [(e["event"], e["tag"]) for e in events(config)[2:]] == [("deleted", "v2.6.0")]
    assert fake_github.requests_to(f"/repos/pytorch/pytorch/releases/{v26['id']}")


def test_release_sliding_to_page_two_is_not_deleted(fake_github, write_config, run_cli):
    fake_github.add_release("pytorch/pytorch", tag="v0", body="- first")
    config = write_config(repos=("pytorch/pytorch",))
    run_cli("--config", str(config), "poll")
    for n in range(1, 31):  # pushes v0 off the first page of 30
        fake_github.add_release("pytorch/pytorch", tag=f"v{n}", body=f"- item {n}")
    assert run_cli("--config", str(config), "poll").code == 0
    kinds = {e["event"] for e in events(config)[1:]}
    assert kinds == {"published"} and len(events(config)) == 31


def test_prerelease_becoming_a_release(fake_github, write_config, run_cli):
    rc = fake_github.add_release("pytorch/pytorch", tag="v2.9.0-rc1", body="- Add X (#5)",
                                 prerelease=True)
    config = write_config(repos=("pytorch/pytorch",))
    run_cli("--config", str(config), "poll")
    fake_github.edit_release("pytorch/pytorch", rc["id"], prerelease=False)
    assert run_cli("--config", str(config), "poll").code == 0
    assert [(e["event"], e["prerelease"]) for e in events(config)] == [
        ("published", True), ("released", False)]


def test_a_promotion_that_renames_and_edits_is_one_released_event(fake_github, write_config,
                                                                   run_cli):
    """Becoming a full release usually renames and re-tags the release too, and may fix its
    notes: one ``released`` event says all of it, never an "edited" event first."""
    old = "- New PJRT TPU backend through the C-API (#4077)"
    new = "- New PJRT TPU backend through the PJRT C-API (#4077)"
    assert old in XLA_NOTES
    rc = fake_github.add_release("pytorch/xla", tag="v2.0.0-rc1", name="PyTorch/XLA 2.0 RC1",
                                 body=XLA_NOTES, prerelease=True)
    notifiers = ('[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'
                 '[[notifiers]]\nname = "screen"\ntype = "console"\n')
    config = write_config(repos=("pytorch/xla",), notifiers=notifiers)
    assert run_cli("--config", str(config), "poll").code == 0
    fake_github.edit_release("pytorch/xla", rc["id"], prerelease=False, tag_name="v2.0.0",
                             name="PyTorch/XLA 2.0", body=XLA_NOTES.replace(old, new))
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    published, released = events(config)
    assert released["event"] == "released" and released["tag"] == "v2.0.0"
    assert released["previous"] == {"name": "PyTorch/XLA 2.0 RC1", "tag": "v2.0.0-rc1"}
    assert [(c["change"], c["text"], c["old_text"]) for c in released["changes"]] == [
        ("changed", new[2:], old[2:])]
    # The items stay the whole release, for readers who never saw the pre-release.
    assert len(released["items"]) == len(published["items"])
    assert "previous" not in published and "changes" not in published
    assert "edited" not in result.stdout and "prose" not in result.stdout
    assert ("PyTorch/XLA 2.0 is now a full release\n"
            "  https://github.com/pytorch/xla/releases/tag/v2.0.0\n"
            "  name “PyTorch/XLA 2.0 RC1” → “PyTorch/XLA 2.0”, tag v2.0.0-rc1 → v2.0.0\n"
            "  the notes changed at promotion:\n") in result.stdout
    assert "~ New feature: " in result.stdout and "was: New PJRT TPU backend through the C-API" \
        in result.stdout


def test_a_rename_alone_says_what_it_was(fake_github, write_config, run_cli):
    release = fake_github.add_release("pytorch/xla", tag="v2.0", name="XLA 2.0 draft notes",
                                      body="- Add X (#1)\n")
    notifiers = ('[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'
                 '[[notifiers]]\nname = "screen"\ntype = "console"\n')
    config = write_config(repos=("pytorch/xla",), notifiers=notifiers)
    assert run_cli("--config", str(config), "poll").code == 0
    fake_github.edit_release("pytorch/xla", release["id"], name="XLA 2.0")
    result = run_cli("--config", str(config), "poll")
    (edited,) = events(config)[1:]
    assert edited["event"] == "edited" and edited["items"] == []
    assert edited["previous"] == {"name": "XLA 2.0 draft notes", "tag": "v2.0"}
    assert "  name “XLA 2.0 draft notes” → “XLA 2.0”\n" in result.stdout
    assert "prose" not in result.stdout


def test_drafts_are_never_published(fake_github, write_config, run_cli):
    fake_github.set_token("ghp_test_token_value_1234")
    fake_github.add_release("pytorch/pytorch", tag="v1", body="- a")
    config = write_config(repos=("pytorch/pytorch",))
    run_cli("--config", str(config), "poll")
    fake_github.add_release("pytorch/pytorch", tag="v2", body="- b", draft=True)
    assert run_cli("--config", str(config), "poll").code == 0
    assert [e["tag"] for e in events(config)] == ["v1"]


def test_dry_run_prints_and_changes_nothing(fake_github, write_config, run_cli):
    seed(fake_github)
    config = write_config()
    result = run_cli("--config", str(config), "poll", "--dry-run")
    assert result.code == 0
    assert "PyTorch 2.7.0 released" in result.stdout
    assert "would go to: log" in result.stdout
    assert not (config.parent / "store").exists()
    assert events(config) == []


def test_repo_option_polls_only_that_repo(fake_github, write_config, run_cli):
    seed(fake_github)
    config = write_config()
    assert run_cli("--config", str(config), "poll", "--repo", "pytorch/xla").code == 0
    # PR labels (on with a token) go through the one GraphQL endpoint, asked about xla's PRs.
    assert {r.path for r in fake_github.requests} - {"/graphql"} == {"/repos/pytorch/xla/releases"}


def test_a_failing_notifier_keeps_its_delivery_queued_and_others_still_run(
        fake_github, write_config, run_cli, tmp_path):
    seed(fake_github)
    (tmp_path / "blocked").write_text("a file where a directory should be")
    notifiers = ('[[notifiers]]\nname = "broken"\ntype = "jsonl"\npath = "blocked/x.jsonl"\n'
                 '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n')
    config = write_config(notifiers=notifiers)
    result = run_cli("--config", str(config), "poll")
    assert result.code == 1 and "cannot append" in result.stderr
    assert len(events(config)) == 2
    status = json.loads(run_cli("--config", str(config), "status", "--json").stdout)
    assert status["pending_by_notifier"] == {"broken": 2}
    (tmp_path / "blocked").unlink()
    assert run_cli("--config", str(config), "poll").code == 0
    assert len((tmp_path / "blocked" / "x.jsonl").read_text().splitlines()) == 2
    assert len(events(config)) == 2  # the healthy notifier got nothing twice


@pytest.mark.slow
def test_huge_body_is_recorded_and_parsed_up_to_the_limit(fake_github, write_config, run_cli):
    body = "".join(f"- Fix item number {n} in torch.nn (#{n})\n" for n in range(1, 130_000))
    assert len(body) > 5_000_000
    fake_github.add_release("pytorch/pytorch", tag="v9", body=body)
    config = write_config(repos=("pytorch/pytorch",))
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0
    assert "over poll.max_body_chars" in result.stderr
    (event,) = events(config)
    # Parsed up to poll.max_body_chars, then capped at poll.max_items_per_release (2,000):
    # the rest is one item that says how many more there are and where to read them.
    assert event["summary"]["items"] == 2_001
    assert "more items not shown" in event["items"][-1]["text"]


def test_a_bug_tripped_by_one_repo_does_not_stop_the_others(fake_github, write_config, run_cli,
                                                            monkeypatch):
    seed(fake_github)
    config = write_config()
    import watcher.plan

    real = watcher.plan.plan_repo

    def explode_on_pytorch(repo, *args, **kwargs):
        if repo == "pytorch/pytorch":
            raise ValueError("parser bug")
        return real(repo, *args, **kwargs)

    monkeypatch.setattr("watcher.plan.plan_repo", explode_on_pytorch)  # the poller imports it late
    result = run_cli("--config", str(config), "poll")
    assert result.code == 1 and "unexpected ValueError: parser bug" in result.stderr
    assert [e["repo"] for e in events(config)] == ["pytorch/xla"]


def test_a_lone_surrogate_escape_in_a_body_is_replaced_not_fatal(fake_github, write_config,
                                                                 run_cli):
    """JSON may escape half a UTF-16 pair ("\\udc80"); it used to fail the repo on every poll
    as "invalid JSON". It becomes U+FFFD; a whole pair (an emoji) stays what it is."""
    fake_github.add_repo("pytorch/xla")
    fake_github.add_release("pytorch/pytorch", tag="v2.8.0",
                            body="- Fix \udc80 decoding (#7)\n- Keep \U0001F600 as it is (#8)\n")
    config = write_config()
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    [event] = events(config)
    assert [item["text"] for item in event["items"]] == ["Fix \ufffd decoding (#7)",
                                                         "Keep \U0001F600 as it is (#8)"]
    assert run_cli("--config", str(config), "poll").code == 0  # and the next poll is a 304


def test_a_body_that_is_not_json_even_leniently_is_still_retried_and_reported(
        fake_github, write_config, run_cli):
    fake_github.add_repo("pytorch/xla")
    fake_github.script("/repos/pytorch/pytorch/releases", *[Scripted.broken_json()] * 4)
    result = run_cli("--config", str(config := write_config()), "poll")
    assert result.code == 1 and "invalid JSON" in result.stderr
    assert events(config) == []
