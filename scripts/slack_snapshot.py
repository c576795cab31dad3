"""Every message the notifiers send for the fixture releases, as JSON, to compare renderings.

A refactor of how messages are built must not change what Slack (or the console) receives, unless
the change is a fix someone names. This script runs the real CLI against the loopback fakes of
GitHub and Slack (``tests/fakes``) with a fixed clock: for each release-notes fixture it
publishes the release, edits it (one item added, one changed, one removed), promotes a
pre-release, deletes the release and sends a digest, through a bot-token channel, a
subsystem-filtered channel, an ``affects_only`` channel, a webhook, a Slack digest and the
console, with ``[impact]`` pointed at the fixture codebase. It writes one JSON file per fixture:
each Slack request's method and payload in order, and the console's output.

    python scripts/slack_snapshot.py /tmp/before     # on the old code
    python scripts/slack_snapshot.py /tmp/after      # on the new code
    diff -r /tmp/before /tmp/after                   # nothing, or the fixes you name
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakes.clock import Clock  # noqa: E402
from fakes.github import FakeGitHub  # noqa: E402
from fakes.slack import FakeSlack  # noqa: E402

from watcher.app import Dependencies  # noqa: E402
from watcher.cli import main  # noqa: E402
from watcher.config import Secrets  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
CODE = FIXTURES / "codebases" / "examples"
BOT_TOKEN = "xoxb-snapshot-token"
_PR_BULLET = re.compile(r"^- .*\(#\d+\).*$", re.MULTILINE)


def edited(body: str) -> str:
    """The body with its first PR bullet changed, its last removed and a new one added."""
    bullets = _PR_BULLET.findall(body)
    if len(bullets) < 2:
        return body + "\n- Fix a rare hang in the FSDP2 reshard path (#1)\n"
    first, last = bullets[0], bullets[-1]
    body = body.replace(first, first.replace("- ", "- Now also: ", 1), 1)
    body = body.replace(last + "\n", "", 1)
    return body.replace(first.replace("- ", "- Now also: ", 1),
                        first.replace("- ", "- Now also: ", 1)
                        + "\n- Fix a rare hang in the FSDP2 reshard path (#1)", 1)


def config_text(github: FakeGitHub, slack: FakeSlack) -> str:
    def slack_table(name: str, extra: str) -> str:
        return (f'[[notifiers]]\nname = "{name}"\ntype = "slack"\nmin_interval = "1s"\n'
                f"{extra}\n")

    return (f'[github]\napi_url = "{github.url}"\nbackoff = "1s"\n'
            f'[store]\npath = "store"\n[poll]\nfirst_run_announce = 0\n'
            f'[[repos]]\nname = "pytorch/pytorch"\n'
            f'[[notifiers]]\nname = "console"\ntype = "console"\n'
            + slack_table("releases", 'channel = "#releases"')
            + slack_table("dist", 'channel = "#dist-training"\nsubsystems = ["distributed"]')
            + slack_table("breaking", 'channel = "#breaking"\naffects_only = true')
            + slack_table("hook", f'webhook_url = "{slack.webhook_url}"')
            + slack_table("weekly", 'channel = "#xla"\nmode = "digest"\n'
                                    'digest_schedule = "0 9 * * MON"')
            + f'[impact]\ncode = ["{CODE}"]\n'
            + 'link = "https://github.com/acme/examples/blob/main/{path}#L{line}"\n'
            + f'[slack]\napi_url = "{slack.api_url}"\n')


def snapshot(notes: Path) -> dict[str, object]:
    body = notes.read_bytes().decode("utf-8")
    clock, out = Clock(), io.StringIO()
    with FakeGitHub() as github, FakeSlack() as slack, tempfile.TemporaryDirectory() as tmp:
        slack.add_token(BOT_TOKEN, channels=["#releases", "#dist-training", "#breaking", "#xla"])
        config = Path(tmp) / "release-watch.toml"
        config.write_text(config_text(github, slack))
        deps = Dependencies(stdout=out, sleep=clock.sleep, clock=clock, epoch=clock.epoch,
                            secrets=Secrets.model_validate({"GITHUB_TOKEN": "ghp_snapshot",
                                                            "SLACK_BOT_TOKEN": BOT_TOKEN}),
                            environ={})
        steps: list[tuple[str, int]] = []

        def run(label: str, *args: str) -> None:
            clock.now += timedelta(hours=1)
            code = main(["--config", str(config), *args], deps)
            steps.append((label, code))
            out.write(f"---- {label}: exit {code}\n")

        github.add_repo("pytorch/pytorch")
        run("baseline", "poll")
        release = github.add_release("pytorch/pytorch", tag="v9.0.0-rc1", name="PyTorch 9.0 RC1",
                                     body=body, prerelease=True)
        run("published", "poll")
        run("dry-run", "poll", "--dry-run")
        github.edit_release("pytorch/pytorch", release["id"], body=edited(body))
        run("edited", "poll")
        github.edit_release("pytorch/pytorch", release["id"], prerelease=False,
                            tag_name="v9.0.0", name="PyTorch 9.0")
        run("released", "poll")
        run("digest", "digest")
        github.delete_release("pytorch/pytorch", release["id"])
        run("deleted", "poll")
        requests = [{"path": r.path, "params": r.params} for r in slack.requests
                    if r.path.endswith(("chat.postMessage", "chat.update"))
                    or "/services/" in r.path]
        return {"steps": steps, "slack": requests,
                "console": out.getvalue().replace(tmp, "TMP")}


def main_script(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for notes in sorted((FIXTURES / "releases").rglob("*.md")):
        name = f"{notes.parent.name}-{notes.stem}.json"
        (target / name).write_text(json.dumps(snapshot(notes), indent=1, ensure_ascii=False))
        print(name, file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("target", type=Path, help="directory the JSON files are written to")
    main_script(parser.parse_args().target)
