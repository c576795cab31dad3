"""The README's two examples, made by running the tool, never typed: the Slack message a team's
channel gets for PyTorch 2.9.0 (its real notes, ``tests/fixtures/releases``) with ``[impact]``
on the pytorch/examples codebase (``tests/fixtures/codebases/examples``, a copy of
``shared/data/codebases/examples``), drawn as the text Slack shows; and ``release-watch
impact``'s answer for the same release and code.

The poll runs the real command line against the loopback fakes of GitHub and Slack
(``tests/fakes``) with a fixed clock, the message is the bot's first ``chat.postMessage``.

    python scripts/readme_examples.py           # print both
    python scripts/readme_examples.py --write   # put them into README.md (and the impact
                                                # answer into docs/impact.md) between markers

``tests/test_docs.py`` checks that the pages hold exactly what this makes.
"""

from __future__ import annotations

import io
import re
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# Where each example goes: the README both, the impact page the answer.
PAGES = {README: ("slack", "impact"), ROOT / "docs" / "impact.md": ("impact",)}
NOTES = Path("tests/fixtures/releases/pytorch/v2.9.0.md")
CODE = Path("tests/fixtures/codebases/examples")
LINK = "https://github.com/pytorch/examples/blob/main/{path}#L{line}"
BOT_TOKEN = "xoxb-readme-example"
MARKERS = {"slack": ("<!-- example:slack (scripts/readme_examples.py) -->",
                     "<!-- /example:slack -->"),
           "impact": ("<!-- example:impact (scripts/readme_examples.py) -->",
                      "<!-- /example:impact -->")}
_LINK = re.compile(r"<([^<>|]+)\|([^<>]+)>")
# Slack's *bold* and _italic_: opened after a space (or the line's start) and closed before one
# (or punctuation), so ``**kwargs`` and ``pin_memory_device`` inside them stay as they are.
_EMPHASIS = re.compile(r"(?:^|(?<=\s))([*_])(\S(?:.*?\S)?)\1(?=$|[\s.,;:!?)])", re.MULTILINE)


def as_text(mrkdwn: str) -> str:
    """Slack's markup as a reader sees it: a link by its label, bold and italics plain."""
    return _EMPHASIS.sub(r"\2", _LINK.sub(r"\2", mrkdwn)).replace("\u2003", "    ")


def drawn(blocks: list[dict[str, Any]]) -> str:
    """A Block Kit message as text: headers and sections as they read, buttons in brackets."""
    lines: list[str] = []
    for block in blocks:
        kind = block["type"]
        if kind == "header":
            lines += [block["text"]["text"].upper(), ""]
        elif kind == "section":
            lines += as_text(block["text"]["text"]).splitlines()
        elif kind == "context":
            lines.append(" · ".join(as_text(element["text"]) for element in block["elements"]))
        elif kind == "actions":
            lines.append("    " + " ".join(_control(element) for element in block["elements"]))
    return "\n".join(lines)


def _control(element: dict[str, Any]) -> str:
    """A button as ``[its label]``, a menu as ``[its placeholder ▾]``."""
    if "text" in element:
        return f"[{element['text']['text']}]"
    return f"[{element.get('placeholder', {}).get('text', element['type'])} ▾]"


def slack_message() -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from fakes.clock import Clock
    from fakes.github import FakeGitHub
    from fakes.slack import FakeSlack

    from watcher.app import Dependencies
    from watcher.cli import main
    from watcher.config import Secrets

    clock = Clock()
    with FakeGitHub() as github, FakeSlack() as slack, tempfile.TemporaryDirectory() as tmp:
        slack.add_token(BOT_TOKEN, channels=["#ml-platform"])
        config = Path(tmp) / "release-watch.toml"
        config.write_text(
            f'[github]\napi_url = "{github.url}"\n[store]\npath = "store"\n'
            '[poll]\nfirst_run_announce = 0\n[[repos]]\nname = "pytorch/pytorch"\n'
            '[[notifiers]]\nname = "ml-platform"\ntype = "slack"\nchannel = "#ml-platform"\n'
            f'affects_only = true\n[impact]\ncode = ["{ROOT / CODE}"]\nlink = "{LINK}"\n'
            f'[slack]\napi_url = "{slack.api_url}"\n')
        deps = Dependencies(stdout=io.StringIO(), sleep=clock.sleep, clock=clock,
                            epoch=clock.epoch, environ={},
                            secrets=Secrets.model_validate({"GITHUB_TOKEN": "ghp_readme",
                                                            "SLACK_BOT_TOKEN": BOT_TOKEN}))
        github.add_repo("pytorch/pytorch")
        if main(["--config", str(config), "poll"], deps) != 0:
            raise RuntimeError("the baseline poll failed")
        github.add_release("pytorch/pytorch", tag="v2.9.0", name="PyTorch 2.9.0 Release",
                           body=(ROOT / NOTES).read_bytes().decode("utf-8"))
        clock.now += timedelta(hours=1)
        if main(["--config", str(config), "poll"], deps) != 0:
            raise RuntimeError("the poll failed")
        posts = [r for r in slack.requests if r.path.endswith("chat.postMessage")]
        return drawn(posts[0].params["blocks"])


def impact_answer() -> tuple[str, str]:
    """(the command line, what it prints), run from the repository's root."""
    import os

    from watcher.app import Dependencies
    from watcher.cli import main

    argv = ["impact", str(NOTES), "--code", str(CODE)]
    out = io.StringIO()
    here = Path.cwd()
    os.chdir(ROOT)
    try:
        main(argv, Dependencies(stdout=out, environ={}))
    finally:
        os.chdir(here)
    return "release-watch " + " ".join(argv), out.getvalue().rstrip("\n")


def examples() -> dict[str, str]:
    command, answer = impact_answer()
    return {"slack": f"```\n{slack_message()}\n```",
            "impact": f"```\n$ {command}\n{answer}\n```"}


def filled(page: str, made: dict[str, str], names: tuple[str, ...]) -> str:
    """``page`` with each example of ``names`` put between its markers."""
    for name in names:
        begin, end = MARKERS[name]
        head, found, rest = page.partition(begin)
        if not found or end not in rest:
            raise SystemExit(f"a page has no {begin} ... {end}")
        page = head + begin + "\n" + made[name] + "\n" + end + rest.split(end, 1)[1]
    return page


if __name__ == "__main__":
    made = examples()
    if "--write" in sys.argv[1:]:
        for path, names in PAGES.items():
            path.write_text(filled(path.read_text(), made, names))
    else:
        print("\n\n".join(made.values()))
