"""Evidence before breaks (issue 36): a use is ``breaks`` only where the release's package
proves the change (its atlas diff) or confirms the notes' stated removal; the words alone give
``check`` at most, and each use's ``why`` names the rung it stands on.

On the real notes items that misled the words (2.11's ``to_local`` of Partial placements,
2.10's ``fallback`` default, a "framework so that options can be marked deprecated"), on
reworded BC items, and on the bundled atlases of 2.11, 2.13 and 2.14.1."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_impact_subjects import item_of

from watcher.impact import ImpactAnalyzer, ReleaseAnalysis, own_knowledge, package_changes
from watcher.impact.analysis.item import CodeRoot
from watcher.impact.atlas import AtlasSource
from watcher.impact.model import EnvironmentSubject, Subject
from watcher.impact.reach.evidence import Evidence, Ladder
from watcher.impact.subjects import read_subjects
from watcher.models import Affect, ClassifiedItem


def codebase(tmp_path: Path, files: dict[str, str]) -> ImpactAnalyzer:
    root = tmp_path / "code"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return ImpactAnalyzer([CodeRoot("code", root)])


def bundled(release: str):
    source = AtlasSource(store=None, index=None, clock=lambda: datetime.now(UTC))
    package = package_changes(source, "pytorch/pytorch", release)
    assert package is not None, f"no bundled atlases for {release}"
    return package


def affects(analyzer: ImpactAnalyzer, release: str, item: ClassifiedItem) -> list[Affect]:
    found = ReleaseAnalysis(analyzer, release, bundled(release)).of(item)
    return [] if found is None else found.affects


def tiers(found: list[Affect]) -> dict[tuple[str, int], str]:
    return {(use.path, use.line): use.tier for use in found}


# ---- 2.11 #173454: a behaviour of one placement, never every to_local() ---------------------
PLAIN_DTENSOR = {"shard.py": """\
    from torch.distributed.tensor import DTensor, Shard, distribute_tensor

    def gather(x: DTensor):
        local = x.to_local()
        return local, x.to_local(grad_placements=None)
    """}
MAKES_PARTIAL = {"reduce.py": """\
    from torch.distributed.tensor import Partial

    def reduce(x):
        y = x.redistribute(placements=[Partial()])
        return y.to_local()
    """}
TO_LOCAL = ("2.11.0", "`DTensor.to_local()` backward now converts `Partial` placements")


def test_to_local_of_partial_placements_touches_no_code_that_never_makes_one(tmp_path):
    assert affects(codebase(tmp_path, PLAIN_DTENSOR), "v2.11.0", item_of(*TO_LOCAL)) == []


def test_to_local_where_the_code_makes_partial_placements_is_check_never_breaks(tmp_path):
    found = affects(codebase(tmp_path, MAKES_PARTIAL), "v2.11.0", item_of(*TO_LOCAL))
    assert tiers(found) == {("reduce.py", 5): "check"}
    why = found[0].why
    # The rung: the package does not show the default changed; the limit: what the code makes.
    assert why.startswith("relies on the default of grad_placements, changed in v2.11.0 "
                          "(the notes' words; the 2.11.0 package does not show")
    assert "only with Partial placements, which the code can make" in why


def test_a_kind_of_input_is_looked_for_in_the_file_of_the_use(tmp_path):
    """A file that makes no Partial placement calls to_local() on the DTensors it builds
    (Shard, Replicate): one file elsewhere making a Partial does not put its calls in check."""
    found = affects(codebase(tmp_path, {**MAKES_PARTIAL, **PLAIN_DTENSOR}), "v2.11.0",
                    item_of(*TO_LOCAL))
    assert tiers(found) == {("reduce.py", 5): "check"}


PARTIAL_ELSEWHERE_IN_THE_FILE = {"test_buffers.py": """\
    from torch.distributed.tensor import Partial, Replicate

    def _placements():
        return [Partial()]

    def test_partial_allreduce(buffer):
        buffer.distribute([Partial("avg")]).all_reduce()

    def test_replicate(dtensor):
        assert dtensor.to_local().shape == (4,)

    class RowwiseStyle:
        def __init__(self):
            self.output_layouts = [Partial()]

        def _prepare_output(self, outputs):
            return outputs.to_local()
    """}


def test_a_partial_placement_reaches_the_uses_of_its_own_function_or_class(tmp_path):
    """Megatron-LM's tests name Partial in some test functions and call to_local() on
    Replicate tensors in others: those calls are not reached. A parallel style's class that lays
    out Partial in one method and calls to_local() in another is read as one."""
    found = affects(codebase(tmp_path, PARTIAL_ELSEWHERE_IN_THE_FILE), "v2.11.0",
                    item_of(*TO_LOCAL))
    assert tiers(found) == {("test_buffers.py", 17): "check"}


# ---- 2.10 fallback: a default that applies only with dynamo=True ---------------------------
ONNX = {"export.py": """\
    import torch

    def export(model, args, path):
        torch.onnx.export(model, args, path)
        torch.onnx.export(model, args, path, dynamo=False)
        torch.onnx.export(model, args, path, dynamo=True)
    """}


def test_a_default_that_needs_another_option_leaves_calls_choosing_otherwise(tmp_path):
    item = item_of("2.10.0", "`fallback=False` is now the default")
    assert read_subjects(item).python[0].given == ("dynamo=True",)
    found = affects(codebase(tmp_path, ONNX), "v2.10.0", item)
    # dynamo=False: fallback has no effect there. The others: the words alone (the 2.10.0
    # package shows fallback's default unchanged), so check.
    assert tiers(found) == {("export.py", 4): "check", ("export.py", 6): "check"}


# ---- the package's own proof: 2.14.1 -----------------------------------------------------
RAISING = {"linalg.py": """\
    import torch
    from torch.autograd import Function

    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return 2 * x

    y = Double.apply(torch.ones(2))
    lower = torch.cholesky(torch.eye(2))
    q, r = torch.qr(torch.eye(2))
    """}
NOTES_2141 = textwrap.dedent("""\
    # PyTorch 2.14.1 Release Notes
    # Bug fixes
    ## Python Frontend
    - Fix a crash in `torch.compile` with empty inputs (#900100)
    """)


def test_functions_that_only_raise_break_and_a_class_body_member_still_works(run_cli,
                                                                              tmp_path):
    codebase(tmp_path, RAISING)
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES_2141)
    result = run_cli("impact", str(notes), "--code", str(tmp_path / "code"), "--format", "json")
    assert result.code == 1, result.stderr
    uses = {use["line"]: use for item in json.loads(result.stdout)["items"]
            for use in item.get("affects", [])}
    assert sorted(uses) == [10, 11]  # Double.apply (line 9) is not flagged
    assert uses[10]["tier"] == "breaks" and uses[10]["source"] == "package"
    assert uses[10]["why"] == ("calls torch.cholesky, removed in v2.14.1 (the 2.14.1 package: "
                               "torch.cholesky now only raises)")


# torchdrug's extension loader: eight arguments by position, written before 2.7 inserted
# extra_sycl_cflags as load's fifth parameter.
SHIFTED = {"ext.py": """\
    from torch.utils import cpp_extension

    def build(name, sources, flags, cuda_flags, ldflags, includes, folder, verbose, *rest):
        cpp_extension.load(name, sources, flags, cuda_flags, ldflags, includes, folder, verbose)
        cpp_extension.load(name, sources, flags, cuda_flags)
        cpp_extension.load(name, sources, extra_ldflags=ldflags, build_directory=folder)
        cpp_extension.load(name, sources, *rest)
    """}
NOTES_270 = NOTES_2141.replace("2.14.1", "2.7.0")


def test_a_parameter_inserted_before_others_breaks_calls_passing_them_by_position(
        run_cli, tmp_path):
    codebase(tmp_path, SHIFTED)
    notes = tmp_path / "notes.md"
    notes.write_text(NOTES_270)
    result = run_cli("impact", str(notes), "--code", str(tmp_path / "code"), "--format", "json")
    assert result.code == 1, result.stderr
    uses = [use for item in json.loads(result.stdout)["items"]
            for use in item.get("affects", []) if use["path"] == "ext.py"]
    assert [(use["line"], use["tier"]) for use in uses] == [(4, "breaks"), (7, "check")]
    assert uses[0]["why"] == (
        "passes 8 arguments to torch.utils.cpp_extension.load by position: extra_ldflags moved "
        "from argument 5 in v2.7.0, so argument 5 on lands in other parameters (the 2.7.0 "
        "package: extra_ldflags of torch.utils.cpp_extension.load moved from argument 5 to 6)")


PROBED = {"alloc.py": """\
    import inspect
    import torch

    def pool(allocator, symmetric, model):
        if "symmetric" in inspect.signature(torch.cuda.MemPool).parameters:
            return torch.cuda.MemPool(allocator, symmetric=symmetric)
        if hasattr(torch.onnx, "dynamo_export"):
            torch.onnx.dynamo_export(model)
        return torch.cuda.MemPool(allocator, symmetric=True)
    """}
V290 = Path(__file__).parent / "fixtures" / "releases" / "pytorch" / "v2.9.0.md"


def test_a_removal_the_code_asks_about_first_touches_nothing_behind_the_question(run_cli,
                                                                                 tmp_path):
    """Megatron-LM's feature check: ``symmetric=`` is passed only where the signature has
    it, ``dynamo_export`` called only where the module has it; the unguarded call breaks."""
    codebase(tmp_path, PROBED)
    result = run_cli("impact", str(V290), "--code", str(tmp_path / "code"), "--format", "json")
    uses = {(use["line"], use["api"]): use["tier"] for item in json.loads(result.stdout)["items"]
            for use in item.get("affects", [])}
    assert uses == {(9, "torch.cuda.MemPool"): "breaks"}, uses
    assert result.code == 1



FALLBACK = {"ckpt.py": """\
    import torch

    def load(path):
        try:
            return torch.load(path, map_location="cpu", weights_only=False)
        except (TypeError, ValueError):
            return torch.load(path, map_location="cpu")

    def restore(path):
        try:
            return torch.load(path, weights_only=True)
        except RuntimeError:
            return torch.load(path)
    """}
V26_LOAD = Path(__file__).parent / "fixtures" / "releases" / "pytorch" / "v2.6.0-torch-load.md"


def test_a_fallback_for_releases_that_refuse_a_keyword_is_not_reached_by_its_default(
        run_cli, tmp_path):
    """Megatron-LM's loader: the bare ``torch.load`` runs only when ``weights_only=`` raised
    TypeError (torch < 1.13), so 2.6's flip of its default never reaches it. A handler for
    another error (a checkpoint that does not load weights-only) does run on 2.6."""
    codebase(tmp_path, FALLBACK)
    result = run_cli("impact", str(V26_LOAD), "--code", str(tmp_path / "code"),
                     "--format", "json")
    lines = sorted(use["line"] for item in json.loads(result.stdout)["items"]
                   for use in item.get("affects", []))
    assert lines == [13], lines


FINAL_DICT = {"onnx_export.py": """\
    import torch

    def gen_random_batch(size):
        batch = {"input_ids": torch.zeros(size), "attention_mask": torch.ones(size)}
        return batch

    def export(model, x, path):
        sample_input = gen_random_batch(4)
        torch.onnx.export(model, (sample_input,), path)
        torch.onnx.export(model, (x, {"mask": None}), path)
        torch.onnx.export(model, args=(x, dict(mask=None)), f=path)
        torch.onnx.export(model, (x,), path, kwargs={"mask": None})
        torch.onnx.export(model, (x, sample_input["input_ids"]), path)
        model(*(x, {"mask": None}))
    """}
V250 = Path(__file__).parent / "fixtures" / "releases" / "pytorch" / "v2.5.0.md"


def test_model_keyword_arguments_as_a_final_dict_of_args_are_the_deprecated_way(run_cli,
                                                                                tmp_path):
    """llm-foundry's ONNX test: ``args=(sample_input,)`` where ``sample_input`` is the dict
    ``gen_random_batch`` returns. 2.5 deprecates "model keyword arguments as a final
    dictionary"; ``kwargs=`` is the new way, and a tuple ending in a tensor is not a dict."""
    codebase(tmp_path, FINAL_DICT)
    result = run_cli("impact", str(V250), "--code", str(tmp_path / "code"), "--format", "json")
    uses = {use["line"]: use["tier"] for item in json.loads(result.stdout)["items"]
            for use in item.get("affects", []) if "keyword arguments" in item["text"]}
    assert uses == {9: "check", 10: "check", 11: "check"}, uses



PASSED_ON = {"attention.py": """\
    import torch.nn.functional as F

    def attend(q, k, v, mask, pad, weights):
        F.multi_head_attention_forward(q, k, v, 8, 2, None, None, None, None, False, 0.0,
                                       None, None, key_padding_mask=pad, need_weights=False)
        F.multi_head_attention_forward(q, k, v, 8, 2, None, None, None, None, False, 0.0,
                                       None, None, attn_mask=mask, need_weights=weights)
        F.multi_head_attention_forward(q, k, v, 8, 2, None, None, None, None, False, 0.0,
                                       None, None, key_padding_mask=pad, need_weights=True)
        F.multi_head_attention_forward(q, k, v, 8, 2, None, None, None, None, False, 0.0,
                                       None, None, need_weights=False)
        F.multi_head_attention_forward(q, k, v, 8, 2, None, None, None, None, False, 0.0,
                                       None, None, True, pad, weights, mask)
    """}


def test_a_change_reaches_the_torch_function_that_hands_the_option_on(run_cli, tmp_path):
    """fairseq's attention: F.multi_head_attention_forward merges key_padding_mask into
    attn_mask and calls SDPA with it when it returns no weights, so 2.5's change to fully masked
    rows reaches it; with need_weights=True SDPA is not called, and without a mask nothing is
    masked. fairseq passes the masks by position: with no 2.4 atlas to diff 2.5 against, the
    positions come from the 2.5 atlas itself."""
    codebase(tmp_path, PASSED_ON)
    result = run_cli("impact", str(V250), "--code", str(tmp_path / "code"), "--format", "json")
    uses = {use["line"]: use for item in json.loads(result.stdout)["items"]
            for use in item.get("affects", []) if "_safe_softmax" in item["text"]}
    assert sorted(uses) == [4, 6, 12], uses
    assert uses[12]["why"].startswith("passes attn_mask by position (argument 17)")
    assert uses[4]["tier"] == "check" and uses[4]["why"].startswith("passes key_padding_mask=")
    assert "multi_head_attention_forward hands it to scaled_dot_product_attention" in \
        uses[4]["why"]
    assert uses[4]["api"] == "torch.nn.functional.scaled_dot_product_attention"

# ---- the ladder, rung by rung ------------------------------------------------------------
def test_a_stated_removal_the_atlas_contradicts_is_check_and_says_so():
    ladder = Ladder(bundled("v2.10.0"), "v2.10.0")
    evidence = ladder.weigh(Subject(api="torch.ao.quantization", scope="namespace",
                                    effect="removed"))
    assert not evidence.sure
    assert evidence.rung == ("the notes say removed, but the 2.10.0 package still has "
                             "torch.ao.quantization")


def test_a_removal_the_package_shows_is_sure_and_the_unread_package_lets_the_notes_stand():
    removed = Subject(api="torch.onnx.dynamo_export", effect="removed")
    assert Ladder(bundled("v2.9.0"), "v2.9.0").weigh(removed) == Evidence(
        True, "the 2.9.0 package: torch.onnx.dynamo_export is gone")
    unread = Ladder(None, "v2.16.0")
    assert unread.weigh(removed) == Evidence(True, "the notes say so; no 2.16.0 package read yet")
    # The release's own atlas read, none before it (2.5.0 offline): said as that.
    alone = Ladder(None, "v2.5.0", alone=True)
    assert alone.weigh(removed) == Evidence(
        True, "the notes say so; no package before 2.5.0 read to diff it against")
    omits = Subject(api="torch.load", condition="omits", option="weights_only")
    assert alone.weigh(omits) == Evidence(
        False, "the notes' words; no package before 2.5.0 read to diff it against")
    # A default the words alone change waits for the package.
    assert not unread.weigh(omits).sure


def test_a_default_the_package_changes_is_sure_and_one_it_keeps_is_not():
    ladder = Ladder(bundled("v2.9.0"), "v2.9.0")
    dynamo = Subject(api="torch.onnx.export", condition="omits", option="dynamo")
    assert ladder.weigh(dynamo) == Evidence(
        True, "the 2.9.0 package: the default of dynamo is now True, was False")
    load = Ladder(bundled("v2.6.0"), "v2.6.0").weigh(
        Subject(api="torch.load", condition="omits", option="weights_only"))
    assert load == Evidence(False, "the notes' words; the 2.6.0 package shows the same default "
                                   "of weights_only, None")


def test_a_removed_option_the_signature_still_takes_is_check():
    ladder = Ladder(bundled("v2.6.0"), "v2.6.0")
    gone = Subject(api="torch.utils.cpp_extension.include_paths", condition="passes",
                   option="cuda", effect="removed")
    kept = gone.model_copy(update={"option": "device_type"})
    assert ladder.weigh(gone).sure
    # Disputed: only what the option does may have changed (``match.never_spelled``).
    assert ladder.weigh(kept) == Evidence(False, "the notes say device_type is removed, but "
                                         "torch.utils.cpp_extension.include_paths still "
                                         "takes it in the 2.6.0 package", disputed=True)
    assert not ladder.weigh(gone).disputed


def test_a_behaviour_change_is_never_sure():
    ladder = Ladder(bundled("v2.11.0"), "v2.11.0")
    assert ladder.weigh(Subject(api="torch.compile")) == Evidence(
        False, "a behaviour change the 2.11.0 package cannot show")


# ---- wording: the meaning, not the phrase -------------------------------------------------
PLAIN = "The `training` argument of `torch.onnx.export` was removed (#900000)"
REWORDED = [
    "`torch.onnx.export` no longer accepts `training`; pass `export_modules_as_functions` to "
    "`torch.onnx.dynamo_export` instead (#900001)",
    "The `training` argument of `torch.onnx.export` was dropped (#900002)",
    "Support for the `training` argument in `torch.onnx.export` has been removed (#900003)",
    "`torch.onnx.export` stopped accepting the `training` argument (#900004)",
    "`torch.onnx.export` does not take `training` anymore (#900005)",
    "`torch.onnx.export` can no longer take the `training` argument (#900006)",
]


def bc(text: str, kind: str = "bc_breaking") -> ClassifiedItem:
    return ClassifiedItem(text=text, section=("ONNX",), subsystem="onnx", kind=kind,
                          decided_by="rule", confidence=1.0)


@pytest.mark.parametrize("text", REWORDED, ids=[f"#90000{n}" for n in range(1, 7)])
def test_reworded_removals_touch_what_the_plain_wording_touches(text):
    plain = read_subjects(bc(PLAIN)).python
    assert [(s.api, s.condition, s.option, s.effect) for s in plain] == [
        ("torch.onnx.export", "passes", "training", "removed")]
    assert read_subjects(bc(text)).python == plain  # the replacement is never a subject


# Real removals of the shared notes, each said again in words none of the notes uses.
REMOVED_NAMES = [("2.9.0", "Remove `torch.onnx.enable_fake_mode`", "torch.onnx.enable_fake_mode"),
                 ("2.11.0", "`torch.export.export_for_training` has been removed",
                  "torch.export.export_for_training"),
                 ("2.8.0", "`torch.export.export_for_inference` has been removed",
                  "torch.export.export_for_inference")]
NAME_FORMS = ["`{api}` was dropped", "Support for `{api}` has been removed", "`{api}` is gone",
              "We removed `{api}`", "`{api}` has been deleted; use `torch.compile` instead",
              "`{api}` no longer exists", "Dropped `{api}`, deprecated since 2.3",
              "Removed the deprecated `{api}` API", "`{api}` has been eliminated",
              "`{api}` is no longer available"]
REMOVED_OPTIONS = [("2.11.0", "Remove `is_causal` flag from `varlen_attn`",
                    "torch.nn.attention.varlen_attn", "is_causal"),
                   ("2.11.0", "Remove the `fallback` option from `torch.onnx.export`",
                    "torch.onnx.export", "fallback"),
                   ("2.5.0", "The `op_level_debug` option from `torch.onnx.ExportOptions`",
                    "torch.onnx.ExportOptions", "op_level_debug")]
OPTION_FORMS = ["`{api}` no longer accepts `{opt}`; pass `mode` to `torch.compile` instead",
                "The `{opt}` argument of `{api}` was dropped",
                "Support for the `{opt}` argument in `{api}` has been removed",
                "`{api}` stopped accepting the `{opt}` argument",
                "`{api}` does not take `{opt}` anymore",
                "`{api}` can no longer take the `{opt}` parameter",
                "Removed the `{opt}` keyword from `{api}`",
                "Passing `{opt}` to `{api}` is no longer supported",
                "`{opt}` is no longer accepted by `{api}`", "Dropped the `{opt}` kwarg of `{api}`",
                "`{api}`: the `{opt}` argument is gone"]


def subjects_of(item: ClassifiedItem) -> list[tuple[str, str, str | None, str]]:
    return [(s.api, s.condition, s.option, s.effect) for s in read_subjects(item).python]


@pytest.mark.parametrize(("release", "piece", "api", "option", "form"), [
    *((release, piece, api, None, form) for release, piece, api in REMOVED_NAMES
      for form in NAME_FORMS),
    *((release, piece, api, option, form) for release, piece, api, option in REMOVED_OPTIONS
      for form in OPTION_FORMS)])
def test_a_real_removal_said_in_other_words_touches_what_its_own_words_touch(
        release, piece, api, option, form):
    item = item_of(release, piece)
    own = subjects_of(item)
    assert own == [(api, "passes" if option else "uses", option, "removed")]
    reworded = item.model_copy(update={"text": form.format(api=api, opt=option) + " (#900020)"})
    assert subjects_of(reworded) == own


@pytest.mark.parametrize("text", [
    "Add a framework so that options of `torch.onnx.export` can be marked deprecated (#900010)",
    "Introduce a mechanism to deprecate keyword arguments of `torch.load` with a warning "
    "(#900011)",
])
def test_an_item_bringing_a_mechanism_changes_nothing_it_names(text):
    assert not read_subjects(bc(text, "deprecation"))


# ---- conditions read in the code ---------------------------------------------------------
MESH = """\
    import torch.distributed as dist
    from torch.distributed.device_mesh import DeviceMesh

    def mesh():
        {setup}
        return DeviceMesh("cuda", [0, 1])
    """
MESH_ITEM = ("2.11.0", "`DeviceMesh` now stores a process group registry")


@pytest.mark.parametrize(("setup", "expected"), [
    ("dist.init_process_group('nccl')", {}),  # the groups exist before the mesh
    ("pass", {("mesh.py", 2): "mentions", ("mesh.py", 6): "check"}),
], ids=["initialises", "skips"])
def test_a_change_to_code_that_skips_a_call_reaches_only_code_that_never_makes_it(
        tmp_path, setup, expected):
    analyzer = codebase(tmp_path, {"mesh.py": MESH.format(setup=setup)})
    assert tiers(affects(analyzer, "v2.11.0", item_of(*MESH_ITEM))) == expected


def test_a_namespace_reaches_the_names_that_alias_into_it(tmp_path):
    analyzer = codebase(tmp_path, {"quant.py": """\
        from torch import quantization as quant

        config = quant.QConfig(activation=None, weight=None)
        """})
    found = affects(analyzer, "v2.8.0",
                    item_of("2.8.0", "`torch.ao.quantization` is deprecated"))
    assert tiers(found) == {("quant.py", 3): "check"}
    assert found[0].why.startswith("calls torch.quantization.QConfig, deprecated in v2.8.0")


def test_torchscript_markers_that_do_nothing_in_eager_are_mentions(tmp_path):
    analyzer = codebase(tmp_path, {"model.py": """\
        import torch

        class Model(torch.nn.Module):
            @torch.jit._drop
            def debug(self):
                return torch.jit._unwrap_optional(self.x)
        """})
    found = affects(analyzer, "v2.10.0", item_of("2.10.0", "`torch.jit` is not guaranteed"))
    assert {use.tier for use in found} <= {"mentions"}


def test_a_stated_removal_of_a_function_that_already_only_raises_is_confirmed():
    """2.15.0's diff has no change to torch.cholesky (it only raised since 2.14.1); notes that
    say it is removed are confirmed by the atlas, not by the diff."""
    ladder = Ladder(bundled("v2.15.0"), "v2.15.0")
    assert ladder.weigh(Subject(api="torch.cholesky", effect="removed")) == Evidence(
        True, "the 2.15.0 package: torch.cholesky now only raises")


def test_a_release_whose_own_atlas_is_read_but_none_before_it_says_so(tmp_path):
    """2.5.0, the oldest bundled release, offline: its atlas is read (the positions of its
    parameters), the 2.4 one cannot be, so there is no diff; the words stand, and each use's
    ``why`` says what is missing, not that 2.5.0's package was never read."""
    source = AtlasSource(store=None, index=None, clock=lambda: datetime.now(UTC))
    own = own_knowledge(source, "pytorch/pytorch", "v2.5.0")
    assert own is not None
    analyzer = codebase(tmp_path, {"attn.py": """\
        import torch.nn.functional as F

        def attend(q, k, v, mask):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        """})
    item = item_of("2.5.0", "call _safe_softmax from SDPA")
    alone = ReleaseAnalysis(analyzer, "v2.5.0", None, knowledge=own).of(item)
    unread = ReleaseAnalysis(analyzer, "v2.5.0", None).of(item)
    assert alone is not None and unread is not None
    assert [use.why for use in alone.affects] == [
        "passes attn_mask=, its behaviour changed in v2.5.0 (the notes' words; no package "
        "before 2.5.0 read to diff it against)"]
    assert [use.why for use in unread.affects] == [
        "passes attn_mask=, its behaviour changed in v2.5.0 (the notes' words; no 2.5.0 "
        "package read yet)"]


# ---- environment changes: the wheel's metadata is the package's word -------------------------
@pytest.mark.parametrize(("release", "subject", "rung"), [
    # 2.9.0's wheels state Requires-Python >=3.10: the dropped 3.9 is proven.
    ("v2.9.0", EnvironmentSubject(kind="python", minimum="3.10"),
     "the 2.9.0 package: Requires-Python >=3.10"),
    # A floor the wheel does not state (yet): the notes' word, with what the wheel says.
    ("v2.7.0", EnvironmentSubject(kind="python", minimum="3.10"),
     "the notes say so; the 2.7.0 package still states Requires-Python >=3.9.0"),
    ("v2.9.0", EnvironmentSubject(kind="package", name="sympy", specifier=">=1.13.3"),
     "the 2.9.0 package: Requires-Dist sympy>=1.13.3"),
    # A minimum the wheel does not require is not proven by a looser requirement.
    ("v2.9.0", EnvironmentSubject(kind="package", name="sympy", specifier=">=1.14"),
     "the notes say so"),
    ("v2.9.0", EnvironmentSubject(kind="renamed_package", name="pytorch-triton",
                                  new_name="triton"),
     "the 2.9.0 package: Requires-Dist triton==3.5.0"),
    # What a wheel cannot state: a conda channel, CUDA builds.
    ("v2.9.0", EnvironmentSubject(kind="channel", name="pytorch"), "the notes say so"),
    ("v2.9.0", EnvironmentSubject(kind="cuda", removed="11.8"), "the notes say so"),
], ids=["python-proven", "python-unstated", "package", "package-looser", "renamed",
        "channel", "cuda"])
def test_an_environment_change_names_the_wheel_metadata_that_proves_it(release, subject, rung):
    assert Ladder(bundled(release), release).weigh(subject) == Evidence(True, rung)


def test_an_environment_change_of_an_unread_package_rests_on_the_notes():
    dropped = EnvironmentSubject(kind="python", minimum="3.11")
    assert Ladder(None, "v2.16.0").weigh(dropped) == Evidence(
        True, "the notes say so; no 2.16.0 package read yet")


def test_a_release_read_alone_weighs_its_environment_against_its_own_wheel():
    # 2.5.0 has no cp38 wheels, yet its metadata still states >=3.8.0: the notes' word, and
    # the wheel's, both said; no diff is needed to read what the release's own wheel states.
    source = AtlasSource(store=None, index=None, clock=lambda: datetime.now(UTC))
    own = source.known("torch", "2.5.0")
    assert own is not None
    ladder = Ladder(None, "v2.5.0", alone=True, own=own)
    assert ladder.weigh(EnvironmentSubject(kind="python", minimum="3.9")) == Evidence(
        True, "the notes say so; the 2.5.0 package still states Requires-Python >=3.8.0")


def test_a_declared_python_floor_says_the_rung_it_stands_on(tmp_path):
    analyzer = codebase(tmp_path, {"pyproject.toml": """\
        [project]
        name = "app"
        requires-python = ">=3.9"
        dependencies = ["torch>=2.4"]
        """})
    found = affects(analyzer, "v2.9.0", item_of("2.9.0", "Min supported Python version is now"))
    assert [(use.path, use.line, use.tier) for use in found] == [("pyproject.toml", 3, "breaks")]
    assert found[0].why.endswith("(the 2.9.0 package: Requires-Python >=3.10)")


def test_a_python_floor_reaches_only_packages_that_run_a_newer_torch(tmp_path):
    """A client package beside the server that neither requires torch nor holds code using
    it, and a package pinning torch to an older release, are not reached by 2.9's floor;
    the package whose code uses an unpinned torch is."""
    analyzer = codebase(tmp_path, {
        "pyproject.toml": '[project]\nname = "app"\nrequires-python = ">=3.9"\n'
                          'dependencies = ["torch>=2.4"]\n',
        "app/model.py": "import torch\n",
        "clients/python/pyproject.toml": '[tool.poetry.dependencies]\npython = "^3.9"\n'
                                         'aiohttp = "^3.11"\n',
        "clients/python/client/api.py": "import aiohttp\n",
        "server/pyproject.toml": '[project]\nname = "server"\nrequires-python = ">=3.9"\n'
                                 '[project.optional-dependencies]\ntorch = ["torch==2.7.0"]\n',
        "server/serve.py": "import torch\n"})
    found = affects(analyzer, "v2.9.0", item_of("2.9.0", "Min supported Python version is now"))
    assert [(use.path, use.tier) for use in found] == [("pyproject.toml", "breaks")]
