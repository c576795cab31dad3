"""Shared fixtures: the loopback fake GitHub, configs pointing at it, and a CLI runner that
never sleeps and never reads the real environment's tokens."""

from __future__ import annotations

import io
import ipaddress
import logging
import socket
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fakes.clock import Clock
from fakes.github import FakeGitHub
from fakes.pypi import FakePackageIndex
from fakes.slack import FakeSlack

from watcher.app import Dependencies
from watcher.cli import main
from watcher.config import Secrets

FIXTURES = Path(__file__).parent / "fixtures"
_REAL_GETADDRINFO = socket.getaddrinfo


def _loopback(host: object) -> bool:
    if host is None or not isinstance(host, str | bytes):
        return True
    name = host.decode() if isinstance(host, bytes) else host
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    # 0.0.0.0 and :: too: a listener bound to every address, reached on this machine.
    return address.is_loopback or address.is_unspecified


def _local_only(host, *args, **kwargs):  # type: ignore[no-untyped-def]
    """No test reaches the internet: a name that is not the loopback does not resolve (the
    machine can reach the package index, so an unguarded default URL would)."""
    if not _loopback(host):
        raise socket.gaierror(socket.EAI_NONAME, f"tests reach no internet ({host!r})")
    return _REAL_GETADDRINFO(host, *args, **kwargs)


@pytest.fixture
def index() -> Iterator[FakePackageIndex]:
    """A package index (PyPI's JSON API) over loopback; tests add the wheels it serves."""
    with FakePackageIndex() as fake:
        yield fake


@pytest.fixture(autouse=True)
def no_internet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", _local_only)


def _pytests(handler: logging.Handler) -> bool:
    return type(handler).__module__.startswith("_pytest")


@pytest.fixture(autouse=True)
def logging_restored() -> Iterator[None]:
    """The CLI configures logging for the whole process (``watcher.logs.setup_logging``: the
    levels of the root, httpx and APScheduler loggers, the root's handler), and a test runs it
    in-process: undone after each test, so no test depends on which ran before it in its worker
    (``--verbose`` once left httpx logging every request at INFO for the rest of the run).
    pytest's own capturing handlers, attached and detached per phase, are left to pytest."""
    loggers = [logging.getLogger(), *(each for each in logging.Logger.manager.loggerDict.values()
                                      if isinstance(each, logging.Logger))]
    saved = [(each, each.level, each.propagate, each.disabled) for each in loggers]
    root = logging.getLogger()
    handlers = [handler for handler in root.handlers if not _pytests(handler)]
    yield
    for each, level, propagate, disabled in saved:
        each.setLevel(level)
        each.propagate, each.disabled = propagate, disabled
    root.handlers[:] = handlers + [handler for handler in root.handlers if _pytests(handler)]
RELEASES = FIXTURES / "releases"
TOKEN = "ghp_test_token_value_1234"


def release_notes(name: str) -> str:
    """A real release body from tests/fixtures/releases, e.g. ``pytorch/v2.7.0.md``."""
    return (RELEASES / name).read_bytes().decode("utf-8")


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


SLACK_TOKEN = "xoxb-test-bot-token-5678"


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    with FakeSlack() as server:
        server.add_token(SLACK_TOKEN, channels=["#releases", "#xla", "#dist-training",
                                                "#breaking"])
        yield server


@pytest.fixture
def clock() -> Clock:
    return Clock()


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli(clock: Clock, capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    def run(*args: str, token: str | None = TOKEN, env: dict[str, str] | None = None) -> Result:
        out = io.StringIO()
        secrets = Secrets.model_validate({"GITHUB_TOKEN": token, **(env or {})})
        deps = Dependencies(stdout=out, sleep=clock.sleep, clock=clock, epoch=clock.epoch,
                            secrets=secrets, environ=dict(env or {}))
        capsys.readouterr()
        code = main(list(args), deps)
        captured = capsys.readouterr()
        return Result(code, out.getvalue() + captured.out, captured.err)

    return run


@pytest.fixture
def write_config(tmp_path: Path, fake_github: FakeGitHub) -> Callable[..., Path]:
    """A config file in tmp_path pointing at the fake GitHub; ``extra`` is appended TOML,
    ``github`` goes into the [github] table."""

    def write(extra: str = "", *, repos: tuple[str, ...] = ("pytorch/pytorch", "pytorch/xla"),
              notifiers: str | None = None, slack_url: str | None = None,
              github: str = "") -> Path:
        repo_tables = "".join(f'\n[[repos]]\nname = "{name}"\n' for name in repos)
        if notifiers is None:
            notifiers = ('[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n')
        path = tmp_path / "release-watch.toml"
        path.write_text(f'[github]\napi_url = "{fake_github.url}"\nbackoff = "1s"\n{github}\n'
                        f'[store]\npath = "store"\n{repo_tables}\n{notifiers}\n{extra}\n'
                        + (f'[slack]\napi_url = "{slack_url}"\n' if slack_url else ""))
        return path

    return write


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Any]:
    """The session's throwaway PostgreSQL server (``tests/postgres_support.py``), started on
    first use; skipped, with the reason, where the server or psycopg is not installed."""
    from postgres_support import cluster

    yield from cluster()


@pytest.fixture
def postgres_url(postgres_cluster: Any) -> str:
    """The URL of a new, empty database of this test's own on the session's server."""
    return str(postgres_cluster.database())


@pytest.fixture(params=["embedded", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """The store's contract, run over both backends: the embedded store in a new directory,
    and the store in a new PostgreSQL database (skipped where there is no server)."""
    from watcher.store import Store

    if request.param == "embedded":
        opened = Store.open(tmp_path / "store")
    else:
        opened = Store.connect(request.getfixturevalue("postgres_url"))
    try:
        yield opened
    finally:
        opened.close()
