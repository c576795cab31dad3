"""The package index answers only for itself, and every wheel it serves is held to its budget
(issue 35): a body dripping slower than the floor, one past its overall deadline, a size other
than the one declared or over the cap, a redirect to another host, a JSON of another version;
each ends within its deadline in one line with nothing left behind, is recorded, and is asked
for again at most once per ``retry_every`` (a plain 500 too), never on every poll. Against the
loopback fake index, the real httpx."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import hostile_wheels as hostile
import httpx
import pytest
from daemon_support import wait_for
from fakes.pypi import FakePackageIndex
from test_atlas_source import NOW, Clock

from watcher.impact.atlas import (
    AtlasError,
    AtlasSource,
    BoundedBuilder,
    Budget,
    ChecksumMismatch,
    ForeignHost,
    NotYetPublished,
    OverBudget,
    PackageIndex,
    PackageStep,
    WrongVersion,
    sweep,
)
from watcher.impact.atlas.scratch import PREFIX
from watcher.store import Store

# Short limits, so each fault ends in about a second: the floor over half a second windows.
FAST = Budget(json_seconds=2.0, download_seconds=3.0, min_rate=10_000, slow_seconds=0.5,
              max_wheel=2_000_000)
WHEEL = "torch-2.16.0-cp311-none-macosx_11_0_arm64.whl"


@pytest.fixture
def other() -> Iterator[FakePackageIndex]:
    """Another host: the same loopback, named ``localhost`` rather than ``127.0.0.1``."""
    with FakePackageIndex() as fake:
        yield fake


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "store")
    yield opened
    opened.close()


@pytest.fixture(autouse=True)
def own_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Downloads and builds go to a temporary folder of this test's own, to be looked at."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr("tempfile.tempdir", None)
    return folder


def source(store: Store, index: FakePackageIndex, clock: Clock, budget: Budget = FAST, *,
           hosts: tuple[str, ...] = ()) -> AtlasSource:
    return AtlasSource(store=store, clock=clock, bundled=Path("/nonexistent"),
                       index=PackageIndex(index.url, timeout=2.0, budget=budget, hosts=hosts),
                       builder=BoundedBuilder(budget))


def serve(index: FakePackageIndex, folder: Path, **faults: object) -> bytes:
    data = hostile.sound(folder, "2.16.0").read_bytes()
    index.add("torch", "2.16.0", WHEEL, data, **faults)
    return data


def localhost(url: str) -> str:
    return url.replace("127.0.0.1", "localhost")


# Each fault set on the fake (``arrange``), with what it must end in.
CASES = {
    "drip": (OverBudget, r"came at \d KB/s over \ds, under the floor of 10 KB/s "
                         r"\(impact.download_min_rate\); abandoned"),
    "deadline": (OverBudget, r"the download of torch-2.16.0.* took longer than its 3s"),
    "declared smaller": (ChecksumMismatch, r"the server sends \d+ KB where the index declares "
                                           r"1 KB; nothing was kept"),
    "declared over the cap": (OverBudget, r"over the cap of 2 MB \(impact.wheel_max_size\)"),
    "redirected elsewhere": (ForeignHost, r"redirects to http://localhost:\d+, which it does "
                                          r"not answer for \(impact.package_hosts\); refused"),
    "json elsewhere": (ForeignHost, r"json: the index redirects to http://localhost"),
    "json of another version": (WrongVersion, r"answers with torch 2.15.0 for 2.16.0; refused"),
}


def arrange(case: str, tmp_path: Path, index: FakePackageIndex, other: FakePackageIndex
            ) -> None:
    if case == "drip":
        serve(index, tmp_path, drip=(200, 0.1))  # 2 KB/s
    elif case == "deadline":
        serve(index, tmp_path, drip=(1000, 0.05))  # 20 KB/s: over the floor, not in 3 s
        index.releases[-1].data += b"\0" * 60_000
    elif case == "declared smaller":
        serve(index, tmp_path, size=1000)
    elif case == "declared over the cap":
        serve(index, tmp_path, size=3_000_000)
    elif case == "redirected elsewhere":
        serve(other, tmp_path)
        serve(index, tmp_path, redirect=f"{localhost(other.url)}/files/{WHEEL}")
    elif case == "json elsewhere":
        serve(other, tmp_path)
        index.json_redirects["2.16.0"] = f"{localhost(other.url)}/pypi/torch/2.16.0/json"
    elif case == "json of another version":
        index.add("torch", "2.15.0", WHEEL.replace("2.16.0", "2.15.0"), b"x")
        index.json_versions["2.16.0"] = "2.15.0"


@pytest.mark.parametrize("case", CASES)
def test_each_fault_ends_in_time_in_one_line_keeping_nothing(
        case: str, tmp_path: Path, index: FakePackageIndex, other: FakePackageIndex,
        store: Store, own_temp: Path) -> None:
    error, message = CASES[case]
    arrange(case, tmp_path, index, other)
    started = time.monotonic()
    with pytest.raises(error, match=message) as raised:
        source(store, index, Clock()).get("torch", "2.16.0", force=True)
    assert time.monotonic() - started < FAST.json_seconds + FAST.download_seconds + 1
    assert "\n" not in str(raised.value)
    assert store.atlas_versions("torch") == []
    assert store.atlas_tried("torch", "2.16.0") == NOW  # recorded: not asked again at once
    assert list(own_temp.iterdir()) == []  # no partial download, no folder


def test_a_wheel_may_come_from_a_host_configured_beside_the_index(
        tmp_path: Path, index: FakePackageIndex, other: FakePackageIndex, store: Store) -> None:
    arrange("redirected elsewhere", tmp_path, index, other)
    atlas = source(store, index, Clock(), hosts=("localhost",)).get("torch", "2.16.0")
    assert atlas.version == "2.16.0"
    assert other.requests == [f"/files/{WHEEL}"]


def test_the_size_is_checked_while_streaming(tmp_path: Path) -> None:
    """A body with no content-length is cut the moment it passes the declared size."""
    data = hostile.sound(tmp_path, "2.16.0").read_bytes()
    sent: list[int] = []

    def body() -> Iterator[bytes]:
        for start in range(0, 10 * len(data), 1000):
            sent.append(start)
            yield (data * 10)[start:start + 1000]

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body())

    from watcher.impact.atlas import WheelFile

    client = PackageIndex("http://index.test", budget=FAST,
                          transport=httpx.MockTransport(answer))
    wheel = WheelFile(WHEEL, f"http://index.test/files/{WHEEL}", len(data), "0" * 64)
    with pytest.raises(ChecksumMismatch,
                       match=r"sends more than the \d KB the index declares; abandoned"):
        client.download(wheel, tmp_path)
    assert len(sent) <= len(data) // 1000 + 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tmp", WHEEL]  # no .part


def test_a_plain_500_is_asked_again_later_not_taken_as_final(
        tmp_path: Path, index: FakePackageIndex, store: Store,
        caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    step = PackageStep(source(store, index, clock))
    index.json_status = 500
    with caplog.at_level(logging.INFO):
        assert step.fetch("torch", "2.16.0") is False
    assert [r.getMessage() for r in caplog.records if r.name.endswith("step")] == [
        f"package torch 2.16.0 not read: {index.url}/pypi/torch/2.16.0/json: the index "
        "answered 500; trying again after 2026-12-01 13:00 UTC"]
    index.json_status = None
    serve(index, tmp_path)
    clock.now = NOW + timedelta(minutes=59)
    assert step.fetch("torch", "2.16.0") is False  # within the hour: not asked
    assert index.requests == ["/pypi/torch/2.16.0/json"]
    clock.now = NOW + timedelta(hours=1)
    assert step.fetch("torch", "2.16.0") is True
    assert store.atlas_versions("torch") == ["2.16.0"]


@pytest.mark.parametrize("case", ["drip", "declared smaller", "json of another version"])
def test_every_failure_is_asked_again_after_the_wait_not_every_poll(
        case: str, tmp_path: Path, index: FakePackageIndex, other: FakePackageIndex,
        store: Store) -> None:
    arrange(case, tmp_path, index, other)
    clock = Clock()
    fetching = source(store, index, clock)
    with pytest.raises(AtlasError):
        fetching.get("torch", "2.16.0")
    asked = len(index.requests)
    for minutes in (1, 30, 59):
        clock.now = NOW + timedelta(minutes=minutes)
        with pytest.raises(NotYetPublished, match="asking again after 13:00"):
            fetching.get("torch", "2.16.0")
    assert len(index.requests) == asked


def test_a_download_stopped_from_another_thread_ends_at_once_keeping_nothing(
        tmp_path: Path, index: FakePackageIndex, own_temp: Path) -> None:
    """The daemon stopping (SIGTERM) aborts the fetch in flight: its read is cut, not waited
    for, and its partial file goes."""
    import threading

    serve(index, tmp_path, drip=(2000, 0.05))  # over the floor: 3 s, unless stopped
    index.releases[-1].data += b"\0" * 120_000
    client = PackageIndex(index.url, budget=Budget(download_seconds=60), timeout=30)
    wheel = client.smallest_wheel("torch", "2.16.0")
    threading.Timer(0.3, client.abort).start()
    started = time.monotonic()
    with pytest.raises(OverBudget, match="was stopped"):
        client.download(wheel, own_temp)
    assert time.monotonic() - started < 2
    assert list(own_temp.iterdir()) == []


def test_the_folders_of_processes_that_are_gone_are_swept(own_temp: Path) -> None:
    import os

    gone = own_temp / f"{PREFIX}999999999-abc"
    mine = own_temp / f"{PREFIX}{os.getpid()}-def"
    foreign = own_temp / "release-watch-wheel-notapid"
    for folder in (gone, mine, foreign):
        folder.mkdir()
        (folder / "torch.whl.part").write_bytes(b"partial")
    assert sweep() == [gone]
    assert sorted(own_temp.iterdir()) == sorted([mine, foreign])


def test_sigterm_during_atlas_build_leaves_nothing_behind(
        tmp_path: Path, index: FakePackageIndex, own_temp: Path) -> None:
    """``atlas build`` by hand, stopped by SIGTERM mid-download: SIGTERM's default would end
    the process with its partial file in the temporary folder; it exits 143 with one line,
    and the folder is empty."""
    import os
    import signal
    import subprocess
    import sys

    serve(index, tmp_path, drip=(2000, 0.05))  # 40 KB/s: over the floor, for seconds
    index.releases[-1].data += b"\0" * 400_000
    config = tmp_path / "release-watch.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "store"}"\n'
                      f'[impact]\npackage_index = "{index.url}"\n', encoding="utf-8")
    environment = {**os.environ, "TMPDIR": str(own_temp)}
    process = subprocess.Popen(
        [sys.executable, "-m", "watcher", "--config", str(config), "atlas", "build", "2.16.0"],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: bool(list(own_temp.glob("*/*.part"))), timeout=30,
                 what="the download to start")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 128 + signal.SIGTERM
    assert "Traceback" not in stderr
    said = [line for line in stderr.splitlines() if "SIGTERM" in line]
    assert len(said) == 1 and said[0].endswith(
        "stopped by SIGTERM: the package step's download and build in flight were removed")
    assert list(own_temp.iterdir()) == []
