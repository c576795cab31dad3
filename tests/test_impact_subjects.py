"""The text side of the impact analysis: which APIs (and environment requirements) a
BC-breaking or deprecation item changes, read from its own words, never the replacement it
recommends.

The table runs over the real BC-breaking and deprecation items of the 2.5 and 2.7-2.11 notes;
each row names its item by a distinctive piece of its first line and the exact subjects it must
read, written compactly:
``"api"`` (any use), ``"api [namespace]"``, ``"api [method]"``, ``"api passes opt"`` (a call
passing ``opt``), ``"api omits opt"`` (a call leaving a flipped default), and environment
labels (``"python>=3.10"``, ``"cuda 12.4"``).
"""

from __future__ import annotations

from functools import cache

import pytest
from conftest import release_notes

from watcher.impact.model import EnvironmentSubject, Subject, Subjects
from watcher.impact.subjects import read_subjects
from watcher.models import ClassifiedItem
from watcher.notes.analyze import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy

Row = tuple[str | None, str, str, str | None]


@cache
def attention_items(release: str) -> list[ClassifiedItem]:
    body = release_notes(f"pytorch/v{release}.md")
    items = Analyzer(builtin_taxonomy()).items(body)
    return [item for item in items if item.kind in ("bc_breaking", "deprecation")]


def item_of(release: str, piece: str) -> ClassifiedItem:
    found = [item for item in attention_items(release) if piece in item.text.split("\n", 1)[0]]
    assert len(found) == 1, f"{piece!r} names {len(found)} items of {release}"
    return found[0]


def row(text: str) -> Row:
    """``"torch.load omits weights_only"`` → ("torch.load", "exact", "omits", "weights_only");
    ``"torch.cat errors"`` → ("torch.cat", "exact", "errors", None)."""
    words = text.split()
    scope = words.pop(1).strip("[]") if len(words) > 1 and words[1].startswith("[") else "exact"
    if len(words) == 3:
        condition, option = words[1], words[2]
    else:  # "torch.cat errors", "f signature": conditions that flag no use
        condition, option = (words[1], None) if len(words) == 2 else ("uses", None)
    return (words[0], scope, condition, option)


def rows(subjects: Subjects) -> set[Row]:
    return {(s.api, s.scope, s.condition, s.option) for s in subjects.python}


def labels(subjects: Subjects) -> set[str]:
    return {subject.label for subject in subjects.environment}


def item(text: str, kind: str = "bc_breaking") -> ClassifiedItem:
    return ClassifiedItem(text=text, subsystem="other", kind=kind)


def read(text: str) -> set[Row]:
    return rows(read_subjects(item(text)))


# (release, piece of the item's first line, python subjects, environment labels)
REAL_ITEMS: list[tuple[str, str, list[str], list[str]]] = [
    # -- 2.5 --
    ("2.5.0", "Remove Option for ProcessGroup", [], []),  # only the example names it, unqualified
    ("2.5.0", "Remove `dynamic_dim()`", ["dynamic_dim"], []),  # `torch.export()` is context
    ("2.5.0", "Support meta device in checkpoint", [], []),
    # prose names only the new module; the "# before" half of the example names the old API
    ("2.5.0", "Switch to internal benchmarking",
     ["torch._inductor.runtime.runtime_utils.do_bench_gpu"], []),
    ("2.5.0", "Delete MacOS-12.3 specific checks", [], []),
    ("2.5.0", "call _safe_softmax from SDPA",
     ["torch.nn.functional.scaled_dot_product_attention passes attn_mask"], []),
    ("2.5.0", "Add support to `GradScaler`", ["GradScaler"], []),  # `grad_scale` is a value
    ("2.5.0", "No more CPython 3.8 support", [], ["python>=3.9"]),
    ("2.5.0", "are now keyword-only", ["torch.onnx.export signature"], []),
    ("2.5.0", "`torch.onnx._export` has been removed", ["torch.onnx._export"], []),
    ("2.5.0", "The `op_level_debug` option",
     ["torch.onnx.ExportOptions passes op_level_debug"], []),
    ("2.5.0", "`ONNXProgramSerializer` class", ["ONNXProgramSerializer"], []),
    ("2.5.0", "The `SymbolicContext` class", ["torch.onnx.SymbolicContext"], []),
    ("2.5.0", "Support for caffe2 has been removed",
     ["onnx_unpack_quantized_weights", "torch.onnx.symbolic_helper.is_caffe2_aten_fallback"], []),
    ("2.5.0", "Some errors classes are removed",
     ["CheckerError", "InvalidExportOptionsError"], []),  # not `RuntimeError`, not torch.onnx
    ("2.5.0", "Remove `torch._dynamo.utils.CompileProfiler`",
     ["torch._dynamo.utils.CompileProfiler"], []),
    ("2.5.0", "Deprecate `None` for specifying static dimensions", [], []),  # not `Dim.STATIC`
    ("2.5.0", "aot_autograd: copy metadata", [], []),
    ("2.5.0", "deprecate `search_autotune_cache`", ["search_autotune_cache"], []),
    ("2.5.0", "Deprecate Python 3.8 support", [], ["python>=3.9"]),
    ("2.5.0", "Supplying model keyword arguments", ["torch.onnx.export signature"], []),
    ("2.5.0", "`torch.onnx.OperatorExportTypes` is deprecated",
     ["torch.onnx.OperatorExportTypes", "torch.onnx.export passes operator_export_type"], []),
    ("2.5.0", "The `training` option", ["torch.onnx.export passes training"], []),
    # -- 2.7 --
    ("2.7.0", "Removed CUDA 12.4 support", [], ["cuda 12.4"]),  # not 12.8, the replacement
    ("2.7.0", "Removed Anaconda support", [], ["the pytorch conda channel"]),
    ("2.7.0", "Dropped support for Triton < 2.2.0", [], ["triton>=2.2.0"]),
    # the default it changes named in plain words: "the given Tensor's device by default"
    ("2.7.0", "Change `torch.Tensor.new_tensor()`",
     ["torch.Tensor.new_tensor [method] omits device"], []),
    ("2.7.0", "Use Manylinux 2.28", [], ["the C++11 ABI"]),  # glibc 2.28: no file says it
    ("2.7.0", "now uses the ExportedProgram logic path", ["torch.onnx.dynamo_export"], []),
    ("2.7.0", "Finish deprecation of `LRScheduler.print_lr()`",
     ["LRScheduler.print_lr [method]", "LRScheduler passes verbose"], []),  # not get_last_lr
    ("2.7.0", "libtorch_python.so symbols", [], []),
    ("2.7.0", "instead of `capture_pre_autograd_graph`",
     ["torch._export.capture_pre_autograd_graph"], []),  # qualified by the "before" import
    ("2.7.0", "New interface for",
     ["torch.fx.passes.graph_transform_observer.GraphTransformObserver"], []),
    ("2.7.0", "get_control_flow_submodules` is no longer public",
     ["torch.ao.quantization.pt2e.graph_utils.get_control_flow_submodules"], []),
    ("2.7.0", "`torch.onnx.dynamo_export` is deprecated", ["torch.onnx.dynamo_export"], []),
    ("2.7.0", "`XNNPACKQuantizer` is deprecated",  # the module it must no longer come from
     ["torch.ao.quantization.quantizer.xnnpack_quantizer [namespace]"], []),
    # -- 2.8 --
    # CUDA 12.8 is not removed, nor 12.6: the GPUs its build runs on are
    ("2.8.0", "Removed support for Maxwell", [], ["CUDA 12.8 builds on Maxwell/Pascal/Volta GPUs",
                                                  "CUDA 12.9 builds on Maxwell/Pascal/Volta GPUs"]),
    ("2.8.0", "now raises `NotImplementedError`", [], []),
    ("2.8.0", "check to custom `autograd.Function`", ["torch.autograd.Function errors"], []),
    ("2.8.0", "out variant of `tensordot`", ["torch.tensordot passes out"], []),
    ("2.8.0", "with `mark_dynamic` applied", ["torch._dynamo.mark_dynamic errors"], []),
    ("2.8.0", "`enable_cpp_framelocals_guard_eval`",
     ["torch._dynamo.config.enable_cpp_framelocals_guard_eval"], []),
    ("2.8.0", "`rocm.n_max_profiling_configs`",
     ["torch._inductor.config.rocm.n_max_profiling_configs"], []),
    ("2.8.0", "`autotune_fallback_to_aten`", ["torch._inductor.config.autotune_fallback_to_aten"],
     []),
    ("2.8.0", "`use_mixed_mm` and `mixed_mm_choice`",
     ["torch._inductor.config.use_mixed_mm", "torch._inductor.config.mixed_mm_choice"], []),
    ("2.8.0", "`descriptive_names = False`", ["torch._inductor.config.descriptive_names"], []),
    ("2.8.0", "has moved from inductor config to functorch config",
     ["torch._inductor.config.custom_op_default_layout_constraint"], []),
    ("2.8.0", "`emit_current_arch_binary`",
     ["torch._inductor.config.aot_inductor.emit_current_arch_binary"], []),
    ("2.8.0", "`aot_inductor.embed_cubin`", ["torch._inductor.config.aot_inductor.embed_cubin"],
     []),
    ("2.8.0", "`aot_inductor.compile_wrapper_with_O0`",
     ["torch._inductor.config.aot_inductor.compile_wrapper_with_O0"], []),
    ("2.8.0", "stricter aliasing/mutation check",
     ["HigherOrderOperator errors", "torch.cond errors"], []),
    ("2.8.0", "`guard_or_x` and `definitely_x`",  # not guard_or_true/false, the replacements
     ["torch.fx.experimental.symbolic_shapes.definitely_true",
      "torch.fx.experimental.symbolic_shapes.definitely_false"], []),
    ("2.8.0", "`torch.export.export_for_inference` has been removed",
     ["torch.export.export_for_inference"], []),
    ("2.8.0", "Switched default to `strict=False`",
     ["torch.export.export omits strict", "torch.export.export_for_training omits strict"], []),
    ("2.8.0", "Default opset in `torch.onnx.export`", ["torch.onnx.export omits opset_version"],
     []),  # the option comes from the keyword the "after" example adds
    ("2.8.0", "`JitTraceConvertStrategy`", ["JitTraceConvertStrategy"], []),
    ("2.8.0", "`onnxscript>=0.3.1` is required", [], ["onnxscript>=0.3.1"]),
    ("2.8.0", "`torch/types.h` include", [], []),
    ("2.8.0", "Upgraded `DLPack` to 1.0",  # the enum values only the "before" example uses
     ["torch.utils.dlpack.DLDeviceType.kDLGPU", "torch.utils.dlpack.DLDeviceType.kDLCPUPinned"],
     []),
    ("2.8.0", "NVTX3 code has been moved", [], []),  # CMake and C++, `find_package(...)` too
    ("2.8.0", "MPS support for MacOS Ventura", [], []),
    ("2.8.0", "`torch.ao.quantization` is deprecated", ["torch.ao.quantization [namespace]"], []),
    ("2.8.0", "The `dynamo=False` (current default) option",  # relying on the default warns
     ["torch.onnx.export passes dynamo", "torch.onnx.export omits dynamo"], []),
    # -- 2.9 --
    ("2.9.0", "Min supported Python version is now 3.10", [], ["python>=3.10"]),
    # torch.compile, torch.library: context; the shape it names is read in the code
    ("2.9.0", "Undefined behavior when an output", ["torch.library.custom_op"], []),
    ("2.9.0", "Build metal kernels of MacOS-14+", [], []),  # "avoid updating to Python-3.9"
    ("2.9.0", "Upgrade to DLPack 1.0", ["torch.utils.dlpack", "DLDeviceType"], []),
    ("2.9.0", "Raise appropriate errors in `torch.cat`", ["torch.cat errors"], []),
    ("2.9.0", "Default to `dynamo=True` for ONNX exporter", ["torch.onnx.export omits dynamo"],
     []),  # not torch.export.export, the pipeline it now uses
    ("2.9.0", "Switch off runtime asserts by default",
     ["export passes allow_complex_guards_as_runtime_asserts"], []),
    ("2.9.0", "Set default opset to 20", ["torch.onnx.export omits opset_version"], []),
    ("2.9.0", "Remove `torch.onnx.dynamo_export` and the `onnxrt`", ["torch.onnx.dynamo_export"],
     []),
    ("2.9.0", "Remove `torch.onnx.enable_fake_mode`", ["torch.onnx.enable_fake_mode"], []),
    ("2.9.0", "Some public facing ONNX utility APIs", ["torch.onnx.verification"], []),
    ("2.9.0", "Remove `torch.onnx.symbolic_caffe2`", ["torch.onnx.symbolic_caffe2"], []),
    ("2.9.0", "Remove `/d2implyavx512upperregs` flag", [], []),
    ("2.9.0", "Add `ScalarType` to shim conversion", [], []),  # a C++ item: no bare names
    ("2.9.0", "Deprecate `pin_memory_device` param",
     ["torch.utils.data.DataLoader passes pin_memory_device"], []),
    ("2.9.0", "Deprecate `torch.export.export_for_training` API",
     ["torch.export.export_for_training"], []),
    # draft_export is dropped from torch.onnx.export's path ("in exporter API"), not removed
    ("2.9.0", "Drop `draft_export` in exporter API", [], []),
    # -- 2.10: held out while the rules were written, added after (see the report) --
    ("2.10.0", "Removed unused `data_source` argument from Sampler",
     ["Sampler passes data_source"], []),
    ("2.10.0", "Removed deprecated imports for torch.utils.data.datapipes.iter.grouping",
     ["torch.utils.data.datapipes.iter.grouping.SHARDING_PRIORITIES",
      "torch.utils.data.datapipes.iter.grouping.ShardingFilterIterDataPipe"], []),
    ("2.10.0", "Remove Nested Jagged Tensor support", ["torch.nn.attention.flex_attention"], []),
    ("2.10.0", "`fallback=False` is now the default", ["torch.onnx.export omits fallback"], []),
    ("2.10.0", "Rename pytorch-triton package to triton", [], ["pytorch-triton (now triton)"]),
    ("2.10.0", "slicing flattened dim from root mesh",
     ["torch.distributed.device_mesh.DeviceMesh.__getitem__"], []),
    ("2.10.0", "Move `from`/`to` to `torch::stable::detail`", [], []),
    ("2.10.0", "`torch.jit` is not guaranteed to work in Python 3.14", ["torch.jit"], []),
    ("2.10.0", "The `dynamic_axes` option", ["torch.onnx.export passes dynamic_axes"], []),
    ("2.10.0", "Deprecate `export_memory_timeline` method",
     ["torch.profiler.export_memory_timeline [method]"], []),
    # -- 2.11: a second unseen release, read once the 2.10 fixes were in, then fixed too --
    ("2.11.0", "Volta (SM 7.0) GPU support removed", [],  # CUDA 12.8 itself stays
     ["CUDA 12.8 builds on Volta GPUs", "CUDA 12.9 builds on Volta GPUs"]),
    ("2.11.0", "PyPI wheels now ship with CUDA 13.0", [],
     ["CUDA 13.0 builds on Maxwell/Pascal GPUs"]),
    ("2.11.0", "now default the `trust_repo` parameter",  # default flipped, `=None` removed
     ["torch.hub.list omits trust_repo", "torch.hub.load omits trust_repo",
      "torch.hub.help omits trust_repo", "torch.hub.list passes trust_repo",
      "torch.hub.load passes trust_repo", "torch.hub.help passes trust_repo"], []),
    ("2.11.0", "Remove `is_causal` flag from `varlen_attn`",
     ["torch.nn.attention.varlen_attn passes is_causal"], []),
    ("2.11.0", "Add sliding window support to `varlen_attn`",
     ["torch.nn.attention.varlen_attn signature"], []),
    ("2.11.0", "`DebugInfoWriter` now honors", [], []),  # "in C++ code"
    # `_pg_registry`, in parentheses, names the new registry: no changed name
    ("2.11.0", "`DeviceMesh` now stores a process group registry", ["DeviceMesh"], []),
    ("2.11.0", "`DTensor.to_local()` backward now converts",
     ["DTensor.to_local [method] omits grad_placements"], []),
    ("2.11.0", "`_PhiloxState.seed` and `_PhiloxState.offset`",
     ["torch.distributed.tensor._random._PhiloxState.seed [method]",
      "torch.distributed.tensor._random._PhiloxState.offset [method]"], []),  # not torch.Tensor
    ("2.11.0", "caffe2 support is fully removed from ROCm", [], []),
    ("2.11.0", "`torch.export.export_for_training` has been removed",
     ["torch.export.export_for_training"], []),
    ("2.11.0", "Remove the `fallback` option", ["torch.onnx.export passes fallback"], []),
    ("2.11.0", "Remove overload matching logic",
     ["torch.onnx.export passes custom_translation_table"], []),
    ("2.11.0", "The PT2E quantization flow",
     ["torch.ao.quantization.pt2e [namespace]", "torch.ao.quantization.quantizer [namespace]"],
     []),
    ("2.11.0", "The MAGMA backend for linear algebra",
     ["torch.backends.cuda.preferred_linalg_library"], []),
    ("2.11.0", "`torch.linalg.svd` no longer dispatches", ["torch.linalg.svd"], []),
    ("2.11.0", "`torch.linalg.solve_triangular` and `torch.triangular_solve`",
     ["torch.linalg.solve_triangular", "torch.triangular_solve"], []),
    ("2.11.0", "`torch.linalg.lstsq` no longer dispatches", ["torch.linalg.lstsq"], []),
    ("2.11.0", "enable_symm_mem_for_group` is deprecated",
     ["torch.distributed.symmetric_memory.enable_symm_mem_for_group"], []),
]
def real_params() -> list[object]:
    return [pytest.param(*entry, id=f"{entry[0]} {entry[1]}") for entry in REAL_ITEMS]


@pytest.mark.parametrize(("release", "piece", "python", "environment"), real_params())
def test_real_items_read_their_subjects_and_not_their_replacements(release, piece, python,
                                                                   environment):
    subjects = read_subjects(item_of(release, piece))
    assert rows(subjects) == {row(text) for text in python}
    assert labels(subjects) == set(environment)
    for subject in subjects.python:
        if subject.scope == "method":
            assert subject.method == subject.api.rsplit(".", 1)[1]


def test_the_table_covers_at_least_forty_real_items():
    assert len(REAL_ITEMS) >= 40


def test_every_attention_item_of_the_shared_releases_reads_without_error():
    for release in ("2.5.0", "2.7.0", "2.8.0", "2.9.0", "2.10.0", "2.11.0"):
        for entry in attention_items(release):
            assert isinstance(read_subjects(entry), Subjects)


# -- the 2.6 torch.load flip, written in the style of the notes (fixture) --

def test_flipped_torch_load_default_reads_as_calls_that_omit_weights_only():
    body = release_notes("pytorch/v2.6.0-torch-load.md")
    (flip,) = [entry for entry in Analyzer(builtin_taxonomy()).items(body)
               if entry.kind == "bc_breaking"]
    subjects = read_subjects(flip)
    # not pickle.load (another package), not add_safe_globals (the recommended way out)
    assert subjects.python == (Subject(api="torch.load", condition="omits",
                                       option="weights_only"),)
    assert subjects.apis == ["torch.load"]


@pytest.mark.parametrize("text", [
    "Flip default torch.load to weights_only (#137602)",
    "`torch.load` now uses `weights_only=True` by default",
    "Switched default to `weights_only=True` in `torch.load`",
    "The default value of `weights_only` in `torch.load` changed to True",
    "`weights_only=True` is now the default in `torch.load`",
], ids=["title", "now-uses-by-default", "switched-default", "default-value-changed",
        "is-now-the-default"])
def test_flipped_defaults_read_as_omitted_options(text):
    assert read(text) == {("torch.load", "exact", "omits", "weights_only")}


def test_a_default_flip_takes_its_option_from_the_keyword_the_after_example_adds():
    text = ("Set default mode to fast in `torch.foo.run` (#1)\n\nVersion 2.8\n```python\n"
            "torch.foo.run(x)\n```\n\nVersion 2.9\n```python\n# To keep the old behaviour\n"
            "torch.foo.run(x, mode='slow')\n```\n")
    assert read(text) == {("torch.foo.run", "exact", "omits", "mode")}


# -- replacements are never subjects --

@pytest.mark.parametrize("text", [
    "Please use `torch.export.export` instead of `torch.old_capture`",
    "`torch.old_capture` is deprecated in favor of `torch.export.export`",
    "`torch.old_capture` is deprecated in favour of `torch.export.export`",
    "`torch.old_capture` is deprecated (#1)\n\nPlease migrate to `torch.export.export`.",
    "`torch.old_capture` has been replaced by `torch.export.export`",
    "`torch.old_capture` is removed; `torch.export.export` should be used.",
    "`torch.old_capture` is deprecated, use `torch.export.export` instead.",
    "Use `torch.export.export` rather than `torch.old_capture`",
    "Migrate from `torch.old_capture` to `torch.export.export` (#1)",
    "`torch.old_capture` has been renamed to `torch.export.export`",
    "`torch.old_capture` is deprecated. We recommend `torch.export.export`.",
    "`torch.old_capture` is deprecated. Users should move to `torch.export.export`.",
], ids=["use-instead-of", "in-favor-of", "in-favour-of", "migrate-to", "replaced-by",
        "should-be-used", "use-x-instead", "rather-than", "migrate-from-to", "renamed-to",
        "recommend", "users-should"])
def test_the_recommended_replacement_is_not_a_subject(text):
    assert read(text) == {("torch.old_capture", "exact", "uses", None)}


def test_names_only_the_after_example_uses_are_not_subjects():
    text = ("Behaviour of the old capture changed (#1)\n\nVersion 2.6\n```python\n"
            "from torch._export import old_capture\nm = old_capture(m, args)\n```\n\n"
            "Version 2.7\n```python\nfrom torch.export import export\nm = export(m, args)\n```\n")
    assert read(text) == {("torch._export.old_capture", "exact", "uses", None)}


def test_the_before_example_counts_only_when_the_prose_names_nothing():
    text = ("`torch.foo` now returns a view (#1)\n\nBefore:\n```python\n"
            "torch.bar(torch.foo(x))\n```\nAfter:\n```python\ntorch.foo(y)\n```\n")
    assert read(text) == {("torch.foo", "exact", "uses", None)}


@pytest.mark.parametrize("table", [
    "| Deprecated API | Replacement |\n|---|---|\n| `torch.old_fn` | `torch.new_fn` |\n"
    "| `torch.OldCls` | `torch.NewCls` |\n",
    "| 2.6 | 2.7 |\n|:---|:---|\n| `torch.old_fn(x)` | `torch.new_fn(x)` |\n"
    "| `torch.OldCls` | `torch.NewCls` |\n",
    "| Old name | New name | Notes |\n| --- | --- | --- |\n| `torch.old_fn` | `torch.new_fn` | "
    "use `torch.other_fn` for more |\n| `torch.OldCls` | `torch.NewCls` | |\n",
], ids=["replacement-column", "version-columns", "new-column-and-notes"])
def test_the_new_column_of_an_old_new_table_is_not_a_subject(table):
    text = "Deprecated APIs (#1)\n\nThese APIs are deprecated:\n\n" + table
    assert read(text) == {("torch.old_fn", "exact", "uses", None),
                          ("torch.OldCls", "exact", "uses", None)}


# -- context, bare names and what is no Python API --

def test_every_api_a_default_flip_lists_gets_the_option():
    text = ("`torch.hub.list()`, `torch.hub.load()`, and `torch.hub.help()` now default the "
            "`trust_repo` parameter to `\"check\"` instead of `None`.")
    assert read(text) == {(f"torch.hub.{name}", "exact", "omits", "trust_repo")
                          for name in ("list", "load", "help")}


def test_what_a_changed_api_now_returns_is_not_a_subject():
    text = "`_Rng.seed` now returns `torch.Tensor` instead of `int` (#1)"
    (subject,) = read_subjects(item(text)).python
    assert (subject.api, subject.scope, subject.method) == ("_Rng.seed", "method", "seed")


def test_context_names_are_not_subjects():
    assert read("When using `torch.compile`, `torch._dynamo.config.foo_bar` is deprecated") == {
        ("torch._dynamo.config.foo_bar", "exact", "uses", None)}
    assert read("`torch.old_fn` now returns silently wrong results under `torch.compile`") == {
        ("torch.old_fn", "exact", "uses", None)}
    assert read("`torch.Mesh` now stores its groups, enabling `torch.compile` to trace it") == {
        ("torch.Mesh", "exact", "uses", None)}


def test_bare_names_are_qualified_from_the_same_item_or_kept_when_distinctive():
    text = "Remove `old_helper` (#1)\n\nThe deprecated `torch.utils.old_helper` is gone."
    assert read(text) == {("torch.utils.old_helper", "exact", "uses", None)}
    assert read("Remove `old_helper_fn` (#1)") == {("old_helper_fn", "exact", "uses", None)}
    assert read("Remove `OldHelper` (#1)") == {("OldHelper", "exact", "uses", None)}


@pytest.mark.parametrize("text", [
    "Removed `load` (#1)", "Deprecate `export`", "`compile` is deprecated",
    "Removed `RuntimeError` handling", "Removed `TORCH_CUDA_ARCH_LIST` support",
    "Remove `c10::optional` alias", "Removed `at::Tensor::data()`",
    "Removed `torch/csrc/api.h`", "Removed the `-DUSE_FOO` flag", "Removed `CMAKE_PREFIX`",
    "Deprecate `numpy.foo_bar`", "Removed `executorch.backends.foo`",
    "Removed `guard_or_x` helpers", "See #12345 and 2.7.0 for `find_package(TORCH REQUIRED)`",
    "Added `brand_new_api` (#1)",
], ids=["load", "export", "compile", "builtin", "env-var", "cpp", "cpp-method", "path",
        "cmake-flag", "constant", "other-package", "other-root", "placeholder", "cmake-call",
        "new-api"])
def test_names_that_are_no_python_api_of_torch_are_never_subjects(text):
    assert read(text) == set()


def test_a_cpp_item_keeps_no_bare_names():
    text = ("Add `ScalarType` to `stable::Tensor` (#1)\n\nIt is BC breaking for "
            "`Float8_e8m0fnu` passed into `aoti_torch_call_dispatcher`.")
    assert read(text) == set()
    assert read("`DebugInfoWriter` now honors `$XDG_CACHE_HOME` in C++ code (#1)") == set()


# -- namespaces --

@pytest.mark.parametrize("text", [
    "`torch.ao.quantization` is deprecated and will be removed in 2.10",
    "The `torch.ao.quantization` module is deprecated",
    "The `torch.ao.quantization` package has been removed",
    "Deprecate the `torch.ao.quantization` namespace",
], ids=["is-deprecated", "module", "package", "namespace"])
def test_a_module_as_a_whole_is_a_namespace(text):
    assert read(text) == {("torch.ao.quantization", "namespace", "uses", None)}


def test_names_under_a_module_are_read_instead_of_the_module():
    text = ("Removed deprecated imports for torch.old.pkg (#1). "
            "`from torch.old.pkg import quantize, Prepare` is no longer supported. "
            "Please import from `torch.new.pkg` instead.")
    assert read(text) == {("torch.old.pkg.quantize", "exact", "uses", None),
                          ("torch.old.pkg.Prepare", "exact", "uses", None)}


@pytest.mark.parametrize("text", [
    "`torch.onnx.dynamo_export` is deprecated",
    "Remove `torch.old_fn()`",
    "Deprecated members in `torch.onnx.verification` are removed",
], ids=["function", "call", "members-of"])
def test_a_function_or_part_of_a_module_stays_exact(text):
    assert {scope for _, scope, _, _ in read(text)} == {"exact"}


# -- config variables --

@pytest.mark.parametrize(("text", "expected"), [
    ("Inductor config variable `autotune_fallback_to_aten` is deprecated",
     ["torch._inductor.config.autotune_fallback_to_aten"]),
    ("Inductor config variables `use_mixed_mm` and `mixed_mm_choice` are deprecated",
     ["torch._inductor.config.use_mixed_mm", "torch._inductor.config.mixed_mm_choice"]),
    ("Inductor config options `a_b`, `c_d` and `e_f` are removed",
     ["torch._inductor.config.a_b", "torch._inductor.config.c_d", "torch._inductor.config.e_f"]),
    ("Inductor config variable `rocm.n_max_profiling_configs` is deprecated",
     ["torch._inductor.config.rocm.n_max_profiling_configs"]),
    ("Dynamo config `suppress_errors` is removed", ["torch._dynamo.config.suppress_errors"]),
    ("AOTI config variable `emit_current_arch_binary` is deprecated",
     ["torch._inductor.config.aot_inductor.emit_current_arch_binary"]),
    ("AOTInductor config `package_cpp_only` is deprecated",
     ["torch._inductor.config.aot_inductor.package_cpp_only"]),
    ("AOTI config variable `aot_inductor.embed_cubin` has been renamed to "
     "`aot_inductor.embed_kernel_binary`", ["torch._inductor.config.aot_inductor.embed_cubin"]),
    ("functorch config `view_replay_for_aliased_outputs` is removed",
     ["torch._functorch.config.view_replay_for_aliased_outputs"]),
    ("`layout_constraint` has moved from inductor config to functorch config",
     ["torch._inductor.config.layout_constraint"]),
    ("`inductor.config.descriptive_names = False` is deprecated",
     ["torch._inductor.config.descriptive_names"]),
], ids=["variable", "two", "list", "nested", "dynamo", "aoti", "aotinductor", "aoti-prefixed",
        "functorch", "moved-from", "alias-assignment"])
def test_config_variables_are_qualified_by_their_owner(text, expected):
    assert read(text) == {(name, "exact", "uses", None) for name in expected}


# -- methods, aliases and options --

@pytest.mark.parametrize(("text", "api", "method"), [
    ("Change `torch.Tensor.new_tensor()` to use the Tensor's device", "torch.Tensor.new_tensor",
     "new_tensor"),
    ("`Tensor.new_tensor()` now uses the Tensor's device", "torch.Tensor.new_tensor",
     "new_tensor"),
    ("Finish deprecation of `LRScheduler.print_lr()`", "LRScheduler.print_lr", "print_lr"),
    ("`nn.Module.zero_grad()` now sets grads to None", "torch.nn.Module.zero_grad",
     "zero_grad"),
    ("Deprecate the `export_trace_file` method", "export_trace_file", "export_trace_file"),
    ("The `export_trace_file` method in `torch.profiler` is deprecated",
     "torch.profiler.export_trace_file", "export_trace_file"),
], ids=["qualified", "tensor-alias", "unqualified-class", "nn-alias", "called-a-method",
        "method-in-module"])
def test_methods_of_classes_are_read_with_method_scope(text, api, method):
    (subject,) = read_subjects(item(text)).python
    assert (subject.api, subject.scope, subject.method) == (api, "method", method)


@pytest.mark.parametrize(("text", "api"), [
    ("`nn.attention.flex_attention` is deprecated", "torch.nn.attention.flex_attention"),
    ("`F.scaled_dot_product_attention` is deprecated",
     "torch.nn.functional.scaled_dot_product_attention"),
    ("Deprecate `dist.all_gather_coalesced`", "torch.distributed.all_gather_coalesced"),
    ("`optim.SGD` no longer takes a closure", "torch.optim.SGD"),
    ("Remove `torch.export.export_for_inference()` (#1)", "torch.export.export_for_inference"),
], ids=["nn", "F", "dist", "optim", "call-parens"])
def test_import_aliases_are_expanded_and_call_parens_dropped(text, api):
    assert read(text) == {(api, "exact", "uses", None)}


@pytest.mark.parametrize(("text", "expected"), [
    ("Deprecate `pin_memory_device` param in `torch.utils.data.DataLoader`",
     ("torch.utils.data.DataLoader", "passes", "pin_memory_device")),
    ("The `dynamo=False` (current default) option for `torch.onnx.export` is deprecated",
     ("torch.onnx.export", "passes", "dynamo")),
    ("The `foo` argument of `torch.bar` is deprecated", ("torch.bar", "passes", "foo")),
    ("Passing `foo` to `torch.bar` is deprecated", ("torch.bar", "passes", "foo")),
    ("`torch.bar` no longer accepts the `foo` keyword", ("torch.bar", "passes", "foo")),
    ("The ability to supply `foo_type` in `torch.bar()` is deprecated",
     ("torch.bar", "passes", "foo_type")),
    ("Removed unused `data_source` argument from Sampler", ("Sampler", "passes", "data_source")),
    ("Removed the `foo_bar` argument from the Python frontend", None),
    ("Removed the `foo_bar` option for the model", None),
    ("The `is_causal` parameter has been removed from `torch.nn.attention.varlen_attn`.",
     ("torch.nn.attention.varlen_attn", "passes", "is_causal")),
    ("`torch.foo()` now converts inputs by default when `bar_spec` is not provided.",
     ("torch.foo", "omits", "bar_spec")),
], ids=["param-in", "value-option-for", "argument-of", "passing-to", "no-longer-accepts",
        "supply-in", "class-in-words", "not-a-class", "lowercase-word", "removed-from",
        "not-provided"])
def test_removed_or_deprecated_options_read_as_calls_that_pass_them(text, expected):
    if expected is None:  # an option of no API the text names: nothing to match
        assert read(text) == set()
        return
    api, condition, option = expected
    assert read(text) == {(api, "exact", condition, option)}


# -- environment --

@pytest.mark.parametrize(("text", "expected"), [
    ("Min supported Python version is now 3.10 (#162310)", "python>=3.10"),
    ("The minimum version of Python required for PyTorch 2.9.0 is 3.10.", "python>=3.10"),
    ("No more CPython 3.8 support and removal from binary", "python>=3.9"),
    ("Deprecate Python 3.8 support from CI/CD", "python>=3.9"),
    ("Python 3.9 support dropped", "python>=3.10"),
    ("Dropped support for Python 3.9", "python>=3.10"),
    ("PyTorch now requires Python 3.10 or later", "python>=3.10"),
    ("Removed CUDA 12.1 support", "cuda 12.1"),
    ("Removed CUDA 12.4 support in CI/CD in favor of 12.8", "cuda 12.4"),
    ("CUDA 11.8 binaries are no longer built", "cuda 11.8"),
    ("`onnxscript>=0.3.1` is required for the `dynamo=True` option", "onnxscript>=0.3.1"),
    ("You must upgrade `onnxscript` to version 0.3.1 or higher", "onnxscript>=0.3.1"),
    ("Dropped support for Triton < 2.2.0 (versions without ASTSource)", "triton>=2.2.0"),
    ("`pytorch-triton` is renamed to `triton`", "pytorch-triton (now triton)"),
    ("Rename pytorch-triton package to triton (#169888)", "pytorch-triton (now triton)"),
    ("The `Pytorch_Triton_ROCm` package has been renamed to `triton-rocm`",
     "pytorch-triton-rocm (now triton-rocm)"),
    ("Removed Anaconda support in CI/CD (#144870, #145015, #147792)",
     "the pytorch conda channel"),
    ("PyTorch will no longer publish packages to its Anaconda channel",
     "the pytorch conda channel"),
    ("Conda builds are discontinued", "the pytorch conda channel"),
    ("Use Manylinux 2.28 and CXX11_ABI=1 for future released Linux wheel builds.",
     "the C++11 ABI"),
    ("Linux wheels are now built with the new C++11 ABI", "the C++11 ABI"),
], ids=["min-supported", "minimum-required", "no-more", "deprecate", "support-dropped",
        "dropped-support", "requires-or-later", "cuda-removed", "cuda-in-favor-of",
        "cuda-not-built", "package-required", "package-upgrade", "package-dropped-below",
        "renamed", "rename-imperative", "renamed-normalised", "anaconda-removed",
        "channel-no-longer-published", "conda-builds-discontinued", "abi-flag", "abi-words"])
def test_environment_requirements(text, expected):
    subjects = read_subjects(item(text))
    assert labels(subjects) == {expected}


def test_two_cuda_versions_removed_at_once():
    subjects = read_subjects(item("Removed CUDA 11.8 and 12.4 support in CI/CD (#155509)"))
    assert subjects.environment == (EnvironmentSubject(kind="cuda", removed="11.8"),
                                    EnvironmentSubject(kind="cuda", removed="12.4"))


def test_gpu_architectures_a_cuda_build_drops_are_not_the_cuda_version_dropped():
    """2.8 and 2.11 keep their CUDA 12.8 and 12.9 builds but drop GPUs from them: an
    environment installing those builds is for its owner to check against its GPUs, while the
    CUDA version itself stays supported."""
    subjects = read_subjects(item("Removed support for Maxwell, Pascal, and Volta architectures "
                                  "with CUDA 12.8 and 12.9 builds (#157517)"))
    assert subjects.environment == (
        EnvironmentSubject(kind="gpu_arch", removed="12.8", name="Maxwell/Pascal/Volta"),
        EnvironmentSubject(kind="gpu_arch", removed="12.9", name="Maxwell/Pascal/Volta"))
    subjects = read_subjects(item("Volta (SM 7.0) GPU support removed from CUDA 12.8 and 12.9 "
                                  "binary builds (#172598)"))
    assert labels(subjects) == {"CUDA 12.8 builds on Volta GPUs", "CUDA 12.9 builds on Volta GPUs"}
    assert not read_subjects(item("CUDA 12.8 builds supported Volta (SM 7.0)")).environment


@pytest.mark.parametrize("text", [
    "If you need MPS on MacOS Ventura, please avoid updating to Python-3.9 or above",
    "Added Python 3.13 support in CI/CD", "Moved CI to CUDA 12.8",
    "Please utilize CUDA 12.6 instead.",
    "AOTI config variable `aot_inductor.embed_cubin` has been renamed to `aot_inductor.x_y`",
    "Requires MacOS-14+ going forward",
    "Change conda to miniforge for xpu images (#134455)",
    "Migrate conda, manywheel, libtorch Docker images build from pytorch/builder",
    "Support _GLIBCXX_USE_CXX11_ABI both 0 and 1 mode (#130110)",
    "Removing doc references to PRE_CXX11_ABI. (#149756)",
], ids=["python-avoid", "python-added", "cuda-moved-to",
        "cuda-replacement", "config-rename", "macos", "conda-replaced-in-images",
        "conda-images-migrated", "abi-both-modes", "abi-docs"])
def test_environment_phrasings_that_require_nothing(text):
    assert read_subjects(item(text)).environment == ()


# -- any kind, hostile input --

def test_the_reader_is_kind_agnostic():
    text = "`torch.old_fn` is deprecated"
    for kind in ("bc_breaking", "deprecation", "bug_fix", "new_feature", "other"):
        assert read_subjects(item(text, kind)).apis == ["torch.old_fn"]


def test_an_item_naming_nothing_reads_as_empty():
    subjects = read_subjects(item("Improved the docs of the optimizer tutorial."))
    assert not subjects and subjects == Subjects()


@pytest.mark.parametrize("text", [
    "`" * 100_000 + "x" * 100_000,
    "`torch.a_b` " * 20_000,
    "use `torch.x` instead of " * 8_000,
    "(" * 100_000 + ")" * 100_000,
    "```\n" * 50_000,
    "Before\n```python\n" + "torch.a.b(" * 20_000 + ")" * 20_000 + "\n```\nAfter\n```\nx\n```",
    "minimum Python " + "x " * 100_000 + "3.9",
    "Dropped support for " + "a" * 200_000 + " < 1",
    "a-" * 100_000 + " is renamed to b",
    "Inductor config variables " + "`a_b` and " * 20_000,
    "switch default " * 15_000,
    "\x00" * 200_000,
], ids=["backticks", "spans", "triggers", "parens", "fences", "deep-code", "python-words",
        "long-name", "long-rename", "config-chain", "defaults", "marks"])
def test_hostile_items_of_200_kb_are_read_in_linear_time(text):
    # No timing assert: the reader looks at a bounded prefix with bounded loops and
    # quantifiers, so each of these finishes in milliseconds; a backtracking regex would not.
    assert len(text) >= 100_000
    assert isinstance(read_subjects(item(text)), Subjects)


@pytest.mark.parametrize(("text", "condition"), [
    ("Raise appropriate errors in `torch.cat` (#1)", "errors"),
    ("`torch.foo` now warns when given a negative size (#1)", "errors"),
    ("Add a stricter check to `torch.foo` for mismatched dtypes (#1)", "errors"),
    ("`torch.foo` now raises instead of returning `None` (#1)", "uses"),
    ("`torch.foo` is removed; it raised an error since 2.0 (#1)", "uses"),
    ("`torch.foo` now returns a tuple (#1)", "uses"),
], ids=["raise-errors", "warns", "check", "instead", "removed", "returns"])
def test_a_change_to_what_invalid_calls_raise_touches_no_valid_use(text, condition):
    """Valid code is not touched when only errors or warnings on invalid input change: such
    items name their API (``apis``) but flag no use; a removal, a new return type or a
    behaviour "instead" of another is a change to every caller."""
    (subject,) = read_subjects(item(text)).python
    assert (subject.api, subject.condition) == ("torch.foo" if "foo" in text else "torch.cat",
                                                condition)


@pytest.mark.parametrize(("text", "raised", "raises"), [
    ("Raise appropriate errors in `torch.cat` (#158249)\n\n`torch.cat` now raises `ValueError`, "
     "`IndexError` or `TypeError` where appropriate instead of the generic `RuntimeError`. If you "
     "code was catching these errors, you can update to catch the new error type.",
     ("RuntimeError",), ("ValueError", "IndexError", "TypeError")),
    ("Stricter checks in `torch.foo` (#1)\n\nBad shapes previously raised RuntimeError; "
     "`torch.foo` now raises `ValueError` for them.", ("RuntimeError",), ("ValueError",)),
    ("Add a check for negative sizes to `torch.foo` (#1)", (), ()),
], ids=["torch.cat-2.9", "previously-raised", "no-type-named"])
def test_an_errors_item_says_which_exception_type_it_replaces(text, raised, raises):
    """What code catching the old type around the call needs (``reach.tiers._handled``)."""
    (subject,) = read_subjects(item(text)).python
    assert (subject.condition, subject.raised, subject.raises) == ("errors", raised, raises)


@pytest.mark.parametrize("text", [
    "Options to `torch.foo` (except for the first three arguments) are now keyword-only (#1)",
    "Supplying model keyword arguments to `torch.foo` is deprecated (#1)",
], ids=["keyword-only", "keyword-arguments"])
def test_a_change_to_how_arguments_are_passed_names_no_option_and_flags_nothing(text):
    (subject,) = read_subjects(item(text)).python
    assert (subject.api, subject.condition) == ("torch.foo", "signature")


@pytest.mark.parametrize(("text", "expected"), [
    ("Remove `torch.foo` in favor of `torch.bar` (#1)", {("torch.foo", "exact", "uses", None)}),
    ("Drop `helper_fn` in the tracing pass (#1)", set()),
    ("`WidgetMesh` now keeps a cache (`_cache`) of results (#1)",
     {("WidgetMesh", "exact", "uses", None)}),
    ("Deprecate `torch.old`. The `torch.old` default behavior is changed (#1)",
     {("torch.old", "exact", "uses", None)}),
], ids=["in-favor-is-a-replacement", "dropped-in-a-place", "gloss", "aspect-noun-keeps-it"])
def test_glosses_places_and_modifiers_are_no_subjects(text, expected):
    assert read(text) == expected
