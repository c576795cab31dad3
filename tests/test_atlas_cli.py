"""``release-watch atlas build`` and ``atlas diff``, run as the CLI runs them: wheels built in
the test, the store in a temporary directory, the package index a loopback fake."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from atlas_support import write_wheel
from conftest import Result
from fakes.pypi import FakePackageIndex

from watcher.impact.atlas import build_atlas, dumps
from watcher.store import Store

Run = Callable[..., Result]


def _nothing_listening() -> str:
    """The address of a loopback server that was stopped: connections are refused."""
    with FakePackageIndex() as gone:
        return gone.url


def _config(tmp_path: Path, index: str | None = None) -> Path:
    index = index or _nothing_listening()
    path = tmp_path / "release-watch.toml"
    path.write_text(f'[store]\npath = "{tmp_path / "store"}"\n\n'
                    f'[impact]\npackage_index = "{index}"\n', encoding="utf-8")
    return path


def test_build_a_wheel_keeps_it_in_the_store_and_says_what_it_holds(tmp_path: Path,
                                                                    run_cli: Run) -> None:
    wheel = write_wheel(tmp_path, "2.6.0")
    result = run_cli("atlas", "build", str(wheel), "--config", str(_config(tmp_path)))
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"torch 2.6.0: built from {wheel.name}"
    assert "public modules" in lines[1] and "3 APIs carrying" not in lines[2]
    store = Store.open(tmp_path / "store")
    try:
        assert store.atlas_versions("torch") == ["2.6.0"]
    finally:
        store.close()


def test_build_a_version_fetches_it_from_the_index(tmp_path: Path, run_cli: Run) -> None:
    with FakePackageIndex() as index:
        index.add("torch", "2.17.0", "torch-2.17.0-py3-none-any.whl",
                  write_wheel(tmp_path, "2.17.0").read_bytes())
        config = str(_config(tmp_path, index.url))
        fetched = run_cli("atlas", "build", "2.17.0", "--config", config)
        again = run_cli("atlas", "build", "2.17.0", "--config", config)
        missing = run_cli("atlas", "build", "2.16.0", "--config", config)
        url = index.url
    assert fetched.code == 0, fetched.stderr
    assert fetched.stdout.startswith("torch 2.17.0: fetched from the package index and built\n")
    assert again.stdout.startswith("torch 2.17.0: from the store\n")
    assert (missing.code, missing.stdout) == (1, "")
    assert missing.stderr.strip().splitlines() == [
        f"release-watch: torch 2.16.0 is not on {url} yet"]


def test_build_a_bundled_version_needs_no_network(tmp_path: Path, run_cli: Run) -> None:
    result = run_cli("atlas", "build", "2.7.0", "--config", str(_config(tmp_path)))
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("torch 2.7.0: bundled with release-watch\n")


def test_diff_two_wheels_as_json(tmp_path: Path, run_cli: Run) -> None:
    old, new = write_wheel(tmp_path, "2.6.0"), write_wheel(tmp_path, "2.7.0")
    result = run_cli("atlas", "diff", str(old), str(new), "--format", "json",
                     "--config", str(_config(tmp_path)))
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert list(document) == ["changes"]
    assert {"api": "torch.optim.lr_scheduler.ReduceLROnPlateau", "change": "parameter_removed",
            "parameter": "verbose", "old": None, "new": None} in document["changes"]
    assert {"api": "torch.onnx.export", "change": "default_changed", "parameter": "optimize",
            "old": "False", "new": "True"} in document["changes"]
    load = next(c for c in document["changes"] if c["api"] == "torch.load")
    assert load["names"] == ["torch.serialization.load"]
    assert not (tmp_path / "store").exists()  # two wheels: no store needed


def test_diff_as_text_groups_changes_by_kind(tmp_path: Path, run_cli: Run) -> None:
    old, new = write_wheel(tmp_path, "2.6.0"), write_wheel(tmp_path, "2.17.0")
    built = run_cli("atlas", "build", str(new), "--config", str(_config(tmp_path)))
    assert built.code == 0
    atlas_file = tmp_path / "old.json.gz"
    atlas_file.write_bytes(dumps(build_atlas(old)))
    result = run_cli("atlas", "diff", str(atlas_file), "2.17.0", "--config",
                     str(_config(tmp_path)))  # an atlas file, and a version from the store
    lines = result.stdout.splitlines()
    assert lines[0] == "torch 2.6.0 -> 2.17.0: 16 API changes"
    assert "parameter removed (4)" in lines
    assert "  torch.optim.lr_scheduler.StepLR(verbose=)" in lines
    assert "  torch.onnx.export(dynamo=): False -> True" in lines
    heads = [line for line in lines if line and not line.startswith(" ")][1:]
    assert heads == ["removed (3)", "parameter removed (4)", "keyword only (2)",
                     "default changed (3)", "deprecated (4)"]


@pytest.mark.slow
def test_diff_of_the_bundled_releases_is_offline(tmp_path: Path, run_cli: Run) -> None:
    result = run_cli("atlas", "diff", "2.6.0", "2.7.0", "--format", "json", "--config",
                     str(_config(tmp_path)))
    assert result.code == 0, result.stderr
    changes = json.loads(result.stdout)["changes"]
    assert {"api": "torch.optim.lr_scheduler.StepLR", "change": "parameter_removed",
            "parameter": "verbose", "old": None, "new": None} in changes


@pytest.mark.slow
def test_the_diff_of_two_bundled_releases_is_read_not_computed(
        tmp_path: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bundled beside the atlases for every pair (held to a fresh diff by
    ``test_atlas_bundled`` and ``test_atlas_span``): read for two bundled versions, near or
    far apart; an atlas given as a file is diffed whole; a bundled pair whose diff is missing
    over the APIs the bundled diffs between them name (``span_diff``); the changes are the
    same every way."""
    import watcher.cli.commands.atlas as command
    from watcher.impact.atlas.source import bundled_path

    computed: list[tuple[str, str]] = []
    spanned: list[tuple[str, str]] = []
    real, span, bundled = command.diff, command.span_diff, command.bundled_diff
    monkeypatch.setattr(command, "diff", lambda old, new: computed.append(
        (old.version, new.version)) or real(old, new))
    monkeypatch.setattr(command, "span_diff", lambda old, new: spanned.append(
        (old.version, new.version)) or span(old, new))
    config = str(_config(tmp_path))
    copy = tmp_path / "mine.json.gz"
    copy.write_bytes(bundled_path("torch", "2.6.0").read_bytes())
    read = run_cli("atlas", "diff", "2.6.0", "2.7.0", "--format", "json", "--config", config)
    diffed = run_cli("atlas", "diff", str(copy), "2.7.0", "--format", "json", "--config", config)
    apart = run_cli("atlas", "diff", "2.5.0", "2.7.0", "--format", "json", "--config", config)
    assert (read.code, diffed.code, apart.code) == (0, 0, 0)
    assert computed == [("2.6.0", "2.7.0")] and spanned == []
    assert read.stdout == diffed.stdout and json.loads(read.stdout)["changes"]
    monkeypatch.setattr(command, "bundled_diff", lambda package, old, new: None
                        if (old, new) == ("2.5.0", "2.7.0") else bundled(package, old, new))
    missing = run_cli("atlas", "diff", "2.5.0", "2.7.0", "--format", "json", "--config", config)
    assert missing.code == 0 and spanned == [("2.5.0", "2.7.0")]
    assert missing.stdout == apart.stdout and json.loads(apart.stdout)["changes"]


@pytest.mark.parametrize(("args", "code", "message"), [
    (("diff", "2.6.0", "not-a-version"), 2, "'not-a-version' is neither a file nor a version"),
    (("diff", "2.6.0", "missing.whl"), 2, "missing.whl: no such file"),
    (("diff", "2.6.0"), 2, "Missing argument 'NEW'"),
    (("build", "2.99.0"), 1, "cannot connect"),
])
def test_errors_are_one_line(tmp_path: Path, run_cli: Run, args: tuple[str, ...], code: int,
                             message: str) -> None:
    result = run_cli("atlas", *args, "--config", str(_config(tmp_path)))
    assert result.code == code
    assert message in result.stderr
    assert "Traceback" not in result.stderr
