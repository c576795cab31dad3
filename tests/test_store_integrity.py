"""Broken stores: a corrupt, read-only or emptied database, or a store path that is a file,
gives one line on stderr naming the path, what is wrong and the fix, with the documented exit
code, and nothing is quietly taken as a new baseline. `store check` and `store reinit`."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TOKEN

COMMANDS = [("poll",), ("status",), ("status", "--check"), ("digest",)]
IDS = ["poll", "status", "status-check", "digest"]


def one_line(result) -> str:
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


@pytest.fixture
def polled(fake_github, write_config, run_cli) -> Path:
    """A config whose store holds one poll of both repos."""
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body="- Fix a crash (#1)")
    fake_github.add_repo("pytorch/xla")
    config = write_config()
    assert run_cli("--config", str(config), "poll").code == 0
    return config


def database(config: Path) -> Path:
    return config.parent / "store" / "cache.db"


def scribble(path: Path, start: int, size: int | None = None) -> None:
    data = path.read_bytes()
    end = len(data) if size is None else start + size
    path.write_bytes(data[:start] + bytes((i * 37 + 11) % 256 for i in range(end - start))
                     + data[end:])


# ---- a corrupt database ---------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("where", ["header", "everything past the header"])
@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_a_corrupt_database_is_one_line_with_the_fix(polled, run_cli, command, where):
    scribble(database(polled), 0 if where == "header" else 100,
             16 if where == "header" else None)
    result = run_cli("--config", str(polled), *command)
    assert result.code == 1
    line = one_line(result)
    assert str(database(polled)) in line and "damaged" in line
    assert "store reinit" in line and "backup" in line


def test_store_check_finds_a_damaged_page_that_a_quiet_poll_never_reads(polled, run_cli):
    target = database(polled)
    with sqlite3.connect(target) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'rw_release'"
                          ).fetchone()[0]
    scribble(target, (root - 1) * page_size, page_size)  # the release records' first page
    assert run_cli("--config", str(polled), "poll").code == 0  # all 304s: never read there
    result = run_cli("--config", str(polled), "store", "check")
    # SQLite lists what it found, or (a page past reading) says the file is malformed.
    assert result.code == 1
    said = result.stdout if "DAMAGED" in result.stdout else one_line(result)
    assert "damaged" in said.lower() and "store reinit" in said


def test_store_check_of_a_sound_store_says_ok_with_totals(polled, run_cli):
    result = run_cli("--config", str(polled), "store", "check")
    assert result.code == 0 and "ok (integrity check passed; 2 repos, 1 release" in result.stdout


# ---- a database lost or emptied beside the rest of the store --------------------------------

@pytest.mark.parametrize("loss", ["deleted", "emptied"])
def test_a_lost_database_is_refused_not_taken_as_a_new_baseline(polled, run_cli, fake_github,
                                                               loss):
    target = database(polled)
    if loss == "deleted":
        target.unlink()
    else:
        target.write_bytes(b"")
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body="- New (#2)")
    for command in COMMANDS:
        result = run_cli("--config", str(polled), *command)
        assert result.code == 1, command
        line = one_line(result)
        assert "lost its database" in line and "store reinit" in line
    assert not target.exists() or target.stat().st_size == 0  # nothing became a new store
    events = (polled.parent / "events.jsonl").read_text().splitlines()
    assert len(events) == 1  # v2.7.0 was not absorbed into a baseline, nor announced


def test_store_reinit_starts_over_and_keeps_the_old_database(polled, run_cli, fake_github):
    database(polled).write_bytes(b"")
    result = run_cli("--config", str(polled), "store", "reinit")
    assert result.code == 0 and "started over" in result.stdout
    assert list(database(polled).parent.glob("cache.db.set-aside-*"))
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body="- New (#2)")
    assert run_cli("--config", str(polled), "poll").code == 0
    status = run_cli("--config", str(polled), "status")
    assert status.code == 0 and "releases known: 2" in status.stdout


def test_store_reinit_refuses_a_sound_store_without_force(polled, run_cli):
    refused = run_cli("--config", str(polled), "store", "reinit")
    assert refused.code == 1 and "--force" in one_line(refused)
    assert run_cli("--config", str(polled), "store", "reinit", "--force").code == 0
    status = run_cli("--config", str(polled), "status").stdout
    assert "releases known: 0" in status and "no successful poll yet" in status


# ---- a store path that cannot be a store ----------------------------------------------------

@pytest.mark.parametrize("command", [*COMMANDS, ("store", "check")],
                         ids=[*IDS, "store-check"])
def test_a_store_path_that_is_a_file_is_a_usage_error(write_config, run_cli, tmp_path, command):
    config = write_config()
    (tmp_path / "store").write_text("not a directory")
    result = run_cli("--config", str(config), *command)
    assert result.code == 2
    assert "is a file, not a directory" in one_line(result)


# ---- `run` as a real process ----------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("damage", ["corrupt", "emptied", "file"])
def test_the_daemon_refuses_a_broken_store_in_one_line(polled, damage):
    store = database(polled).parent
    if damage == "corrupt":
        scribble(database(polled), 0, 16)
    elif damage == "emptied":
        database(polled).write_bytes(b"")
    else:
        shutil.rmtree(store)
        store.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELEASE_WATCH")}
    result = subprocess.run([sys.executable, "-m", "watcher", "--config", str(polled), "run"],
                            capture_output=True, text=True, env={**env, "GITHUB_TOKEN": TOKEN},
                            timeout=60)
    assert result.returncode == (2 if damage == "file" else 1)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr


# ---- a read-only store ----------------------------------------------------------------------

def as_reader(argv: list[str], store: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Runs ``argv`` where ``store`` cannot be written: chmod-ed read-only for a normal user;
    for root (whom no file mode stops) on a read-only bind mount in a mount namespace of its
    own, the way a read-only volume looks. Skipped only where neither can be arranged."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GITHUB_TOKEN": TOKEN}
    if os.geteuid() == 0:
        remount = (f'mount --bind "{store}" "{store}" && '
                   f'mount -o remount,ro,bind "{store}" "{store}" && exec "$@"')
        argv = ["unshare", "-m", "sh", "-c", remount, "sh", *argv]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def read_only_supported(store: Path, cwd: Path) -> bool:
    probe = as_reader(["sh", "-c", f'touch "{store}/probe"'], store, cwd)
    return probe.returncode != 0 and not (store / "probe").exists()


@pytest.mark.slow
def test_status_works_on_a_read_only_store_and_writers_say_why_they_cannot(polled):
    store = polled.parent / "store"
    for path in [store, *store.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        if not read_only_supported(store, polled.parent):
            pytest.skip("cannot make a read-only store here (root without mount namespaces)")
        command = [sys.executable, "-m", "watcher", "--config", str(polled)]
        status = as_reader([*command, "status"], store, polled.parent)
        assert status.returncode == 0, status.stderr
        assert "pytorch/pytorch" in status.stdout and "releases known: 1" in status.stdout
        check = as_reader([*command, "status", "--check", "--json"], store, polled.parent)
        assert check.stderr == "" and '"healthy"' in check.stdout
        assert as_reader([*command, "store", "check"], store, polled.parent).returncode == 0
        for writer in (["poll"], ["digest"]):
            refused = as_reader([*command, *writer], store, polled.parent)
            assert refused.returncode == 1, refused.stderr
            assert refused.stderr.count("\n") == 1 and "read-only" in refused.stderr
            assert str(store) in refused.stderr
    finally:
        for path in [store, *store.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)


def test_store_check_lists_what_sqlite_found(polled, run_cli, monkeypatch):
    from watcher.store.store import Store

    found = ["*** in database main ***", "Page 7: btreeInitPage() returns error code 11"]
    monkeypatch.setattr(Store, "integrity", lambda self: found)
    result = run_cli("--config", str(polled), "store", "check")
    assert result.code == 1
    assert "found 2 problems" in result.stdout and "  Page 7: btreeInitPage()" in result.stdout
