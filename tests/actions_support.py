"""What the tests of the buttons share: a daemon (its jobs run by the test) with ``[impact]``
on a codebase of 48 uses of ``torch.load``, a bot-token Slack notifier on ``#team-dist``, and
clicks built from the buttons of the message it posted, as Slack sends them."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from conftest import SLACK_TOKEN, Clock
from subscribe_support import running_daemon

from watcher.daemon.loop import Daemon

CHANNEL = "#team-dist"
MEMBER, STRANGER = "U111", "U999"
USES = 48  # calls that rely on torch.load's default, 8 in each of 6 files
NOTES = textwrap.dedent("""\
    # Backwards Incompatible Changes
    ### Flip default torch.load to weights_only (#137602)
    `torch.load` now uses `weights_only=True` by default.
    # Deprecations
    ## Quantization
    - `torch.ao.quantization` is deprecated and will be removed in 2.10 (#153892)
    # Bug fixes
    ## Distributed
    - Fix a hang in `all_gather_object` with NCCL (#203)
    """)


def codebase(root: Path) -> Path:
    for number in range(6):
        calls = "".join(f"def load_{i}(path):\n    return torch.load(path)\n\n" for i in range(8))
        (root / f"loader_{number}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / f"loader_{number}.py").write_text("import torch\n\n" + calls)
    (root / "quant.py").write_text("from torch.ao.quantization import quantize_dynamic\n\n"
                                   "def shrink(m):\n    return quantize_dynamic(m)\n")
    return root


def prepared(fake_github: Any, fake_slack: Any, root: Path) -> Path:
    """The bot in ``#team-dist`` with one member, a first release (the baseline), and the
    codebase; its path."""
    fake_slack.add_token(SLACK_TOKEN, channels=[CHANNEL])
    fake_slack.add_member(CHANNEL, MEMBER)
    fake_github.add_release("pytorch/pytorch", tag="v2.5.0", body="## CUDA\n- Fix (#1)\n")
    return codebase(root)


def announced(running: Daemon, fake_github: Any) -> int:
    """The baseline polled, then NOTES released and posted; the release's id."""
    running._poll_job()
    release = fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body=NOTES)
    running._poll_job()
    return int(release["id"])


def daemon(write_config: Callable[..., Path], fake_slack: Any, clock: Clock, code: Path,
           secrets: dict[str, str], listen: bool = False) -> ContextManager[Daemon]:
    """``release-watch run`` in this process, started paused, posting to ``#team-dist``."""
    server = '[server]\nlisten = "127.0.0.1:0"\n' if listen else ""
    return running_daemon(
        write_config, fake_slack.api_url, clock, secrets,
        extra=f'{server}[impact]\ncode = ["{code}"]\n',
        notifiers=f'[[notifiers]]\nname = "team"\ntype = "slack"\nchannel = "{CHANNEL}"\n')


def first_message(fake_slack: Any) -> Any:
    """The release's first message in the channel, as it is now."""
    return next(m for m in fake_slack.channel_messages(CHANNEL) if m.thread_ts is None)


def elements(message: Any, action_id: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(block, element) of each button or menu with that action_id, in order."""
    return [(block, element) for block in message.blocks or () if block["type"] == "actions"
            for element in block["elements"] if element["action_id"] == action_id]


def click(fake_slack: Any, message: Any, action_id: str, *, user: str = MEMBER,
          which: int = 0, option: str | None = None) -> dict[str, Any]:
    """The ``block_actions`` payload Slack sends for a click on that button (or on that
    menu's ``option``) of ``message`` by ``user``."""
    block, element = elements(message, action_id)[which]
    action: dict[str, Any] = {"action_id": action_id, "block_id": block["block_id"],
                              "type": element["type"], "action_ts": "1700000000.1"}
    if option is None:
        action["value"] = element["value"]
    else:
        chosen = next(o for o in element["options"] if o["value"] == option)
        action["selected_option"] = chosen
    channel = fake_slack.channel_id(CHANNEL)
    return {"type": "block_actions", "user": {"id": user, "username": "someone",
                                              "team_id": "T000"},
            "api_app_id": "A000", "token": "deprecated", "trigger_id": "1.2.3",
            "team": {"id": "T000", "domain": "acme"},
            "container": {"type": "message", "message_ts": message.ts, "channel_id": channel,
                          "is_ephemeral": False},
            "channel": {"id": channel, "name": CHANNEL[1:]},
            "message": {"type": "message", "ts": message.ts, "blocks": message.blocks},
            "response_url": fake_slack.response_url, "actions": [action]}


def form(payload: dict[str, Any]) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()
