"""The impact analysis in the bot: with ``[impact] code`` configured, every event carries each
item's ``apis`` and ``affects``; Slack, the console and digests open with "Affects your code";
``affects_only`` sends only what touches the code; the code index is kept in the store.

Against the loopback fake GitHub and fake Slack, with a small codebase written by each test, so
the expected uses are known line by line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import SLACK_TOKEN

from watcher.store import Store

ENV = {"SLACK_BOT_TOKEN": SLACK_TOKEN}

# A release in the shape PyTorch writes them: a BC-breaking entry with prose and a migration
# example, a deprecation bullet, a bug fix that names torch.load (not a change to callers), and
# a new feature elsewhere.
NOTES = textwrap.dedent("""\
    # PyTorch 2.6.0 Release Notes
    # Backwards Incompatible Changes
    ### Remove the `cuda` argument of `torch.utils.cpp_extension.include_paths` (#137602, #138225)
    `include_paths` takes the device instead: code passing `cuda=True` passes
    `device_type="cuda"`:
    ```python
    # Version 2.5
    paths = include_paths(cuda=True)
    # Version 2.6
    paths = include_paths(device_type="cuda")
    ```
    # Deprecations
    ## Quantization
    - `torch.ao.quantization` is deprecated and will be removed in 2.10 (#153892)
    # New Features
    ## Distributed
    - Add a new `ProcessGroup` option for NCCL (#140001)
    # Bug fixes
    ## Python Frontend
    - Fixed `torch.load` of an empty file raising the wrong error (#140002)
    """)

CKPT = textwrap.dedent("""\
    import torch
    from torch.ao.quantization import quantize_dynamic
    from torch.utils.cpp_extension import include_paths

    def headers():
        return include_paths(cuda=True)


    def device_headers():
        return include_paths(device_type="cuda")


    def shrink(model):
        return quantize_dynamic(model)
    """)


def codebase(root: Path) -> Path:
    (root / "trainer").mkdir(parents=True)
    (root / "trainer" / "ckpt.py").write_text(CKPT)
    (root / "trainer" / "broken.py").write_text("def oops(:\n")
    return root / "trainer"


def slack(name: str, channel: str, extra: str = "") -> str:
    return (f'[[notifiers]]\nname = "{name}"\ntype = "slack"\nchannel = "{channel}"\n'
            f'min_interval = "1s"\n{extra}\n')


REMOVAL = ("Remove the `cuda` argument of `torch.utils.cpp_extension.include_paths` (#137602, "
           "#138225)")
INCLUDE_PATHS = "torch.utils.cpp_extension.include_paths"
WHY = ("passes cuda=, removed in v2.6.0 (the 2.6.0 package: torch.utils.cpp_extension."
       "include_paths takes no cuda)")
# What "Affects your code" counts for NOTES in CKPT: the removed argument's call breaks, the
# deprecated namespace's call is to check, its import is a mention.
AFFECTS = "Affects your code (2 items, 2 uses in 1 file: 1 break, 1 to check; 1 mention)"
JSONL = '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'
IMPACT = ('[impact]\ncode = ["trainer"]\n'
          'link = "https://github.com/acme/trainer/blob/main/{path}#L{line}"\n')


def events(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]


def by_first_line(event: dict) -> dict[str, dict]:
    return {item["text"].split("\n", 1)[0]: item for item in event["items"]}


def test_events_carry_apis_and_affects_and_slack_opens_with_them(
        fake_github, fake_slack, write_config, run_cli, tmp_path):
    codebase(tmp_path)
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", name="PyTorch 2.6.0", body=NOTES)
    config = write_config(IMPACT, repos=("pytorch/pytorch",), slack_url=fake_slack.api_url,
                          notifiers=JSONL + slack("releases", "#releases")
                          + slack("breaking", "#breaking", "affects_only = true"))
    result = run_cli("--config", str(config), "poll", env=ENV)
    assert result.code == 0, result.stderr
    # Named once, and not fatal.
    assert "in trainer, 1 does not parse and was skipped: broken.py" in result.stderr

    items = by_first_line(events(tmp_path)[0])
    removal = items[REMOVAL]
    assert removal["apis"] == [INCLUDE_PATHS]
    # The call passing device_type is not touched by the removal of cuda. The 2.6.0 package
    # (bundled) shows cuda gone: breaks, the package its evidence.
    assert removal["affects"] == [{
        "path": "ckpt.py", "line": 6, "code": "return include_paths(cuda=True)",
        "api": INCLUDE_PATHS, "root": "trainer", "codebase": "trainer", "tier": "breaks",
        "why": WHY, "source": "package", "release": "v2.6.0"}]
    quant = items["`torch.ao.quantization` is deprecated and will be removed in 2.10 (#153892)"]
    assert quant["apis"] == ["torch.ao.quantization"]
    # A deprecation: the call warns (check); the import only mentions it.
    assert [(a["line"], a["code"], a["tier"]) for a in quant["affects"]] == [
        (14, "return quantize_dynamic(model)", "check"),
        (2, "from torch.ao.quantization import quantize_dynamic", "mentions")]
    # A bug fix that names torch.load changes nothing a caller must do: no apis, no affects.
    fix = items["Fixed `torch.load` of an empty file raising the wrong error (#140002)"]
    assert "apis" not in fix and "affects" not in fix

    parent = next(m for m in fake_slack.channel_messages("releases") if m.thread_ts is None)
    opening = parent.blocks[1]["text"]["text"]
    assert opening.startswith(f"*{AFFECTS}*")
    assert ("https://github.com/acme/trainer/blob/main/ckpt.py#L6", "ckpt.py:6") in parent.links
    replies = "\n".join(m.all_text() for m in fake_slack.channel_messages("releases")
                        if m.thread_ts is not None)
    marked = [line for line in replies.splitlines() if line.endswith("_(affects your code)_")]
    assert [line[:32] for line in marked] == [
        "• Remove the `cuda` argument of ", "• `torch.ao.quantization` is dep"]

    # affects_only: the two items that touch the code, nothing else.
    breaking = "\n".join(m.all_text() for m in fake_slack.channel_messages("breaking"))
    assert "torch.ao.quantization" in breaking and "include_paths" in breaking
    assert "ProcessGroup" not in breaking and "empty file" not in breaking

    store = Store.open(tmp_path / "store")
    try:
        assert set(store.code_index("trainer")) >= {"ckpt.py"}  # the per-file index, kept
    finally:
        store.close()


def test_without_impact_configured_events_keep_the_contract_shape(
        fake_github, write_config, run_cli, tmp_path):
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", name="PyTorch 2.6.0", body=NOTES)
    config = write_config(repos=("pytorch/pytorch",), notifiers=JSONL)
    assert run_cli("--config", str(config), "poll").code == 0
    assert all("apis" not in item and "affects" not in item
               for item in events(tmp_path)[0]["items"])


def test_the_console_shows_what_affects_the_code_first(fake_github, write_config, run_cli,
                                                       tmp_path):
    codebase(tmp_path)
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", name="PyTorch 2.6.0", body=NOTES)
    config = write_config(IMPACT, repos=("pytorch/pytorch",),
                          notifiers='[[notifiers]]\nname = "console"\ntype = "console"\n')
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2:9] == [
        f"  {AFFECTS}:",
        "    Breaks (1 use in 1 file):",
        f"      - BC-breaking: {REMOVAL}",
        f"          ckpt.py:6  return include_paths(cuda=True)  — {WHY}",
        "    Check (1 use in 1 file):",
        "      - Deprecation: `torch.ao.quantization` is deprecated and will be removed in 2.10 "
        "(#153892)",
        "          ckpt.py:14  return quantize_dynamic(model)  — calls "
        "torch.ao.quantization.quantize_dynamic, deprecated in v2.6.0"]
    assert lines[9] == ("    1 mention in 1 file (imports, annotations, isinstance, marking "
                        "decorators), not listed")
    assert lines.index(lines[2]) < next(i for i, line in enumerate(lines) if "changes" in line)


@pytest.mark.slow
def test_a_digest_opens_each_repo_with_what_affects_the_code(fake_github, write_config, run_cli,
                                                            tmp_path):
    codebase(tmp_path)
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", name="PyTorch 2.6.0", body=NOTES)
    config = write_config(IMPACT, repos=("pytorch/pytorch",), notifiers=(
        '[[notifiers]]\nname = "weekly"\ntype = "console"\nmode = "digest"\n'
        'digest_schedule = "0 9 * * MON"\n'))
    assert run_cli("--config", str(config), "poll").code == 0
    result = run_cli("--config", str(config), "digest")
    assert result.code == 0, result.stderr
    assert f"    {AFFECTS}:" in result.stdout.splitlines()


def test_an_unchanged_codebase_is_not_read_again(fake_github, write_config, run_cli, tmp_path):
    """An edit's new item is matched against the codebase again, from the store's index:
    nothing changed in the code, so the index is left as the first poll wrote it."""
    root = codebase(tmp_path)
    release = fake_github.add_release("pytorch/pytorch", tag="v2.6.0", name="PyTorch 2.6.0",
                                      body=NOTES)
    config = write_config(IMPACT, repos=("pytorch/pytorch",), notifiers=JSONL)
    assert run_cli("--config", str(config), "poll").code == 0
    store = Store.open(tmp_path / "store")
    try:
        first = store.code_index("trainer")
    finally:
        store.close()
    fake_github.edit_release("pytorch/pytorch", release["id"],
                             body=NOTES.replace("(#153892)", "(#153892, #153893)"))
    assert run_cli("--config", str(config), "poll").code == 0
    edited = events(tmp_path)[-1]
    assert edited["event"] == "edited"
    (changed,) = edited["items"]
    assert [a["line"] for a in changed["affects"]] == [14, 2]
    store = Store.open(tmp_path / "store")
    try:
        assert store.code_index("trainer") == first
    finally:
        store.close()
    assert root.joinpath("ckpt.py").read_text() == CKPT


def test_an_edit_that_adds_a_breaking_use_redraws_the_first_message_with_it(
        fake_github, fake_slack, write_config, run_cli, tmp_path):
    """The first message is drawn again from the release as it now is (issue 28: it kept the
    old "Affects your code" count and list), in every channel, ``affects_only`` included."""
    codebase(tmp_path)
    first_notes = NOTES.replace("- `torch.ao.quantization` is deprecated and will be removed "
                                "in 2.10 (#153892)\n", "")
    assert "torch.ao.quantization" not in first_notes
    release = fake_github.add_release("pytorch/pytorch", tag="v2.6.0", name="PyTorch 2.6.0",
                                      body=first_notes)
    config = write_config(IMPACT, repos=("pytorch/pytorch",), slack_url=fake_slack.api_url,
                          notifiers=slack("releases", "#releases")
                          + slack("breaking", "#breaking", "affects_only = true"))
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0
    parents = {m.channel: m for m in fake_slack.messages if m.thread_ts is None}
    assert set(parents) == {"releases", "breaking"}
    for parent in parents.values():
        assert "*Affects your code (1 item, 1 use in 1 file: 1 break)*" in parent.all_text()

    fake_github.edit_release("pytorch/pytorch", release["id"], body=NOTES)
    assert run_cli("--config", str(config), "poll", env=ENV).code == 0
    for channel, parent in parents.items():
        # The reply says what of the edit touches the code: the new item's call, to check.
        (reply,) = [m for m in fake_slack.messages if m.thread_ts == parent.ts
                    and "*Release notes edited:*" in m.all_text()]
        assert ("*Affects your code (1 item, 1 use in 1 file: 1 to check; 1 mention)*\n"
                "*Check (1 use in 1 file)*") in reply.all_text(), channel
        updated = next(m for m in fake_slack.messages if m.ts == parent.ts)
        text = updated.all_text()
        assert updated.edits == 1, channel
        assert f"*{AFFECTS}*" in text, channel
        assert "`torch.ao.quantization` is deprecated" in text, channel
        assert ("https://github.com/acme/trainer/blob/main/ckpt.py#L14", "ckpt.py:14") in \
            updated.links, channel
        assert "edited 1\u00d7" in text, channel
