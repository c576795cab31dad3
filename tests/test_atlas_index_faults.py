"""What the mutation audit of the atlas's sources (issue 31) found no test for: an index that
fails with a server error (the JSON API or the download), an index out of reach remembered for
an hour like a version not yet published, and ``atlas build``/``atlas diff`` asked by hand,
which the hourly wait never holds back. The index is the loopback fake speaking PyPI's API."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from atlas_support import write_wheel
from conftest import Result
from fakes.pypi import FakePackageIndex
from test_atlas_source import NOW, Clock
from test_atlas_source import _source as source_of

from watcher.impact.atlas import AtlasError, IndexUnreachable, NotYetPublished
from watcher.impact.atlas.index import PackageIndex
from watcher.impact.atlas.source import AtlasSource
from watcher.store import Store

Run = Callable[..., Result]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "store")
    yield opened
    opened.close()


def _source(store: Store, index: FakePackageIndex, clock: Clock) -> AtlasSource:
    return source_of(store, index.url, clock)


def test_a_server_error_is_an_index_out_of_reach_in_one_line(
        index: FakePackageIndex, store: Store, caplog: pytest.LogCaptureFixture) -> None:
    index.json_status = 503
    source = _source(store, index, Clock())
    with pytest.raises(IndexUnreachable, match="the index answered 503"):
        source.get("torch", "2.15.0", force=True)
    with caplog.at_level(logging.WARNING):
        assert source.find("torch", "2.16.0") is None
    assert [record.getMessage() for record in caplog.records] == [
        f"package diff skipped: {index.url}/pypi/torch/2.16.0/json: the index answered 503"]


def test_a_client_error_is_no_index_out_of_reach(index: FakePackageIndex) -> None:
    index.json_status = 403
    with pytest.raises(AtlasError, match="answered 403") as raised:
        PackageIndex(index.url, timeout=5.0).wheels("torch", "2.15.0")
    assert not isinstance(raised.value, IndexUnreachable | NotYetPublished)


def test_a_download_answering_an_error_page_is_out_of_reach_and_keeps_nothing(
        tmp_path: Path, index: FakePackageIndex, store: Store) -> None:
    index.add("torch", "2.15.0", "torch-2.15.0-py3-none-any.whl",
              write_wheel(tmp_path, "2.15.0").read_bytes(), status=503)
    client = PackageIndex(index.url, timeout=5.0)
    folder = tmp_path / "down"
    folder.mkdir()
    with pytest.raises(IndexUnreachable, match="answered 503"):  # not a checksum mismatch
        client.download(client.smallest_wheel("torch", "2.15.0"), folder)
    assert list(folder.iterdir()) == []
    with pytest.raises(IndexUnreachable):
        _source(store, index, Clock()).get("torch", "2.15.0")
    assert store.atlas_versions("torch") == []


def test_an_index_out_of_reach_is_asked_again_after_the_hour_not_every_poll(
        tmp_path: Path, index: FakePackageIndex, store: Store) -> None:
    clock = Clock()
    source = _source(store, index, clock)
    index.json_status = 503
    with pytest.raises(IndexUnreachable):
        source.get("torch", "2.15.0")
    assert store.atlas_tried("torch", "2.15.0") == NOW
    index.json_status = None
    index.add("torch", "2.15.0", "torch-2.15.0-py3-none-any.whl",
              write_wheel(tmp_path, "2.15.0").read_bytes())
    clock.now = NOW + timedelta(minutes=59)
    with pytest.raises(NotYetPublished, match="asking again after 13:00"):
        source.get("torch", "2.15.0")
    assert index.requests == ["/pypi/torch/2.15.0/json"]  # a poll does not wait on it again
    clock.now = NOW + timedelta(hours=1)
    assert source.get("torch", "2.15.0").version == "2.15.0"


def _config(tmp_path: Path, index: str) -> Path:
    path = tmp_path / "release-watch.toml"
    path.write_text(f'[store]\npath = "{tmp_path / "store"}"\n\n'
                    f'[impact]\npackage_index = "{index}"\n', encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("command", [("build", "2.16.0"), ("diff", "2.6.0", "2.16.0")],
                         ids=["build", "diff"])
def test_a_version_asked_for_by_hand_is_asked_of_the_index_each_time(
        tmp_path: Path, run_cli: Run, index: FakePackageIndex, command: tuple[str, ...]) -> None:
    config = str(_config(tmp_path, index.url))
    first = run_cli("atlas", *command, "--config", config)
    again = run_cli("atlas", *command, "--config", config)  # the same minute
    for result in (first, again):
        assert result.code == 1
        assert result.stderr.strip().splitlines() == [
            f"release-watch: torch 2.16.0 is not on {index.url} yet"]
    assert index.requests.count("/pypi/torch/2.16.0/json") == 2
