"""A throwaway PostgreSQL server for the tests: Debian's ``postgresql`` package's binaries, one
cluster per test session in a temporary directory, listening on a Unix socket in it only (no
TCP port, nothing reachable from elsewhere), and a new database per test.

initdb refuses to run as root, so as root (CI) the cluster is made and run by the
``postgres`` user the package creates (or ``rwtest``, created here when neither exists);
as any other user, by that user. Tests that need the server are skipped, with the reason, where
the binaries are missing; ``.ci/run`` installs the package, so CI runs them.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

BINARIES = Path("/usr/lib/postgresql")
SERVER_USER = "rwtest"  # the cluster's superuser role (its name, not a system user)
START_WAIT = 60  # seconds pg_ctl waits for the server to accept connections


def binaries() -> Path | None:
    """The newest installed server's bin directory, if there is one."""
    found = sorted(BINARIES.glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name)
                   if p.parent.parent.name.isdigit() else 0)
    return found[-1].parent if found else None


def _system_user() -> str | None:
    """Who runs the server: None for this user, unless this user is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "rwtest"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    subprocess.run(["useradd", "--system", "--no-create-home", "rwtest"], check=True)
    return "rwtest"


class Cluster:
    """One running server; ``database()`` makes a fresh database and returns its URL."""

    def __init__(self, bindir: Path, root: Path, user: str | None) -> None:
        self.bindir = bindir
        self.root = root
        self.data = root / "data"
        self.socket = root / "socket"
        self.user = user
        self._names = itertools.count(1)

    def _run(self, *args: str) -> None:
        command = [str(self.bindir / args[0]), *args[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode:
            raise RuntimeError(f"{args[0]} failed ({result.returncode}): "
                               f"{result.stderr.strip() or result.stdout.strip()}")

    def start(self) -> None:
        self.socket.mkdir()
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            for path in (self.root, self.socket):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", SERVER_USER, "-A", "trust",
                  "-E", "UTF8", "--no-sync", "--locale=C")
        options = (f"-k {self.socket} -c listen_addresses='' -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"),
                  "-o", options, "-w", "-t", str(START_WAIT), "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SERVER_USER}@/{database}?host={self.socket}"

    def database(self) -> str:
        """A new, empty database of its own; its URL."""
        import psycopg

        name = f"rw_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"{self._strategy}')
        return self.url(name)

    @property
    def _strategy(self) -> str:
        """PostgreSQL 15's default copies the template page by page through the WAL: 57 ms a
        database here against 22 ms for a file copy (fsync is off), on every store test."""
        version = self.bindir.parent.name
        return " STRATEGY = FILE_COPY" if version.isdigit() and int(version) >= 15 else ""


def skip_reason() -> str | None:
    if binaries() is None:
        return ("PostgreSQL's server is not installed (apt-get install postgresql: "
                ".ci/run does it)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[postgres]')"
    return None


def cluster() -> Iterator[Cluster]:
    """The session's server, torn down (with its directory) at the end."""
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    bindir = binaries()
    assert bindir is not None
    root = Path(tempfile.mkdtemp(prefix="rw-postgres-"))
    server = Cluster(bindir, root, _system_user())
    try:
        server.start()
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
