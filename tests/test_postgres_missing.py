"""A PostgreSQL store (``[store] url`` or ``RELEASE_WATCH_STORE_URL``) where psycopg, the
``[postgres]`` extra, is not installed: ``config check`` and every command that opens the store
say how to install it in one line and exit 2, never a traceback. The missing module is
simulated in a subprocess (a ``sitecustomize`` that refuses to import psycopg, as Python does
when it is absent), so psycopg stays installed for the other tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from watcher.store import Store
from watcher.store.postgres import NEEDS_PSYCOPG

# Each test runs the CLI in subprocesses: slow.
pytestmark = pytest.mark.slow

URL = "postgresql://rw@/rw?host=/nonexistent"
SAID = f"release-watch: {NEEDS_PSYCOPG}\n"

# Run by the interpreter at start-up (PYTHONPATH): psycopg cannot be found, as when it is not
# installed; ``BROKEN`` set: it is found but fails to import (psycopg without [binary], no libpq).
SITECUSTOMIZE = '''
import os, sys

class NoPsycopg:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] not in ("psycopg", "psycopg_binary"):
            return None
        if os.environ.get("BROKEN"):
            raise ImportError("no pq wrapper available.\\nAttempts made:\\n- no libpq")
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NoPsycopg())
'''


@pytest.fixture
def without_psycopg(tmp_path: Path, fake_github):
    """Runs ``release-watch`` in a process that cannot import psycopg, on a config naming the
    fake GitHub, an embedded store directory and, unless ``url`` is None, a PostgreSQL store."""
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(SITECUSTOMIZE)

    def run(*args: str, url: str | None = URL,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        config = tmp_path / "release-watch.toml"
        config.write_text(f'[github]\napi_url = "{fake_github.url}"\n[store]\npath = "store"\n'
                          + (f'url = "{url}"\n' if url else "")
                          + '[[repos]]\nname = "pytorch/pytorch"\n'
                          '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "e.jsonl"\n')
        environ = {key: value for key, value in os.environ.items()
                   if not key.startswith(("RELEASE_WATCH_", "GITHUB_", "SLACK_"))}
        return subprocess.run(
            [sys.executable, "-m", "watcher", "--config", str(config), *args],
            env={**environ, "PYTHONPATH": str(blocker), **(env or {})}, cwd=tmp_path,
            capture_output=True, text=True, timeout=60, check=False)

    return run


@pytest.mark.parametrize("command", [
    "config check", "poll", "poll --dry-run", "status", "status --check", "digest", "run",
    "store check"])
def test_every_command_opening_the_store_says_how_to_install_psycopg(without_psycopg, command):
    done = without_psycopg(*command.split())
    assert (done.returncode, done.stderr, done.stdout) == (2, SAID, "")


def test_the_url_from_the_environment_is_told_the_same(without_psycopg):
    for command in (["config", "check"], ["poll"]):
        done = without_psycopg(*command, url=None, env={"RELEASE_WATCH_STORE_URL": URL})
        assert (done.returncode, done.stderr) == (2, SAID)


def test_copying_the_embedded_store_to_postgresql_says_it_too(without_psycopg, tmp_path):
    Store.open(tmp_path / "store").close()
    done = without_psycopg("store", "copy", "--to", URL, url=None)
    assert (done.returncode, done.stderr) == (2, SAID)


def test_an_embedded_store_never_needs_psycopg(without_psycopg):
    done = without_psycopg("config", "check", url=None)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert without_psycopg("status", url=None).returncode == 0


def test_a_psycopg_that_fails_to_import_is_told_with_its_reason_on_the_same_line(
        without_psycopg):
    done = without_psycopg("poll", env={"BROKEN": "1"})
    assert done.returncode == 2
    assert done.stderr == (f"release-watch: {NEEDS_PSYCOPG} (it fails to import: no pq wrapper "
                           "available. Attempts made: - no libpq)\n")
