"""A third-party notifier package (tests/plugins/release-watch-echo), installed apart from the
source tree as a user would install it, is found through the entry-point group, validated by
`config check`, receives events from `poll`, and reads its secret from the environment; the
secret shows nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TOKEN, release_notes

PLUGIN = Path(__file__).parent / "plugins" / "release-watch-echo"
SECRET = "echo-s3cret-token-value"
ECHO = '[[notifiers]]\nname = "mine"\ntype = "echo"\npath = "echo.jsonl"\n'


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pip-installed into its own folder, offline: no index, the hatchling already here."""
    target = tmp_path_factory.mktemp("plugin-site")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                           "--no-index", "--no-build-isolation", "--target", str(target),
                           str(PLUGIN)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert list(target.glob("release_watch_echo-1.0.0.dist-info"))
    return target


def release_watch(site: Path, config: Path, *args: str,
                  **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("RELEASE_WATCH", "SLACK_", "ECHO_", "GITHUB_TOKEN"))}
    environ.update(PYTHONPATH=str(site), GITHUB_TOKEN=TOKEN, **env)
    return subprocess.run([sys.executable, "-m", "watcher", "--config", str(config), *args],
                          cwd=config.parent, env=environ, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_config_check_knows_the_plugin_and_masks_its_secret(plugin_site, write_config):
    config = write_config(notifiers=ECHO)
    result = release_watch(plugin_site, config, "config", "check", ECHO_TOKEN=SECRET)
    assert result.returncode == 0, result.stderr
    assert '"type": "echo"' in result.stdout and '"token": "**********"' in result.stdout
    assert '"ECHO_TOKEN": "*** (set)"' in result.stdout
    assert "#   echo: " in result.stdout and "path (file to append to" in result.stdout
    assert SECRET not in result.stdout + result.stderr


def test_a_missing_plugin_secret_is_a_config_problem(plugin_site, write_config):
    config = write_config(notifiers=ECHO)
    result = release_watch(plugin_site, config, "config", "check")
    assert result.returncode == 2
    assert result.stderr == (f"release-watch: {config}: notifier 'mine': token is not set: "
                             "set the environment variable ECHO_TOKEN\n")


def test_the_plugin_receives_an_event_and_reads_its_secret(plugin_site, write_config,
                                                           fake_github):
    fake_github.add_release("pytorch/xla", tag="v2.0", body=release_notes("xla/v2.0.0.md"))
    other = ECHO.replace('"mine"', '"theirs"').replace("echo.jsonl", "theirs.jsonl")
    config = write_config(repos=("pytorch/xla",),
                          notifiers=ECHO + other + 'token = { env = "THEIR_TOKEN" }\n')
    result = release_watch(plugin_site, config, "poll", "--verbose", ECHO_TOKEN=SECRET,
                           THEIR_TOKEN="their-0ther-secret")
    assert result.returncode == 0, result.stderr
    (mine,) = [json.loads(line) for line in (config.parent / "echo.jsonl").open()]
    assert mine == {"event": "published", "repo": "pytorch/xla", "tag": "v2.0", "token": SECRET}
    (theirs,) = [json.loads(line) for line in (config.parent / "theirs.jsonl").open()]
    assert theirs["token"] == "their-0ther-secret"
    assert "with token ***" in result.stderr  # the plugin logged it; release-watch masked it
    assert SECRET not in result.stderr and "their-0ther-secret" not in result.stderr
