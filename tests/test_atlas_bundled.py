"""The atlases bundled with release-watch (``config/atlases/``, built from the real wheels by
``scripts/build_atlases.py``): they load, and their diffs hold what the real releases changed."""

from __future__ import annotations

from functools import cache

import pytest

from watcher.impact.atlas import FORMAT, ApiChange, Atlas, diff, loads
from watcher.impact.atlas.source import bundled_dir, bundled_path

VERSIONS = ["2.5.0", "2.6.0", "2.7.0", "2.8.0", "2.9.0", "2.10.0", "2.11.0", "2.13.0", "2.14.1"]


@cache
def bundled(version: str) -> Atlas:
    return loads(bundled_path("torch", version).read_bytes())


@cache
def changes(old: str, new: str) -> list[ApiChange]:
    return diff(bundled(old), bundled(new))


def _has(old: str, new: str, api: str, change: str, parameter: str | None = None,
         values: tuple[str | None, str | None] = (None, None)) -> bool:
    return any((c.api, c.change, c.parameter) == (api, change, parameter)
               and (c.change != "default_changed" or (c.old, c.new) == values)
               for c in changes(old, new))


@pytest.mark.slow
@pytest.mark.parametrize("version", VERSIONS)
def test_each_bundled_atlas_loads_and_is_small(version: str) -> None:
    path = bundled_path("torch", version)
    assert path.stat().st_size < 160_000  # ~140 KB; the guard against a format that bloats
    atlas = bundled(version)
    assert atlas.version == version and atlas.package == "torch"
    assert atlas.resolve("torch.nn.Linear") == "torch.nn.modules.linear.Linear"
    assert atlas.resolve("torch.Tensor") == "torch._tensor.Tensor"
    assert atlas.resolve("torch.load") is not None
    assert len(atlas.subclasses("torch.optim.lr_scheduler.LRScheduler")) >= 16


def test_every_bundled_file_is_of_this_format() -> None:
    import gzip
    import json

    for path in bundled_dir().glob("*.json.gz"):
        header = gzip.decompress(path.read_bytes()).partition(b"\n")[0]
        assert json.loads(header)["format"] == FORMAT, path.name


@pytest.mark.slow
@pytest.mark.parametrize("scheduler", ["ReduceLROnPlateau", "StepLR", "LRScheduler",
                                       "CosineAnnealingLR", "OneCycleLR"])
def test_2_7_removes_verbose_from_the_schedulers(scheduler: str) -> None:
    assert _has("2.6.0", "2.7.0", f"torch.optim.lr_scheduler.{scheduler}", "parameter_removed",
                "verbose")


def test_2_7_removes_print_lr_from_every_scheduler() -> None:
    found = next(c for c in changes("2.6.0", "2.7.0")
                 if c.api == "torch.optim.lr_scheduler.LRScheduler.print_lr")
    assert found.change == "removed"
    assert "torch.optim.lr_scheduler.ReduceLROnPlateau.print_lr" in found.names


def test_2_7_flips_the_default_of_onnx_export_optimize() -> None:
    assert _has("2.6.0", "2.7.0", "torch.onnx.export", "default_changed", "optimize",
                ("False", "True"))


@pytest.mark.slow
def test_2_9_flips_onnx_export_dynamo_and_removes_dynamo_export() -> None:
    assert _has("2.8.0", "2.9.0", "torch.onnx.export", "default_changed", "dynamo",
                ("False", "True"))
    assert _has("2.8.0", "2.9.0", "torch.onnx.dynamo_export", "removed")


@pytest.mark.slow
def test_2_14_removes_cholesky_and_qr_left_as_stubs_that_raise() -> None:
    for name in ("torch.cholesky", "torch.qr"):
        assert _has("2.13.0", "2.14.1", name, "removed")
        assert bundled("2.14.1").resolve(name) is not None  # the name is still there


def test_a_release_diffed_with_itself_has_no_change() -> None:
    assert changes("2.9.0", "2.9.0") == []


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_each_bundled_diff_is_the_diff_of_its_bundled_atlases():
    """The diffs are bundled so an ``impact`` run need not compute them (0.4-0.5 s each):
    each must be what ``diff`` gives now (``scripts/build_atlases.py --diffs`` writes them)."""
    from watcher.impact.atlas import AtlasSource, diff
    from watcher.impact.atlas.bundled_diffs import bundled_diff

    source = AtlasSource(store=None, index=None, clock=lambda: None)  # type: ignore[arg-type]
    checked = 0
    for version in source.versions("torch"):
        after, before = source.known("torch", version), source.before("torch", version)
        if before is None or after is None:
            continue
        bundled = bundled_diff("torch", before.version, after.version)
        assert bundled == diff(before, after), f"{before.version} -> {version}: run " \
            "scripts/build_atlases.py --diffs"
        checked += 1
    assert checked >= 7


def test_the_bundled_short_names_are_those_of_the_newest_atlas():
    """``config/atlases/names.json`` (``scripts/build_atlases.py --names``): the classifier's
    short names, which must follow the newest bundled atlas and ``config/apis.toml``."""
    import json

    from watcher.impact.atlas.short_names import short_names
    from watcher.notes.taxonomy import builtin_taxonomy
    from watcher.resources import short_names_path

    written = json.loads(short_names_path().read_text(encoding="utf-8"))
    assert written["from"] == f"torch {VERSIONS[-1]}"
    assert written["names"] == short_names(bundled(VERSIONS[-1]), builtin_taxonomy().apis.owner), \
        "run scripts/build_atlases.py --names"
    names = written["names"]
    assert names["fully_shard"] == "torch.distributed.fsdp.fully_shard"
    assert names["ReduceLROnPlateau"] == "torch.optim.lr_scheduler.ReduceLROnPlateau"
    assert "load" not in names and "export" not in names  # several APIs: no one of them
