"""Where atlases come from: bundled files, the store, and the package index (a loopback fake
speaking PyPI's JSON API): the download, the sha256 check, a version not yet published, a
timeout and an index that is not there."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from atlas_support import write_wheel
from fakes.pypi import FakePackageIndex

from watcher.impact.atlas import (
    ChecksumMismatch,
    IndexUnreachable,
    NotYetPublished,
    build_atlas,
    dumps,
)
from watcher.impact.atlas.index import PackageIndex
from watcher.impact.atlas.source import AtlasSource, bundled_dir, previous_minor
from watcher.store import Store

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "store")
    yield opened
    opened.close()


def _source(store: Store | None, base: str, clock: Clock, *, timeout: float = 5.0,
            bundled: Path | None = None) -> AtlasSource:
    return AtlasSource(store=store, index=PackageIndex(base, timeout=timeout), clock=clock,
                       bundled=bundled if bundled is not None else Path("/nonexistent"))


def test_a_release_is_fetched_checked_built_and_kept(tmp_path: Path, index: FakePackageIndex,
                                                     store: Store) -> None:
    wheel = write_wheel(tmp_path, "2.15.0").read_bytes()
    index.add("torch", "2.15.0", "torch-2.15.0-cp311-none-linux_x86_64.whl", wheel + b"\0" * 64)
    index.add("torch", "2.15.0", "torch-2.15.0-cp311-none-macosx_11_0_arm64.whl", wheel)
    index.add("torch", "2.15.0", "torch-2.15.0.tar.gz", b"sdist", packagetype="sdist")
    source = _source(store, index.url, Clock())
    atlas = source.get("torch", "v2.15.0")
    assert atlas.version == "2.15.0" and atlas.resolve("torch.load") is not None
    assert source.origin[("torch", "2.15.0")] == "index"
    # the smallest wheel, after the JSON API
    assert index.requests == ["/pypi/torch/2.15.0/json",
                              "/files/torch-2.15.0-cp311-none-macosx_11_0_arm64.whl"]
    assert store.atlas_versions("torch") == ["2.15.0"]
    again = _source(store, index.url, Clock()).get("torch", "2.15.0")
    assert dict(again.names) == dict(atlas.names)
    assert len(index.requests) == 2  # from the store: the index is not asked again


def test_a_checksum_mismatch_keeps_nothing(tmp_path: Path, index: FakePackageIndex,
                                           store: Store) -> None:
    index.add("torch", "2.15.0", "torch-2.15.0-py3-none-any.whl",
              write_wheel(tmp_path, "2.15.0").read_bytes(), corrupt=True)
    with pytest.raises(ChecksumMismatch, match=r"is not the \w+ the index gives; nothing was kept"):
        _source(store, index.url, Clock()).get("torch", "2.15.0")
    assert store.atlas("torch", "2.15.0") is None
    assert store.atlas_versions("torch") == []


def test_a_version_not_yet_published_is_asked_for_again_later(index: FakePackageIndex,
                                                                store: Store,
                                                                tmp_path: Path) -> None:
    clock = Clock()
    source = _source(store, index.url, clock)
    with pytest.raises(NotYetPublished, match=r"torch 2\.15\.0 is not on http"):
        source.get("torch", "2.15.0")
    assert store.atlas_tried("torch", "2.15.0") == NOW
    clock.now = NOW + timedelta(minutes=30)
    with pytest.raises(NotYetPublished, match="asking again after 13:00"):
        source.get("torch", "2.15.0")
    assert len(index.requests) == 1  # within the hour: not asked
    index.add("torch", "2.15.0", "torch-2.15.0-py3-none-any.whl",
              write_wheel(tmp_path, "2.15.0").read_bytes())
    clock.now = NOW + timedelta(hours=1)
    assert source.get("torch", "2.15.0").version == "2.15.0"
    # someone asking by hand is not held back
    with pytest.raises(NotYetPublished):
        source.get("torch", "2.16.0")
    with pytest.raises(NotYetPublished):
        source.get("torch", "2.16.0", force=True)
    assert index.requests.count("/pypi/torch/2.16.0/json") == 2


def test_a_timeout_is_one_line_and_never_fails_the_caller(
        index: FakePackageIndex, store: Store, caplog: pytest.LogCaptureFixture) -> None:
    index.json_delay = 1.0  # the fake answers late; the client waits 0.05 s
    source = _source(store, index.url, Clock(), timeout=0.05)
    with pytest.raises(IndexUnreachable, match="timed out"):
        source.get("torch", "2.15.0", force=True)
    with caplog.at_level(logging.WARNING):
        assert source.find("torch", "2.16.0") is None
    assert [record.getMessage() for record in caplog.records] == [
        f"package diff skipped: {index.url}/pypi/torch/2.16.0/json: timed out"]


def test_a_download_that_stalls_is_a_timeout_and_leaves_no_file(tmp_path: Path,
                                                                index: FakePackageIndex,
                                                                store: Store) -> None:
    index.add("torch", "2.15.0", "torch-2.15.0-py3-none-any.whl",
              write_wheel(tmp_path, "2.15.0").read_bytes(), delay=1.0)
    # The listing is read with the usual timeout (a loaded machine may take more than 50 ms
    # to answer it); only the download stalls.
    wheel = PackageIndex(index.url).smallest_wheel("torch", "2.15.0")
    folder = tmp_path / "down"
    folder.mkdir()
    with pytest.raises(IndexUnreachable, match="timed out"):
        PackageIndex(index.url, timeout=0.05).download(wheel, folder)
    assert list(folder.iterdir()) == []


def test_offline_is_one_line(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    with FakePackageIndex() as gone:
        url = gone.url
    source = _source(store, url, Clock())
    with caplog.at_level(logging.WARNING):
        assert source.find("torch", "2.15.0") is None
    (message,) = [record.getMessage() for record in caplog.records]
    assert message.startswith("package diff skipped: ") and "cannot connect" in message
    assert "\n" not in message


def test_bundled_atlases_come_first_and_need_no_index(tmp_path: Path, store: Store) -> None:
    folder = tmp_path / "bundled"
    folder.mkdir()
    atlas = build_atlas(write_wheel(tmp_path, "2.6.0"))
    (folder / "torch-2.6.0.json.gz").write_bytes(dumps(atlas))
    store.put_atlas("torch", "2.6.3", dumps(atlas))
    source = AtlasSource(store=store, index=None, clock=Clock(), bundled=folder)
    assert source.get("torch", "2.6.0").version == "2.6.0"
    assert source.origin[("torch", "2.6.0")] == "bundled"
    assert source.versions("torch") == ["2.6.0", "2.6.3"]
    with pytest.raises(IndexUnreachable, match="no package index"):
        source.get("torch", "2.7.0")


def test_the_release_before_is_the_newest_known_of_the_minor_before(tmp_path: Path,
                                                                    store: Store) -> None:
    atlas = build_atlas(write_wheel(tmp_path, "2.6.0"))
    for version in ("2.5.0", "2.6.0", "2.6.1"):
        store.put_atlas("torch", version, dumps(atlas))
    source = AtlasSource(store=store, index=None, clock=Clock(), bundled=tmp_path / "none")
    before = source.before("torch", "2.7.0")
    assert before is not None and source.origin[("torch", "2.6.1")] == "store"
    assert previous_minor("2.10.0") == (2, 9) and previous_minor("3.0.0") is None
    store.put_atlas("torch", "2.14.1", dumps(atlas))
    assert source.before("torch", "3.0.0") is not None
    assert source.origin.get(("torch", "2.14.1")) == "store"
    assert source.before("torch", "2.5.0") is None  # 2.4 is not known and not fetchable


@pytest.mark.parametrize(("value", "ok"), [("https://mirror.example/", True),
                                           ("http://127.0.0.1:8080", True),
                                           ("pypi.org", False)])
def test_the_package_index_is_an_http_url(value: str, ok: bool) -> None:
    from watcher.config import config_from_dict
    from watcher.errors import ConfigError

    if ok:
        config = config_from_dict({"impact": {"package_index": value}}, base_dir=Path("."),
                                  source="test.toml")
        assert config.impact.package_index == value.rstrip("/")
    else:
        with pytest.raises(ConfigError, match="must be an http"):
            config_from_dict({"impact": {"package_index": value}}, base_dir=Path("."),
                             source="test.toml")


def test_the_bundled_atlases_are_found_from_the_checkout() -> None:
    names = sorted(path.name for path in bundled_dir().glob("torch-*.json.gz"))
    assert {f"torch-2.{minor}.0.json.gz" for minor in range(5, 12)} <= set(names)
