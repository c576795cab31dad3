"""The atlases bundled with release-watch (``config/atlases/``, built from the real wheels by
``scripts/build_atlases.py``): they load, and their diffs hold what the real releases changed."""

from __future__ import annotations

from functools import cache

import pytest

from watcher.impact.atlas import FORMAT, ApiChange, Atlas, diff, loads
from watcher.impact.atlas.source import bundled_dir, bundled_path

VERSIONS = ["2.5.0", "2.6.0", "2.7.0", "2.8.0", "2.9.0", "2.10.0", "2.11.0", "2.12.0", "2.13.0",
            "2.14.1", "2.15.0"]
XLA_VERSIONS = ["2.1.0", "2.2.0", "2.3.0", "2.4.0", "2.5.0", "2.6.0", "2.7.0", "2.8.0", "2.9.0"]


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
        found = next(c for c in changes("2.13.0", "2.14.1") if c.api == name)
        assert found.change == "removed" and found.raises  # dead for callers, though there
        assert bundled("2.14.1").resolve(name) is not None  # the name is still there


def test_2_14_keeps_function_apply_a_class_body_assignment() -> None:
    """``apply = _C._FunctionBase.__dict__["apply"]`` in ``torch.autograd.Function``."""
    assert bundled("2.14.1").resolve("torch.autograd.Function.apply") is not None
    assert not [c for c in changes("2.13.0", "2.14.1") if "Function.apply" in c.api]


def test_2_14_removes_nothing_a_module_getattr_still_serves() -> None:
    """``torch.utils.mkldnn.MkldnnLinear`` is built by the module's ``__getattr__`` in 2.14."""
    assert not [c for c in changes("2.13.0", "2.14.1") if "mkldnn.Mkldnn" in c.api]


def test_every_2_14_removal_is_gone_or_only_raises() -> None:
    """The 2.14.1 atlas (the wheel's source) agrees with each removal the diff lists: the
    name is not there, or it is a function whose body only raises."""
    new = bundled("2.14.1")
    removals = [c for c in changes("2.13.0", "2.14.1") if c.change == "removed"]
    assert len(removals) >= 8
    for change in removals:
        for name in (change.api, *change.names):
            assert not new.spells(name) or new.raises(new.resolve(name) or "") is not None, name


@pytest.mark.parametrize("version", XLA_VERSIONS)
def test_each_bundled_torch_xla_atlas_loads(version: str) -> None:
    atlas = loads(bundled_path("torch_xla", version).read_bytes())
    assert (atlas.package, atlas.version) == ("torch_xla", version)
    assert atlas.resolve("torch_xla.core.xla_model.mark_step") is not None


def test_torch_xla_deprecation_wrappers_are_announced_then_removed() -> None:
    """``xrt_world_size = deprecated(this_module, ..., 'xrt_world_size() will be removed in
    release 2.7.')``: deprecated in the 2.5.0 diff, removed in the 2.7.0 one."""
    from watcher.impact.atlas.bundled_diffs import bundled_diff

    marked = bundled_diff("torch_xla", "2.4.0", "2.5.0") or []
    gone = bundled_diff("torch_xla", "2.6.0", "2.7.0") or []
    name = "torch_xla.core.xla_model.xrt_world_size"
    assert any(c.api == name and c.change == "deprecated"
               and c.new == "xrt_world_size() will be removed in release 2.7." for c in marked)
    assert any(c.api == name and c.change == "removed" for c in gone)


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
    for package in ("torch", "torch_xla"):
        for version in source.versions(package):
            after, before = source.known(package, version), source.before(package, version)
            if before is None or after is None:
                continue
            bundled = bundled_diff(package, before.version, after.version)
            assert bundled == diff(before, after), f"{package} {before.version} -> " \
                f"{version}: run scripts/build_atlases.py --diffs --package {package}"
            checked += 1
    assert checked == len(VERSIONS) - 1 + len(XLA_VERSIONS) - 1


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
