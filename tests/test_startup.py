"""The console script's start-up runs with the cyclic collector paused (``watcher.cli.entry``,
``watcher.cli.startup``): from before the first import to the command's configuration read, then
frozen out of later collections; a poll settles once its runtime is built. In process (the
tests, ``main``) the collector is never touched."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from watcher.cli import main, startup

pytestmark = pytest.mark.timeout(60)

ROOT = Path(__file__).parent.parent
NOTES = ROOT / "tests" / "fixtures" / "releases" / "pytorch" / "v2.9.0.md"

# The console script as installed, with ``settle`` watched: whether the collector was off
# when it was called and on after it, and what was frozen, printed at exit.
WATCHED = """
import atexit, gc, sys
from watcher.cli import startup
seen = []
settle = startup.settle
def watched():
    seen.append(gc.isenabled())
    settle()
    seen.append(gc.isenabled())
startup.settle = watched
atexit.register(lambda: print("settled", seen, gc.get_freeze_count() > 1000, "collecting",
                              gc.isenabled(), file=sys.stderr))
from watcher.cli import console_script
sys.argv = ["release-watch", *sys.argv[1:]]
console_script()
"""


def console(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WATCHED, *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=50,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "PYTHONPATH": str(ROOT)})


def test_an_offline_command_starts_paused_and_settles_once_its_config_is_read(tmp_path):
    done = console(tmp_path, "classify", str(NOTES), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert '"items"' in done.stdout
    # Paused from the entry on, settled once (the config), then collecting as usual with the
    # start-up frozen out of its scans.
    assert "settled [False, True] True collecting True" in done.stderr


def test_a_command_that_reads_no_config_runs_paused_to_its_end(tmp_path):
    done = console(tmp_path, "--help")
    assert done.returncode == 0 and "poll" in done.stdout
    assert "settled [] False collecting False" in done.stderr


def test_in_process_the_collector_is_left_as_it_is(capsys):
    assert gc.isenabled()
    assert main(["classify", str(NOTES)]) == 0
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    startup.settle()  # nothing paused: nothing to settle, nothing frozen
    assert gc.isenabled() and gc.get_freeze_count() == frozen
