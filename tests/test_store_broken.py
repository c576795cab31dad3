"""More broken stores: a cache.db that SQLite reads but that holds no store (an empty SQLite
file put in its place, its ledger tables dropped), a schema-1 store that lost one of
diskcache's value files, and a read-only store read by a user who may not write it. Each is
one line naming the problem and the fix, never a traceback and never a new baseline."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from conftest import TOKEN

ROOT = Path(__file__).resolve().parent.parent
V1 = Path(__file__).parent / "fixtures" / "store_v1" / "store"
COMMANDS = [("poll",), ("poll", "--dry-run"), ("status",), ("status", "--check"), ("digest",),
            ("store", "check")]
IDS = ["poll", "dry-run", "status", "status-check", "digest", "store-check"]
NOBODY = 65534


def one_line(result) -> str:
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def events(config: Path) -> list[str]:
    path = config.parent / "events.jsonl"
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def polled(fake_github, write_config, run_cli) -> Path:
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body="- Fix a crash (#1)")
    fake_github.add_repo("pytorch/xla")
    config = write_config()
    assert run_cli("--config", str(config), "poll").code == 0
    assert len(events(config)) == 1
    return config


def sql(path: Path, *statements: str) -> list[tuple[object, ...]]:
    """Runs ``statements`` and closes the connection (the last one to close checkpoints)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        return [row for statement in statements for row in db.execute(statement)]


def empty_sqlite(path: Path) -> None:
    """A valid SQLite file with no table, in place of the store's database."""
    path.unlink()
    sql(path, "PRAGMA user_version = 7")  # writes the header: a file of one page
    assert path.stat().st_size > 0


def drop_ledger(path: Path) -> None:
    names = sql(path, "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'rw_*'")
    assert names
    sql(path, *(f"DROP TABLE {name}" for (name,) in names))


GUTS = {"an empty SQLite file": empty_sqlite, "its ledger tables dropped": drop_ledger}


# ---- a cache.db that holds no store ---------------------------------------------------------

@pytest.mark.parametrize("gut", list(GUTS))
def test_a_gutted_database_is_refused_like_a_lost_one(polled, run_cli, fake_github, gut):
    target = polled.parent / "store" / "cache.db"
    GUTS[gut](target)
    before = target.read_bytes()
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body="- New (#2)")
    for command in COMMANDS:
        result = run_cli("--config", str(polled), *command)
        assert result.code == 1, (command, result.stdout, result.stderr)
        line = one_line(result)
        assert "lost its database" in line and "store reinit" in line, line
        assert "cache.db" in line and "release-watch-store" in line
    assert target.read_bytes() == before  # nothing became a new store
    assert len(events(polled)) == 1  # v2.7.0 was not swallowed by a new baseline
    refused = run_cli("--config", str(polled), "status")
    assert "holds none of the store's tables" in refused.stderr


@pytest.mark.parametrize("gut", list(GUTS))
def test_store_reinit_sets_a_gutted_database_aside_without_force(polled, run_cli, fake_github,
                                                                 gut):
    GUTS[gut](polled.parent / "store" / "cache.db")
    result = run_cli("--config", str(polled), "store", "reinit")
    assert result.code == 0, result.stderr
    assert "started over" in result.stdout
    assert list((polled.parent / "store").glob("cache.db.set-aside-*"))
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", body="- New (#2)")
    assert run_cli("--config", str(polled), "poll").code == 0
    assert "releases known: 2" in run_cli("--config", str(polled), "status").stdout


def test_a_ledger_missing_some_tables_is_damaged_and_reinit_sets_it_aside(polled, run_cli):
    sql(polled.parent / "store" / "cache.db", "DROP TABLE rw_release")
    for command in COMMANDS:
        result = run_cli("--config", str(polled), *command)
        assert result.code == 1, command
        line = one_line(result) if command != ("store", "check") else result.stderr
        assert "lost the ledger tables rw_release" in line and "store reinit" in line
    assert run_cli("--config", str(polled), "store", "reinit").code == 0


@pytest.mark.slow
@pytest.mark.parametrize("what", ["an empty directory", "nothing", "an empty SQLite file"])
def test_a_new_store_still_starts(write_config, run_cli, fake_github, tmp_path, what):
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body="- Fix a crash (#1)")
    fake_github.add_repo("pytorch/xla")
    config = write_config()
    store = tmp_path / "store"
    if what != "nothing":
        store.mkdir()
    if what == "an empty SQLite file":  # nothing else of a store beside it
        sql(store / "cache.db", "PRAGMA user_version = 7")
    status = run_cli("--config", str(config), "status")
    assert status.code == 0 and "no poll recorded yet" in status.stdout
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    assert len(events(config)) == 1
    assert "releases known: 1" in run_cli("--config", str(config), "status").stdout


# ---- a schema-1 store that lost one of diskcache's value files ------------------------------

@pytest.fixture
def v1_without_a_value_file(tmp_path, write_config) -> tuple[Path, str]:
    config = write_config()
    shutil.copytree(V1, tmp_path / "store")
    [value] = (tmp_path / "store").rglob("*.val")  # the v2.7.0 record, over the inline limit
    value.unlink()
    return config, str(value.relative_to(tmp_path / "store"))


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != ("store", "check")],
                         ids=[i for i in IDS if i != "store-check"])
def test_a_missing_value_file_is_one_line_for_every_command(v1_without_a_value_file, run_cli,
                                                            command):
    config, name = v1_without_a_value_file
    result = run_cli("--config", str(config), *command)
    assert result.code == 1
    line = one_line(result)
    assert f"value file {name} is missing" in line
    assert "store check" in line and "store reinit" in line


def test_store_check_lists_a_missing_value_file_of_a_schema_1_store(v1_without_a_value_file,
                                                                    run_cli):
    config, name = v1_without_a_value_file
    result = run_cli("--config", str(config), "store", "check")
    assert result.code == 1 and "Traceback" not in result.stderr
    assert "DAMAGED" in result.stdout
    assert f"diskcache value file {name} is missing" in result.stdout


def test_store_reinit_starts_over_from_a_schema_1_store_missing_a_value_file(
        v1_without_a_value_file, run_cli, fake_github):
    config, _ = v1_without_a_value_file
    result = run_cli("--config", str(config), "store", "reinit")
    assert result.code == 0, result.stderr
    assert "started over" in result.stdout
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body="- Fix a crash (#1)")
    fake_github.add_repo("pytorch/xla")
    assert run_cli("--config", str(config), "poll").code == 0
    assert run_cli("--config", str(config), "store", "check").code == 0


# ---- a read-only store, read by a user who may not write it ---------------------------------

@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory every user may read: tmp_path's parents are private to the test's user."""
    base = Path(tempfile.mkdtemp(prefix="release-watch-ro-"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        for path in [base, *base.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.rmtree(base)


def reader_command() -> tuple[list[str], dict[str, str], object]:
    """How to run release-watch as a user who cannot write the store: this user, or, for root
    (whom no file mode stops), ``nobody`` through ``setuid``, with an interpreter that user
    may run (a venv's may live under /root) and this checkout on its path."""
    env = {"PATH": "/usr/bin:/bin", "GITHUB_TOKEN": TOKEN,
           "PYTHONPATH": os.pathsep.join([str(ROOT), sysconfig.get_paths()["purelib"]])}
    if os.geteuid() != 0:
        return [sys.executable], env, None

    def demote() -> None:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)

    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    candidates = [sys.executable, os.path.realpath(sys.executable),
                  getattr(sys, "_base_executable", ""), shutil.which(version) or "",
                  shutil.which(version, path="/usr/local/bin:/usr/bin:/bin") or ""]
    probe = ("import sys, watcher, pydantic, httpx, diskcache; "
             f"sys.exit(sys.version_info[:2] != {tuple(sys.version_info[:2])})")
    for python in dict.fromkeys(c for c in candidates if c):
        try:
            ran = subprocess.run([python, "-c", probe], env=env, preexec_fn=demote, cwd="/",
                                 capture_output=True, timeout=60)
        except OSError:
            continue
        if ran.returncode == 0:
            return [python], env, demote
    pytest.skip(f"no Python {sys.version_info[0]}.{sys.version_info[1]} that user nobody may "
                "run (tried the venv's and the system's), so no reader without write access")


@pytest.mark.slow
def test_health_probes_read_a_read_only_store_after_a_clean_exit(fake_github, shared_dir):
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", body="- Fix a crash (#1)")
    config = shared_dir / "release-watch.toml"
    config.write_text(f'[github]\napi_url = "{fake_github.url}"\n[store]\npath = "store"\n'
                      '[[repos]]\nname = "pytorch/pytorch"\n'
                      '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELEASE_WATCH")}
    poll = subprocess.run([sys.executable, "-m", "watcher", "--config", str(config), "poll"],
                          env={**env, "GITHUB_TOKEN": TOKEN}, capture_output=True, text=True,
                          timeout=60)  # by the clock the readers see
    assert poll.returncode == 0, poll.stderr
    store = shared_dir / "store"
    assert not list(store.glob("cache.db-*"))  # a clean exit: no WAL, no WAL index
    for path in [store, *store.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)  # `chmod -R a-w`, readable by all
    python, env, demote = reader_command()
    if demote is None:
        probe = subprocess.run(["touch", str(store / "probe")], capture_output=True)
        if probe.returncode == 0:
            pytest.skip("this user may write a directory of mode 0555 (not root, yet "
                        "cannot make the store read-only)")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*python, "-m", "watcher", "--config", str(config), *args],
                              env={**env, "HOME": str(shared_dir)}, cwd=shared_dir,
                              preexec_fn=demote, capture_output=True, text=True, timeout=60)

    status = run("status")
    assert status.returncode == 0, status.stderr
    assert "releases known: 1" in status.stdout and "health: ok" in status.stdout
    check = run("status", "--check")
    assert check.returncode == 0 and check.stderr == "", check.stderr
    probe = run("status", "--check", "--json")
    assert probe.returncode == 0 and '"healthy": true' in probe.stdout, probe.stderr
    store_check = run("store", "check")
    assert store_check.returncode == 0, store_check.stderr
    assert "ok (integrity check passed; 1 repo, 1 release" in store_check.stdout
    refused = run("poll")
    assert refused.returncode == 1 and "read-only" in one_line(refused)
    assert not list(store.glob("cache.db-*"))  # the readers wrote nothing, not even a -shm
