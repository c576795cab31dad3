"""The atlas of a wheel built in the test (``atlas_support``): names resolved through
re-exports, star imports and private modules, parameters and overloads, bases and subclasses,
deprecation markers; and its file form."""

from __future__ import annotations

import gzip
import json
import zipfile
from pathlib import Path

import pytest
from atlas_support import V1, V2, write_wheel

from watcher.impact.atlas import (
    FORMAT,
    Atlas,
    Param,
    WheelUnreadable,
    build_atlas,
    dumps,
    loads,
    wheel_version,
)


@pytest.fixture(scope="module")
def old(tmp_path_factory: pytest.TempPathFactory) -> Atlas:
    return build_atlas(write_wheel(tmp_path_factory.mktemp("wheels"), "2.6.0"))


@pytest.fixture(scope="module")
def new(tmp_path_factory: pytest.TempPathFactory) -> Atlas:
    return build_atlas(write_wheel(tmp_path_factory.mktemp("wheels"), "2.7.0"))


@pytest.mark.parametrize(("name", "canonical"), [
    ("torch.Tensor", "torch._tensor.Tensor"),             # public name of a private module's
    ("torch.load", "torch.serialization.load"),           # from .serialization import load
    ("torch.cholesky", "torch._C._VariableFunctions.cholesky"),  # star import of a stub
    ("torch.nn.Linear", "torch.nn.modules.linear.Linear"),  # star import of a package
    ("torch.optim.SGD", "torch.optim.sgd.SGD"),
    ("torch.optim.lr_scheduler.StepLR", "torch.optim.lr_scheduler.StepLR"),
    ("torch.optim.lr_scheduler", "torch.optim.lr_scheduler"),  # a module
    ("torch.Tensor.add", "torch._C.TensorBase.add"),      # a method, inherited
    ("torch.optim.lr_scheduler.ExponentialLR.print_lr",
     "torch.optim.lr_scheduler.LRScheduler.print_lr"),   # through a private intermediate class
], ids=lambda value: value if "." in value and value.count(".") < 3 else None)
def test_names_users_write_resolve_to_where_the_api_is_defined(old: Atlas, name: str,
                                                                canonical: str) -> None:
    assert old.resolve(name) == canonical


@pytest.mark.parametrize("name", [
    "torch._tensor.Tensor",          # a private module is not public API
    "torch._private_op",             # a private name, even from a star import
    "torch.optim.lr_scheduler._Smooth",
    "torch.nn.modules.linear.Module",  # an import of a module that is not a package: its own
    "torch.warnings",                # outside the package
    "torch.nothing",
    "torch.Tensor.nothing",
])
def test_private_foreign_and_unknown_names_are_not_public(old: Atlas, name: str) -> None:
    assert name not in old.names
    if name != "torch._tensor.Tensor":
        assert old.resolve(name) is None


def test_every_name_of_an_api_is_known_shortest_first(old: Atlas) -> None:
    assert old.names_of("torch.serialization.load") == ["torch.load", "torch.serialization.load"]
    assert old.public_name("torch.nn.modules.linear.Linear") == "torch.nn.Linear"
    method = old.names_of("torch.optim.lr_scheduler.LRScheduler.print_lr")
    assert "torch.optim.lr_scheduler.ReduceLROnPlateau.print_lr" in method
    assert len(method) == 4  # the base and its three public subclasses


def test_parameters_keep_kinds_and_defaults_as_source_text(old: Atlas) -> None:
    assert old.signature("torch.serialization.load") == (
        Param("f"), Param("map_location", default="None"),
        Param("weights_only", "keyword_only", "False"),
        Param("pickle_load_args", "var_keyword"))
    assert old.signature(old.resolve("torch.onnx.dynamo_export") or "") == (
        Param("model"), Param("model_args", "var_positional"),
        Param("export_options", "keyword_only", "None"), Param("model_kwargs", "var_keyword"))
    # a method's first parameter (self) is left out; a class's are its constructor's
    assert old.signature("torch._C.TensorBase.add") == (Param("other"),
                                                         Param("alpha", "keyword_only", "1"))
    assert old.signature("torch.optim.lr_scheduler.StepLR")[-1] == Param(  # type: ignore[index]
        "verbose", default="'deprecated'")


def test_a_constructor_is_inherited_through_an_intermediate_class(old: Atlas) -> None:
    assert old.signature("torch.optim.lr_scheduler.ExponentialLR") == old.signature(
        "torch.optim.lr_scheduler.LRScheduler")


def test_overloads_merge_into_one_signature(old: Atlas) -> None:
    # cholesky(input, upper=False) | cholesky(input, upper=False, *, out=None)
    assert old.signature("torch._C._VariableFunctions.cholesky") == (
        Param("input"), Param("upper", default="False"),
        Param("out", "keyword_only", "..."))  # not in every variant: not required
    # view(dtype) | view(*size): both possible, neither required
    assert old.signature("torch._C.TensorBase.view") == (
        Param("dtype", default="..."), Param("size", "var_positional", "..."))


def test_subclasses_are_known_transitively(old: Atlas) -> None:
    assert old.subclasses("torch.optim.lr_scheduler.LRScheduler") == [
        "torch.optim.lr_scheduler.ExponentialLR", "torch.optim.lr_scheduler.ReduceLROnPlateau",
        "torch.optim.lr_scheduler.StepLR", "torch.optim.lr_scheduler._Smooth"]
    assert old.bases("torch._tensor.Tensor") == ("torch._C.TensorBase",)
    assert old.bases("torch.nn.modules.linear.Linear") == ("torch.nn.modules.module.Module",)
    assert old.kind("torch._C.TensorBase.shape") == "property"


def test_deprecation_markers_of_every_kind(new: Atlas, old: Atlas) -> None:
    assert new.deprecated("torch.onnx.dynamo_export") == (
        "torch.onnx.dynamo_export is deprecated since 2.7.0. Please use "
        "torch.onnx.export(..., dynamo=True) instead of {model}.")  # warnings.warn(category=)
    assert new.deprecated("torch.nn.functional.norm") == (
        "`torch.nn.functional.norm` is deprecated, use `torch.linalg.norm`")  # @deprecated
    assert new.deprecated("torch.contrib") == "torch.contrib is deprecated"  # module level
    assert new.deprecated("torch.contrib.helper") == "torch.contrib is deprecated"
    assert new.deprecated("torch.contrib.helper", module=False) is None
    # warned only when the parameter is passed: the parameter is deprecated, not the function
    assert new.deprecated("torch.set_flag") is None
    assert new.deprecated_params("torch.set_flag") == {
        "legacy": "legacy= is deprecated and ignored"}
    assert old.deprecated("torch.onnx.dynamo_export") is None


def test_a_function_left_only_to_raise_says_so(new: Atlas) -> None:
    canonical = new.resolve("torch.cholesky")
    assert canonical == "torch._linalg_utils.cholesky"
    assert new.raises(canonical) == ("This function was deprecated since version 1.9 and is "
                                     "now removed. Use torch.linalg.cholesky.")
    assert new.raises("torch.optim.optimizer.Optimizer.step") is None  # NotImplementedError


def test_module_of_an_api(old: Atlas) -> None:
    assert old.module_of("torch.Tensor") == "torch._tensor"
    assert old.module_of("torch.optim.lr_scheduler.StepLR.step") == "torch.optim.lr_scheduler"
    assert old.module_of("torch.optim") == "torch.optim"
    assert old.module_of("torch.nothing") is None


def test_the_file_form_round_trips_small_and_versioned(old: Atlas, new: Atlas) -> None:
    for atlas in (old, new):
        data = dumps(atlas)
        back = loads(data)
        assert dict(back.names) == dict(atlas.names)
        assert {name: back.apis[name] for name in back.apis} == dict(atlas.apis)
        assert dict(back.bound) == dict(atlas.bound)
        assert back.version == atlas.version and back.package == "torch"
        assert len(data) < 3_000  # this small package; a torch release is ~120 KB
        assert dumps(back) == data  # the same atlas, the same bytes
    assert json.loads(gzip.decompress(dumps(old)).partition(b"\n")[0])["format"] == FORMAT


def test_an_atlas_of_another_format_or_none_is_refused() -> None:
    with pytest.raises(WheelUnreadable, match="format 99"):
        loads(gzip.compress(b'{"format": 99}'), origin="x.json.gz")
    with pytest.raises(WheelUnreadable, match="not an API atlas"):
        loads(b"not gzip", origin="x.json.gz")


def test_the_version_is_the_wheels_own_without_a_local_label(tmp_path: Path) -> None:
    path = write_wheel(tmp_path, "2.13.0+cpu", V2)
    assert wheel_version(path) == "2.13.0"
    assert build_atlas(path).version == "2.13.0"


def test_the_python_and_the_packages_the_wheel_requires_are_kept(tmp_path: Path) -> None:
    path = write_wheel(tmp_path, "2.9.0", V2, headers=(
        "Requires-Python: >=3.10\nRequires-Dist: filelock\n"
        'Requires-Dist: triton==3.5.0; platform_system == "Linux"\n'
        "Description-Content-Type: text/markdown\n"))
    atlas = build_atlas(path)
    assert atlas.requires_python == ">=3.10"
    assert atlas.requires == ("filelock", 'triton==3.5.0; platform_system == "Linux"')
    back = loads(dumps(atlas))
    assert (back.requires_python, back.requires) == (atlas.requires_python, atlas.requires)


def test_an_atlas_from_a_wheel_stating_no_requirements_keeps_its_bytes(old: Atlas) -> None:
    # The headers are written only where the wheel states them: atlases built before they
    # were read load as requiring nothing known, and dump to the bytes they had.
    assert (old.requires_python, old.requires) == ("", ())
    header = json.loads(gzip.decompress(dumps(old)).partition(b"\n")[0])
    assert "requires_python" not in header and "requires" not in header


def test_a_file_that_is_not_a_wheel_of_the_package_is_one_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.whl"
    junk.write_bytes(b"no zip")
    with pytest.raises(WheelUnreadable, match="not a readable wheel"):
        build_atlas(junk)
    with pytest.raises(WheelUnreadable, match="no package 'torch_xla'"):
        build_atlas(write_wheel(tmp_path, "2.6.0", V1), "torch_xla")


def test_another_package_of_the_wheel_is_read_by_its_name(tmp_path: Path) -> None:
    path = tmp_path / "torch_xla-2.7.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("torch_xla/__init__.py", "from ._internal import device\n")
        archive.writestr("torch_xla/_internal.py", "def device(index=None):\n    return index\n")
        archive.writestr("torch_xla/core/xla_model.py", "def xla_device(n=None, devkind=None):"
                                                       "\n    return n\n")
        archive.writestr("torch_xla-2.7.0.dist-info/METADATA", "Name: torch_xla\n"
                                                                "Version: 2.7.0\n\n")
    atlas = build_atlas(path, "torch_xla")
    assert (atlas.package, atlas.version) == ("torch_xla", "2.7.0")
    assert atlas.resolve("torch_xla.device") == "torch_xla._internal.device"
    assert atlas.signature("torch_xla.core.xla_model.xla_device") == (
        Param("n", default="None"), Param("devkind", default="None"))


def test_source_that_does_not_parse_holds_nothing_and_stops_nothing(tmp_path: Path) -> None:
    files = {**V1, "torch/broken.py": "def (:\n", "torch/templates/not-a-module.py": "x = 1\n"}
    atlas = build_atlas(write_wheel(tmp_path, "2.6.0", files))
    assert "torch.broken" in atlas.names and atlas.resolve("torch.load") is not None
    with zipfile.ZipFile(write_wheel(tmp_path, "2.6.0", files)) as archive:
        assert "torch/templates/not-a-module.py" in archive.namelist()
    assert not any("not-a-module" in name for name in atlas.names)
