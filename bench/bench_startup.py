"""Start-up cost of the command line, as whole processes (median of interleaved runs).

Commands: ``release-watch --help``, and a no-change one-shot ``release-watch poll`` of the two
default repos (pytorch/pytorch, pytorch/xla with real notes, served by the loopback fake GitHub,
after a baseline poll; console notifier). Baselines: ``python -c pass``, ``import httpx``, and
importing the poll's own dependencies. Also checks, with ``PYTHONPROFILEIMPORTTIME``, that the
console-only poll imports neither slack_sdk nor apscheduler, ``--help`` none of the heavy
libraries, and the offline ``classify`` and ``atlas diff`` nothing of the bot (daemon, listener,
poller, scheduler, Slack, httpx).

Every process gets a private bytecode cache (``PYTHONPYCACHEPREFIX``) warmed by an untimed run,
so the project's modules and the libraries are both loaded from bytecode, as in an installed
copy (this checkout may have no ``__pycache__``: the sandbox sets PYTHONDONTWRITEBYTECODE).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from run_all import TOKEN, Row, fake_github, print_table, release_notes, seconds, timed, times
from run_all import verdict as target_verdict

if TYPE_CHECKING:
    from fakes.github import FakeGitHub

REPEAT = 7
POLL_TARGET = 2.0  # no-change poll / importing its dependencies
DEPS = "httpx, pydantic (and one model), markdown_it, click"
# ``import pydantic`` alone loads almost nothing (its attributes are lazy); a poll builds models,
# and pydantic's first model looks for plugins (an entry-point scan): one model does both.
DEPS_IMPORT = ("import httpx, markdown_it, click\nfrom pydantic import BaseModel\n"
               "class One(BaseModel):\n    x: int")
NOT_IN_CONSOLE_POLL = ("slack_sdk", "apscheduler")
NOT_IN_HELP = ("httpx", "pydantic", "pydantic_settings", "diskcache", "markdown_it")
# What an offline command (classify, atlas diff of bundled releases) never needs.
NOT_OFFLINE = ("watcher.daemon", "watcher.server", "watcher.poller", "apscheduler", "slack_sdk",
               "httpx")
NOTES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "releases" / "pytorch"


def release_watch() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m watcher``."""
    script = shutil.which("release-watch", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "watcher"]


def environment(tmp: Path) -> dict[str, str]:
    dropped = ("RELEASE_WATCH", "GITHUB_TOKEN", "GH_TOKEN", "SLACK_", "PYTHONDONTWRITEBYTECODE",
               "PYTHONPROFILEIMPORTTIME", "PYTHONPYCACHEPREFIX")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(GITHUB_TOKEN=TOKEN, XDG_STATE_HOME=str(tmp / "state"),
               PYTHONPYCACHEPREFIX=str(tmp / "pycache"))
    return env


def serve_default_repos(fake: FakeGitHub) -> None:
    fake.set_token(TOKEN)
    fake.add_release("pytorch/pytorch", tag="v2.7.0", body=release_notes("pytorch/v2.7.0.md"))
    fake.add_release("pytorch/pytorch", tag="v2.8.0", body=release_notes("pytorch/v2.8.0.md"))
    fake.add_release("pytorch/xla", tag="v2.0.0", body=release_notes("xla/v2.0.0.md"))


def execute(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-500:]}")
    return done


def median_times(commands: dict[str, list[str]], env: dict[str, str], cwd: Path
                 ) -> dict[str, float]:
    """Round-robin over the commands, so background load spreads over all of them alike."""
    for argv in commands.values():
        execute(argv, env, cwd)  # warm the bytecode cache and the page cache
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(REPEAT):
        for name, argv in commands.items():
            samples[name].append(timed(lambda argv=argv: execute(argv, env, cwd)))
    return {name: statistics.median(values) for name, values in samples.items()}


def imported(argv: list[str], env: dict[str, str], cwd: Path) -> set[str]:
    """Every module the process imported, from ``-X importtime``'s report on stderr."""
    done = execute(argv, {**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd)
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:") and line.count("|") == 2}


def found(modules: set[str], roots: tuple[str, ...]) -> list[str]:
    return [root for root in roots if any(m == root or m.startswith(f"{root}.")
                                          for m in modules)]


def run() -> list[Row]:
    fake = fake_github()
    try:
        serve_default_repos(fake)
        with tempfile.TemporaryDirectory(prefix="bench-startup-") as name:
            tmp = Path(name)
            env = environment(tmp)
            config = tmp / "release-watch.toml"
            config.write_text(f'[github]\napi_url = "{fake.url}"\n[store]\npath = "store"\n')
            poll = [*release_watch(), "--config", str(config), "poll"]
            execute(poll, env, tmp)  # the baseline poll: records both repos, announces
            quota = fake.rate_remaining
            if execute(poll, env, tmp).stdout.strip():
                raise RuntimeError("the second poll announced something: not a no-change poll")
            python = [sys.executable, "-c"]
            took = median_times({"pass": [*python, "pass"],
                                 "httpx": [*python, "import httpx"],
                                 "deps": [*python, DEPS_IMPORT],
                                 "help": [*release_watch(), "--help"],
                                 "poll": poll}, env, tmp)
            if fake.rate_remaining != quota:
                raise RuntimeError("a timed poll cost quota: it was not a no-change poll")
            in_poll = found(imported(poll, env, tmp), NOT_IN_CONSOLE_POLL)
            in_help = found(imported([*release_watch(), "--help"], env, tmp), NOT_IN_HELP)
            offline = sorted({*found(imported([*release_watch(), "classify",
                                                str(NOTES / "v2.7.0.md")], env, tmp),
                                       NOT_OFFLINE),
                              *found(imported([*release_watch(), "--config", str(config),
                                               "atlas", "diff", "2.6.0", "2.7.0"], env, tmp),
                                     NOT_OFFLINE)})
    finally:
        fake.stop()

    ratio = took["poll"] / took["deps"]
    return [
        Row("startup: python -c pass", seconds(took["pass"]), "-", "interpreter floor"),
        Row("startup: python -c 'import httpx'", seconds(took["httpx"]),
            f"{seconds(took['pass'])} python -c pass", times(took["httpx"] / took["pass"])),
        Row("startup: import the poll's dependencies", seconds(took["deps"]),
            f"{seconds(took['pass'])} python -c pass", f"{times(took['deps'] / took['pass'])};"
            f" {DEPS}"),
        Row("startup: release-watch --help", seconds(took["help"]),
            f"{seconds(took['pass'])} python -c pass", times(took["help"] / took["pass"])),
        Row("startup: release-watch poll, no change (2 repos, console)", seconds(took["poll"]),
            f"{seconds(took['deps'])} importing its dependencies",
            f"{times(ratio)}; {target_verdict(ratio < POLL_TARGET, f'< {POLL_TARGET:g}x')}"),
        Row("console-only poll imports slack_sdk / apscheduler",
            ", ".join(in_poll) or "neither", "must import neither",
            "ok" if not in_poll else "MISSED: imported"),
        Row("classify, atlas diff import the daemon / server / poller / scheduler / Slack / "
            "httpx", ", ".join(offline) or "none", "must import none",
            "ok" if not offline else "MISSED: imported"),
        Row("--help imports httpx / pydantic(_settings) / diskcache / markdown_it",
            ", ".join(in_help) or "none", "must import none",
            "ok" if not in_help else "MISSED: imported"),
    ]


if __name__ == "__main__":
    print_table(run())
