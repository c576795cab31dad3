"""A release deleted and re-created with the same tag (a new release id on GitHub) is the same
release to a reader: an edit when its text changed, nothing when it did not; never `published`
again and `deleted`."""

from __future__ import annotations

import json
from pathlib import Path

V26_BODY = "- Fix a crash (#1)"
V27_BODY = "- Add torch.foo (#2)\n- Fix torch.bar (#3)"


def events(config: Path) -> list[dict]:
    path = config.parent / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def seeded(fake_github, write_config, run_cli) -> tuple[Path, dict, dict]:
    v26 = fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body=V26_BODY)
    v27 = fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0",
                                  body=V27_BODY)
    config = write_config(repos=("pytorch/pytorch",))
    assert run_cli("--config", str(config), "poll").code == 0
    assert [(e["event"], e["tag"]) for e in events(config)] == [("published", "v2.7.0")]
    return config, v26, v27


def known_ids(run_cli, config: Path) -> int:
    status = run_cli("--config", str(config), "status", "--json")
    return int(json.loads(status.stdout)["repos"][0]["releases_known"])


def test_recreated_with_the_same_text_is_nothing_new(fake_github, write_config, run_cli):
    config, _, v27 = seeded(fake_github, write_config, run_cli)
    fake_github.delete_release("pytorch/pytorch", v27["id"])
    again = fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0",
                                    body=V27_BODY)
    assert again["id"] != v27["id"]
    assert run_cli("--config", str(config), "poll").code == 0
    assert [(e["event"], e["tag"]) for e in events(config)] == [("published", "v2.7.0")]
    assert known_ids(run_cli, config) == 2  # the record moved to the new id, not added
    assert run_cli("--config", str(config), "poll").code == 0  # and stays quiet after
    assert len(events(config)) == 1


def test_recreated_with_new_text_is_one_edit(fake_github, write_config, run_cli):
    config, _, v27 = seeded(fake_github, write_config, run_cli)
    fake_github.delete_release("pytorch/pytorch", v27["id"])
    again = fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0",
                                    body=V27_BODY.replace("Fix torch.bar", "Fix torch.baz"))
    assert run_cli("--config", str(config), "poll").code == 0
    new = events(config)[1:]
    assert [(e["event"], e["tag"], e["release_id"]) for e in new] == [
        ("edited", "v2.7.0", again["id"])]
    # Diffed against what the deleted release said, as any edit is.
    assert [(i["change"], i["old_text"], i["text"]) for i in new[0]["items"]] == [
        ("changed", "Fix torch.bar (#3)", "Fix torch.baz (#3)")]


def test_recreated_older_release_is_not_published_again(fake_github, write_config, run_cli):
    """The older one, re-created, comes back at the top of the listing with a newer date."""
    config, v26, _ = seeded(fake_github, write_config, run_cli)
    fake_github.delete_release("pytorch/pytorch", v26["id"])
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body=V26_BODY)
    assert run_cli("--config", str(config), "poll").code == 0
    assert [(e["event"], e["tag"]) for e in events(config)] == [("published", "v2.7.0")]
    assert known_ids(run_cli, config) == 2


def test_a_deletion_without_a_new_release_is_still_announced(fake_github, write_config,
                                                             run_cli):
    config, v26, _ = seeded(fake_github, write_config, run_cli)
    fake_github.delete_release("pytorch/pytorch", v26["id"])
    fake_github.add_release("pytorch/pytorch", tag="v2.8.0", body="- New (#9)")
    assert run_cli("--config", str(config), "poll").code == 0
    assert [(e["event"], e["tag"]) for e in events(config)[1:]] == [
        ("published", "v2.8.0"), ("deleted", "v2.6.0")]
