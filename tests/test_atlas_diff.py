"""The diff of two atlases of the small torch (``atlas_support``): what it reports, for each
class and every subclass, and what it does not (moves, added parameters)."""

from __future__ import annotations

from pathlib import Path

import pytest
from atlas_support import V1, write_wheel

import watcher.impact.atlas.table as table
from watcher.impact.atlas import (
    ApiChange,
    Atlas,
    build_atlas,
    bundled_diff,
    bundled_dir,
    diff,
    dumps,
    loads,
)


@pytest.fixture(scope="module")
def changes(tmp_path_factory: pytest.TempPathFactory) -> list[ApiChange]:
    folder = tmp_path_factory.mktemp("wheels")
    return diff(build_atlas(write_wheel(folder, "2.6.0")),
                build_atlas(write_wheel(folder, "2.7.0")))


def _find(changes: list[ApiChange], api: str, change: str,
          parameter: str | None = None) -> ApiChange | None:
    return next((c for c in changes if (c.api, c.change, c.parameter) == (api, change, parameter)),
                None)


@pytest.mark.parametrize("scheduler", ["LRScheduler", "StepLR", "ReduceLROnPlateau",
                                       "ExponentialLR"])  # the last inherits the base's
def test_a_removed_parameter_is_reported_for_every_scheduler(changes: list[ApiChange],
                                                              scheduler: str) -> None:
    found = _find(changes, f"torch.optim.lr_scheduler.{scheduler}", "parameter_removed",
                  "verbose")
    assert found is not None
    assert found.to_json_dict() == {"api": f"torch.optim.lr_scheduler.{scheduler}",
                                    "change": "parameter_removed", "parameter": "verbose",
                                    "old": None, "new": None}


def test_a_removed_method_names_the_base_and_every_subclass(changes: list[ApiChange]) -> None:
    found = _find(changes, "torch.optim.lr_scheduler.LRScheduler.print_lr", "removed")
    assert found is not None
    assert set(found.names) == {f"torch.optim.lr_scheduler.{name}.print_lr"
                                for name in ("StepLR", "ExponentialLR", "ReduceLROnPlateau")}


def test_changed_defaults_give_old_and_new_as_source_text(changes: list[ApiChange]) -> None:
    export = [c for c in changes if c.api == "torch.onnx.export"]
    assert [(c.change, c.parameter, c.old, c.new) for c in export] == [
        ("default_changed", "dynamo", "False", "True"),
        ("default_changed", "optimize", "False", "True")]
    load = _find(changes, "torch.load", "default_changed", "weights_only")
    assert load is not None and load.names == ("torch.serialization.load",)
    assert (load.old, load.new) == ("False", "True")


def test_a_parameter_made_keyword_only(changes: list[ApiChange]) -> None:
    assert _find(changes, "torch.nn.functional.pad", "keyword_only", "mode") is not None
    assert _find(changes, "torch.nn.functional.pad", "keyword_only", "pad") is None


def test_removed_names_and_a_function_left_only_to_raise(changes: list[ApiChange]) -> None:
    assert _find(changes, "torch.old_fn", "removed") is not None
    stub = _find(changes, "torch.cholesky", "removed")
    assert stub is not None and stub.new is not None and "now removed" in stub.new


def test_a_name_that_moved_but_is_spelled_the_same_is_not_removed(changes: list[ApiChange]
                                                                   ) -> None:
    # torch.load moved from torch.serialization to torch._serialization_impl
    assert not any(c.change == "removed" and "load" in c.api for c in changes)
    assert _find(changes, "torch.qr", "removed") is None


@pytest.mark.parametrize(("api", "parameter", "message"), [
    ("torch.onnx.dynamo_export", None, "torch.onnx.dynamo_export is deprecated since 2.7.0."),
    ("torch.nn.functional.norm", None, "`torch.nn.functional.norm` is deprecated"),
    ("torch.contrib", None, "torch.contrib is deprecated"),
    ("torch.set_flag", "legacy", "legacy= is deprecated and ignored"),
], ids=["warnings.warn", "@deprecated", "module", "parameter"])
def test_new_deprecation_markers(changes: list[ApiChange], api: str, parameter: str | None,
                                 message: str) -> None:
    found = _find(changes, api, "deprecated", parameter)
    assert found is not None and found.new is not None and found.new.startswith(message)


def test_a_deprecated_module_is_one_change_not_one_per_name(changes: list[ApiChange]) -> None:
    assert _find(changes, "torch.contrib.helper", "deprecated") is None


def test_nothing_else_and_nothing_twice(changes: list[ApiChange]) -> None:
    assert len(changes) == len(set(changes)) == 16
    assert [c.change for c in changes] == sorted(
        (c.change for c in changes),
        key=["removed", "parameter_removed", "keyword_only", "positional_only",
             "default_changed", "default_removed", "required_parameter_added",
             "parameter_moved", "deprecated"].index)


def _atlas(tmp_path: Path, version: str, **replaced: str) -> Atlas:
    return build_atlas(write_wheel(tmp_path, version, {**V1, **replaced}))


def test_added_parameters_break_only_when_required(tmp_path: Path) -> None:
    before = _atlas(tmp_path, "2.6.0")
    after = _atlas(tmp_path, "2.7.0", **{"torch/nn/functional.py": (
        "def pad(input, pad, mode='constant', value=None, *, extra=0):\n    return input\n"
        "def norm(input, p='fro', dim=None, *, out):\n    return input\n")})
    found = {(c.api, c.change, c.parameter) for c in diff(before, after)}
    assert found == {("torch.nn.functional.norm", "required_parameter_added", "out")}


def test_a_parameter_inserted_before_others_moves_the_first_of_them(tmp_path: Path) -> None:
    # cpp_extension.load in 2.7: extra_sycl_cflags inserted before extra_ldflags. A call
    # passing five or more arguments by position hands them to other parameters.
    before = _atlas(tmp_path, "2.6.0")
    after = _atlas(tmp_path, "2.7.0", **{"torch/nn/functional.py": (
        "def pad(input, pad, fill=None, mode='constant', value=None):\n    return input\n"
        "def norm(input, p='fro'):\n    return input\n")})
    found = {(c.api, c.change, c.parameter, c.old, c.new) for c in diff(before, after)}
    assert found == {("torch.nn.functional.pad", "parameter_moved", "mode", "3", "4")}


def test_a_compiled_functions_stub_order_is_no_move(tmp_path: Path) -> None:
    # torch.randint_like: its stub's overloads merged in first-seen order, which changed.
    stub = ("from typing import overload\n"
            "@overload\ndef randint_like(input, {first}): ...\n"
            "@overload\ndef randint_like(input, low, high): ...\n")
    stubs = "torch/_C/_VariableFunctions.pyi"  # star-imported by torch/__init__.py
    before = _atlas(tmp_path, "2.6.0", **{stubs: stub.format(first="high")})
    after = _atlas(tmp_path, "2.7.0", **{stubs: stub.format(first="low")})
    assert before.resolve("torch.randint_like") == "torch._C._VariableFunctions.randint_like"
    assert not [c for c in diff(before, after) if c.change == "parameter_moved"]


def test_a_default_removed_and_positional_only(tmp_path: Path) -> None:
    before = _atlas(tmp_path, "2.6.0")
    after = _atlas(tmp_path, "2.7.0", **{"torch/nn/functional.py": (
        "def pad(input, pad, /, mode='constant', value=None):\n    return input\n"
        "def norm(input, p):\n    return input\n")})
    found = {(c.api, c.change, c.parameter, c.old) for c in diff(before, after)}
    assert found == {("torch.nn.functional.pad", "positional_only", "pad", None),
                     ("torch.nn.functional.pad", "positional_only", "input", None),
                     ("torch.nn.functional.norm", "default_removed", "p", "'fro'")}


def test_a_removed_module_is_one_change(tmp_path: Path) -> None:
    before = _atlas(tmp_path, "2.6.0")
    files = {name: text for name, text in V1.items() if name != "torch/contrib.py"}
    after = build_atlas(write_wheel(tmp_path, "2.7.0", files))
    assert [(c.api, c.change) for c in diff(before, after)] == [("torch.contrib", "removed")]


def test_the_same_release_has_no_changes(tmp_path: Path) -> None:
    assert diff(_atlas(tmp_path, "2.6.0"), _atlas(tmp_path, "2.6.0")) == []


def test_a_name_dropped_from_all_but_still_imported_is_not_removed(tmp_path: Path) -> None:
    before = _atlas(tmp_path, "2.6.0", **{"torch/types.py": (
        "from torch import Tensor as Tensor\n__all__ = ['Number']\nNumber = int\n")})
    after = _atlas(tmp_path, "2.7.0", **{"torch/types.py": (
        "from torch import Tensor\n__all__ = ['Number']\nNumber = int\n")})
    assert before.resolve("torch.types.Tensor") == "torch._tensor.Tensor"
    assert after.resolve("torch.types.Tensor") is None and after.spells("torch.types.Tensor")
    assert loads(dumps(after)).spells("torch.types.Tensor")
    assert diff(before, after) == []
    gone = _atlas(tmp_path, "2.8.0", **{"torch/types.py": "__all__ = ['Number']\nNumber = int\n"})
    assert [(c.api, c.change) for c in diff(before, gone)] == [("torch.types.Tensor", "removed")]



def test_a_diff_of_two_releases_passes_over_what_did_not_change(monkeypatch) -> None:
    """Most of a release's functions and methods are stored as the same row as in the release
    before: the diff passes over them without decoding either (the bundled 2.6 -> 2.7 decoded
    ~23,800 rows before, of ~25,000), and finds the same changes as reading every one."""
    decoded = []
    real = table.decode

    def counted(row: list) -> object:
        decoded.append(row)
        return real(row)

    monkeypatch.setattr(table, "decode", counted)
    before, after = (loads((bundled_dir() / f"torch-{v}.json.gz").read_bytes())
                     for v in ("2.6.0", "2.7.0"))
    assert diff(before, after) == bundled_diff("torch", "2.6.0", "2.7.0")
    assert len(decoded) < 15_000
