"""A release announced before its wheels are on the package index: its package's API changes
are asked for again on later polls (at most hourly), and once they can be read, one ``edited``
event says what they add where they touch the code; never again after that.

Against the loopback fake GitHub (its listing unchanged: answered 304) and a loopback fake
package index whose 3.1.0 wheel appears between polls; the wheels are the small torch of
``atlas_support`` (3.0.0 as its first version, 3.1.0 as its second)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from atlas_support import V1, V2, write_wheel
from conftest import SLACK_TOKEN
from fakes.pypi import FakePackageIndex

from watcher.store import Store

TITLE = ("Finish deprecation of `LRScheduler.print_lr()` along with the `verbose` kwarg to the "
         "LRScheduler constructor. (#147301)")  # as 2.7 wrote it
NOTES = textwrap.dedent(f"""\
    # PyTorch 3.1.0 Release Notes
    # Backwards Incompatible Changes
    ### {TITLE}
    Both APIs have been deprecated since 2.2. Please use `LRScheduler.get_last_lr()` instead.
    # New Features
    ## Distributed
    - Add a new `ProcessGroup` option for NCCL (#140001)
    """)

TRAIN = textwrap.dedent("""\
    import torch
    from torch.optim.lr_scheduler import StepLR


    def schedule(optim, x):
        scheduler = StepLR(optim, 10, verbose=True)
        return scheduler, torch.old_fn(x)
    """)


def events(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]


def pending(tmp_path: Path) -> tuple[bool, bool]:
    """(the release's record, the repo's state) still waiting for the package."""
    store = Store.open(tmp_path / "store")
    try:
        record = next(iter(store.release_records("pytorch/pytorch").values()))
        state = store.repo_states(["pytorch/pytorch"])["pytorch/pytorch"]
        return record.package_pending, state.package_pending
    finally:
        store.close()


def test_the_package_read_later_adds_what_it_touches_once(fake_github, fake_slack, write_config,
                                                          run_cli, clock, tmp_path):
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "train.py").write_text(TRAIN)
    fake_github.add_release("pytorch/pytorch", tag="v3.1.0", name="PyTorch 3.1.0", body=NOTES)
    with FakePackageIndex() as index:
        index.add("torch", "3.0.0", "torch-3.0.0-py3-none-any.whl",
                  write_wheel(tmp_path, "3.0.0", V1).read_bytes())
        slack = ('[[notifiers]]\nname = "releases"\ntype = "slack"\nchannel = "#releases"\n'
                 'min_interval = "1s"\n')
        config = write_config(f'[impact]\ncode = ["trainer"]\npackage_index = "{index.url}"\n',
                              repos=("pytorch/pytorch",), slack_url=fake_slack.api_url,
                              notifiers='[[notifiers]]\nname = "log"\ntype = "jsonl"\n'
                                        'path = "events.jsonl"\n' + slack)

        def poll() -> None:
            result = run_cli("--config", str(config), "poll", env={"SLACK_BOT_TOKEN": SLACK_TOKEN})
            assert result.code == 0, result.stderr

        poll()  # announced without the package: 3.1.0 is not on the index yet
        first = events(tmp_path)
        assert [event["event"] for event in first] == ["published"]
        assert not any(item["origin"] == "package" for item in first[0]["items"])
        assert pending(tmp_path) == (True, True)

        clock.sleep(60)
        poll()  # within the hour: the index is not asked again, nothing is announced
        assert len(events(tmp_path)) == 1
        asked = len(index.requests)

        index.add("torch", "3.1.0", "torch-3.1.0-py3-none-any.whl",
                  write_wheel(tmp_path, "3.1.0", V2).read_bytes())
        clock.sleep(2 * 3600)
        poll()  # the listing is unchanged (304), the package is read now
        assert len(index.requests) > asked
        later = events(tmp_path)
        assert [event["event"] for event in later] == ["published", "edited"]
        edit = later[1]
        by_text = {item["text"].split("\n", 1)[0]: item for item in edit["items"]}
        # The notes' item, its uses found through the package (StepLR derives from
        # LRScheduler), and the package's own removal the notes do not mention.
        verbose = by_text[TITLE]
        assert verbose["change"] == "changed" and "old_text" not in verbose
        assert [(use["line"], use["tier"]) for use in verbose["affects"]] == [(6, "breaks")]
        package = [item for item in edit["items"] if item["origin"] == "package"]
        assert [use["code"] for item in package for use in item["affects"]] == [
            "return scheduler, torch.old_fn(x)"]
        assert all(item["change"] == "added" for item in package)
        assert "ProcessGroup" not in json.dumps(edit)  # nothing it did not change
        assert pending(tmp_path) == (False, False)
        # In Slack: a reply in the release's thread, and its first message redrawn so that
        # "Affects your code" counts what the package found.
        parent = next(m for m in fake_slack.channel_messages("releases") if m.thread_ts is None)
        assert parent.edits == 1 and "torch.old_fn" in parent.all_text()
        replies = [m for m in fake_slack.channel_messages("releases") if m.thread_ts]
        assert any("torch.old_fn" in m.all_text() for m in replies)

        clock.sleep(2 * 3600)
        poll()  # never twice
        assert len(events(tmp_path)) == 2
