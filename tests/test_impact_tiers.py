"""Tiers on real notes items against code written like real code: removed parameters through
subclasses and positions (with a hand-made ``ApiKnowledge``), changed defaults relied on or
forwarded, changes limited to inputs the code cannot make, and references that do not call."""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_impact_subjects import item_of

from watcher.impact import ImpactAnalyzer, ReleaseAnalysis, package_changes
from watcher.impact.analysis.item import CodeRoot
from watcher.impact.atlas import AtlasSource
from watcher.impact.knowledge import NoKnowledge, Parameter, Signature
from watcher.impact.model import Subject
from watcher.impact.reach.match import confirmed_option
from watcher.impact.subjects import read_subjects
from watcher.models import Affect, ClassifiedItem

SCHEDULERS = "torch.optim.lr_scheduler"


SIGNATURES = {
    f"{SCHEDULERS}.StepLR": Signature((Parameter("optimizer"), Parameter("step_size"),
                                       Parameter("gamma", default="0.1"),
                                       Parameter("last_epoch", default="-1"),
                                       Parameter("verbose", default='"deprecated"'))),
    f"{SCHEDULERS}.ReduceLROnPlateau": Signature((
        Parameter("optimizer"), Parameter("mode", default='"min"'),
        Parameter("verbose", "keyword_only", default='"deprecated"'))),
}


class Atlas:
    """A tiny hand-made API knowledge: LRScheduler and two subclasses, the 2.6 signatures."""

    def resolve(self, name: str) -> str | None:
        if name.startswith("torch.optim.lr_scheduler."):
            return name
        return None

    def names_of(self, api: str) -> list[str]:
        return [api]

    def subclasses(self, cls: str) -> set[str]:
        if cls == f"{SCHEDULERS}.LRScheduler":
            return {f"{SCHEDULERS}.StepLR", f"{SCHEDULERS}.ReduceLROnPlateau"}
        return set()

    def signature(self, api: str) -> Signature | None:
        return SIGNATURES.get(api)

    def deprecated(self, api: str) -> str | None:
        return None

    def module_of(self, api: str) -> str | None:
        return api.rpartition(".")[0]


def analyzer(tmp_path: Path, files: dict[str, str], knowledge: object = None) -> ImpactAnalyzer:
    root = tmp_path / "code"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return ImpactAnalyzer([CodeRoot("code", root)],
                          knowledge=knowledge or NoKnowledge())  # type: ignore[arg-type]


def uses(analyzer: ImpactAnalyzer, release: str, piece: str) -> list[Affect]:
    found = analyzer.impact(item_of(release, piece), f"v{release}")
    assert found is not None
    return found.affects


def tiers(affects: list[Affect]) -> dict[tuple[str, int], str]:
    return {(use.path, use.line): use.tier for use in affects}


SCHEDULING = {"train.py": """\
    import torch
    from torch.optim.lr_scheduler import ReduceLROnPlateau, StepLR

    def schedulers(optim, options):
        plateau = ReduceLROnPlateau(optim, mode="max", verbose=True)
        step = StepLR(optim, 30, 0.1, -1, True)
        quiet = StepLR(optim, step_size=30)
        forwarded = torch.optim.lr_scheduler.StepLR(optim, **options)
        plateau.print_lr()
        return plateau, step, quiet, forwarded
    """}
LR_ITEM = ("2.7.0", "Finish deprecation of `LRScheduler.print_lr()`")


def test_a_removed_constructor_parameter_reaches_every_subclass(tmp_path):
    affects = uses(analyzer(tmp_path, SCHEDULING, Atlas()), *LR_ITEM)
    assert tiers(affects) == {("train.py", 5): "breaks", ("train.py", 6): "breaks",
                              ("train.py", 8): "check", ("train.py", 9): "check"}
    why = {use.line: use.why for use in affects}
    # No package read: the notes' stated removal stands, and says so.
    assert why[5] == ("passes verbose=, removed in v2.7.0 (the notes say so; no 2.7.0 package "
                      "read yet); ReduceLROnPlateau derives from LRScheduler")
    assert why[6].startswith("passes verbose by position (argument 5), removed in v2.7.0")
    assert why[8].startswith("forwards **kwargs to StepLR, which may carry verbose=")
    # plateau.print_lr(): a method matched by its name alone is a guess about the object's type
    assert why[9] == ("calls .print_lr(), removed in v2.7.0 (the notes say so; no 2.7.0 package "
                      "read yet); matched by the method's name only: the object is not known "
                      "to be LRScheduler")


def test_without_knowledge_only_the_named_class_and_the_method_name_match(tmp_path):
    affects = uses(analyzer(tmp_path, SCHEDULING), *LR_ITEM)
    assert tiers(affects) == {("train.py", 9): "check"}  # print_lr by method name: a guess


ONNX = {"export.py": """\
    import torch

    def export(model, args, path, options):
        torch.onnx.export(model, args, path)
        torch.onnx.export(model, args, path, dynamo=False, opset_version=17, fallback=True)
        torch.onnx.export(model, args, path, **options)
    """}


@pytest.mark.parametrize(("release", "piece", "relied"), [
    # The package shows the opset's default unchanged (None, chosen at run time): the words
    # alone, so check.
    ("2.8.0", "Default opset in `torch.onnx.export`", "check"),
    ("2.8.0", "The `dynamo=False` (current default) option", "check"),  # only warns now
    # The 2.9.0 package changes dynamo's default from False to True: proven, breaks.
    ("2.9.0", "Default to `dynamo=True` for ONNX exporter", "breaks"),
    ("2.9.0", "Set default opset to 20", "check"),
    ("2.10.0", "`fallback=False` is now the default", "check"),  # the package: same default
], ids=["2.8-opset", "2.8-dynamo-deprecated", "2.9-dynamo", "2.9-opset", "2.10-fallback"])
def test_changed_onnx_defaults_flag_calls_relying_on_them(tmp_path, release, piece, relied):
    affects = with_package(analyzer(tmp_path, ONNX), release, piece)
    found = tiers(affects)
    assert found[("export.py", 4)] == relied
    assert found[("export.py", 6)] == "check"  # **options may carry it
    if "current default" in piece:  # passing dynamo= is deprecated too: check
        assert found[("export.py", 5)] == "check"
    else:
        assert ("export.py", 5) not in found  # it says what it wants
    why = next(use.why for use in affects if use.line == 4)
    assert why.startswith("relies on the default of ")
    if relied == "breaks":
        assert why.endswith("(the 2.9.0 package: the default of dynamo is now True, was False)")


def with_package(analyzer: ImpactAnalyzer, release: str, piece: str) -> list[Affect]:
    """The uses of one item of ``release`` with its package joined (the bundled atlases)."""
    source = AtlasSource(store=None, index=None, clock=lambda: datetime.now(UTC))
    package = package_changes(source, "pytorch/pytorch", f"v{release}")
    assert package is not None
    found = ReleaseAnalysis(analyzer, f"v{release}", package).of(item_of(release, piece))
    assert found is not None
    return found.affects


FLEX = {"attention.py": """\
    import torch
    from torch.nn.attention.flex_attention import BlockMask, flex_attention

    def attend(q, k, v, mask: BlockMask):
        if isinstance(mask, BlockMask):
            return flex_attention(q, k, v, block_mask=mask)
        return None
    """}
FLEX_ITEM = ("2.10.0", "Remove Nested Jagged Tensor support")


def test_where_the_code_makes_nested_tensors_calls_are_check_at_most(tmp_path):
    files = {**FLEX, "batch.py": "import torch\nx = torch.nested.nested_tensor([a, b])\n"}
    affects = uses(analyzer(tmp_path, files), *FLEX_ITEM)
    assert tiers(affects)[("attention.py", 6)] == "check"
    assert {use.tier for use in affects if use.line != 6} == {"mentions"}
    assert "only with nested tensors, which the code can make (torch.nested)" in next(
        use.why for use in affects if use.line == 6)


SCALER = {"amp.py": """\
    import torch

    scaler = torch.amp.GradScaler("cuda")
    scaler.scale(loss).backward()
    """}
SCALER_ITEM = ("2.5.0", "Add support to `GradScaler`")


def test_code_that_sets_the_state_is_check(tmp_path):
    files = {**SCALER, "opt.py": "def prime(optimizer):\n    optimizer.grad_scale = 2.0\n"}
    affects = uses(analyzer(tmp_path, files), *SCALER_ITEM)
    assert tiers(affects) == {("amp.py", 3): "check"}


SCRIPTED = {
    "scripted.py": """\
        import torch

        def compile_it(model, example):
            return torch.jit.script(model), torch.jit.trace(model, example)
        """,
    "marked.py": """\
        import torch
        from torch.jit import Final

        class Block(torch.nn.Module):
            size: Final[int] = 3

            @torch.jit.ignore
            def debug(self):
                return torch.jit.is_scripting()

            def forward(self, x):
                return x if torch.jit.isinstance(x, list[int]) else [x]
        """,
    "interface.py": """\
        import torch

        @torch.jit.interface
        class Step(torch.nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                pass
        """,
}


def test_the_torchscript_deprecation_tells_calls_from_marks(tmp_path):
    affects = uses(analyzer(tmp_path, SCRIPTED), "2.10.0", "`torch.jit` is not guaranteed")
    by_file: dict[str, set[str]] = {}
    for use in affects:
        by_file.setdefault(use.path, set()).add(use.tier)
    # torch.jit.isinstance is a plain type check out of TorchScript; @torch.jit.interface
    # compiles its class when the module is imported.
    assert by_file == {"scripted.py": {"check"}, "marked.py": {"mentions"},
                       "interface.py": {"check"}}


def test_a_removed_name_breaks_every_use_imports_included(tmp_path):
    files = {"io.py": """\
        from torch.onnx import dynamo_export
        import torch

        def export(model: torch.onnx.ONNXProgram):
            return dynamo_export(model)
        """}
    affects = uses(analyzer(tmp_path, files), "2.9.0", "Remove `torch.onnx.dynamo_export`")
    assert tiers(affects) == {("io.py", 1): "breaks", ("io.py", 5): "breaks"}
    assert next(use.why for use in affects if use.line == 1) == (
        "imports torch.onnx.dynamo_export, removed in v2.9.0 (the notes say so; no 2.9.0 "
        "package read yet)")
    # With the package read, the removal is the package's: the 2.9.0 wheel lacks it.
    confirmed = with_package(analyzer(tmp_path / "again", files), "2.9.0",
                             "Remove `torch.onnx.dynamo_export`")
    assert tiers(confirmed) == tiers(affects)
    assert next(use.why for use in confirmed if use.line == 1) == (
        "imports torch.onnx.dynamo_export, removed in v2.9.0 (the 2.9.0 package: "
        "torch.onnx.dynamo_export is gone)")


def test_signature_positions_stop_at_keyword_only_and_star_args():
    signature = Signature((Parameter("a"), Parameter("b", "positional_only"),
                           Parameter("args", "var_positional"), Parameter("c", "keyword_only")))
    assert signature.position("a") == 0
    assert signature.position("b") == 1
    assert signature.position("c") is None
    assert signature.position("missing") is None


LOADERS = {"data.py": """\
    import torch
    from torch.utils.data import DataLoader

    def loaders(dataset, config, **kwargs):
        params = {"batch_size": 8, "num_workers": 2}
        params["pin_memory"] = True
        a = DataLoader(dataset, **params)
        params.update(pin_memory_device="cuda")
        b = DataLoader(dataset, **params)
        c = DataLoader(dataset, **kwargs)
        d = DataLoader(dataset, **config)
        return a, b, c, d
    """}


def test_a_dict_built_in_the_file_passes_its_keys_and_a_forwarded_kwargs_may(tmp_path):
    affects = uses(analyzer(tmp_path, LOADERS), "2.9.0", "Deprecate `pin_memory_device` param")
    # a: the dict's keys are known and lack the option; b: update() added it; c forwards the
    # caller's **kwargs; d passes a dict of unknown keys.
    assert tiers(affects) == {("data.py", 9): "check", ("data.py", 10): "check",
                              ("data.py", 11): "check"}
    assert next(use.why for use in affects if use.line == 9).startswith(
        "passes pin_memory_device=, deprecated")


SPREAD = {"load.py": """\
    import torch
    from torch.utils.data import DataLoader

    def loader_options(workers):
        if workers > 0:
            return {"multiprocessing_context": "forkserver"}
        return {}

    def options_or_none(workers):
        if workers:
            return {"pin_memory_device": "cuda"}

    def load(path, dataset, workers, safe):
        options = {"weights_only": True} if safe else {}
        state = torch.load(path, **options)
        other = torch.load(path, **({"mmap": True} if safe else {}))
        a = DataLoader(dataset, num_workers=workers, **loader_options(workers))
        b = DataLoader(dataset, **options_or_none(workers))
        return state, other, a, b
    """}


def test_a_spread_dict_says_the_keys_any_of_its_branches_or_returns_carry(tmp_path):
    code = analyzer(tmp_path, SPREAD)
    # line 15 passes weights_only on some path (the caller says what it wants); line 16's
    # literal dict never carries it, so it relies on the flipped default (check: the words
    # alone say the default changed; torch.load's signature keeps None in both packages).
    flip = uses(code, "2.6.0-torch-load", "Flip default torch.load")
    assert tiers(flip) == {("load.py", 16): "check"}
    assert flip[0].why.startswith("relies on the default of weights_only, changed in v2.6.0")
    # loader_options() returns only multiprocessing_context; options_or_none() can return
    # None (falls off its end), so what it spreads is unknown.
    assert tiers(uses(code, "2.9.0", "Deprecate `pin_memory_device` param")) == {
        ("load.py", 18): "check"}


PICKLERS = {"load.py": """\
    import dill
    import pickle
    import torch

    def load(path, pickler=None):
        a = torch.load(path, pickle_module=dill)
        b = torch.load(path, None, pickle)
        c = torch.load(path, pickle_module=pickler)
        d = torch.load(path, pickle_module=None)
        e = torch.load(path)
        return a, b, c, d, e
    """}


class Loading(NoKnowledge):
    """torch.load where the package defines it, with its 2.6 signature's head."""

    def resolve(self, name: str) -> str | None:
        return "torch.serialization.load" if name in ("torch.load", "torch.serialization.load") \
            else None

    def names_of(self, api: str) -> list[str]:
        return ["torch.serialization.load", "torch.load"] if api == "torch.serialization.load" \
            else []

    def signature(self, api: str) -> Signature | None:
        return Signature((Parameter("f"), Parameter("map_location", default="None"),
                          Parameter("pickle_module", default="None"),
                          Parameter("weights_only", "keyword_only", default="None"))) \
            if api == "torch.serialization.load" else None


def test_a_call_passing_its_own_pickle_module_keeps_weights_only_off(tmp_path):
    # torch.load computes a weights_only not given as `pickle_module is None` (settled_by in
    # config/impact.toml): the flipped default reaches only calls that may pass no module.
    code = analyzer(tmp_path, PICKLERS, Loading())
    flip = uses(code, "2.6.0-torch-load", "Flip default torch.load")
    assert sorted(tiers(flip)) == [("load.py", 8), ("load.py", 9), ("load.py", 10)]


def test_a_function_handed_on_as_a_value_is_check_for_a_changed_default(tmp_path):
    """CrypTen's ``load(f, load_closure=torch.load)`` calls ``load_closure(f)``: the calls made
    through a handed-on ``torch.load`` are not seen, so whether they pass ``weights_only`` is
    not known. A partial is read as the call it binds; an import or a test of the name is no
    call at all."""
    code = analyzer(tmp_path, {"load.py": """\
        import functools
        import torch
        def load(f, load_closure=torch.load, **kwargs):
            return load_closure(f, **kwargs)
        loaders = [torch.load, None]
        safe = functools.partial(torch.load, weights_only=True)
        alias = torch.load
        from torch import load
        if torch.load is None:
            pass
        """}, Loading())
    flip = uses(code, "2.6.0-torch-load", "Flip default torch.load")
    assert tiers(flip) == {("load.py", 3): "check", ("load.py", 5): "check"}
    assert all("hands torch.load on as a value" in use.why for use in flip)


def test_calls_through_a_local_name_bound_to_a_function_are_its_calls(tmp_path):
    """trl's ``loading_func = safe_load_file if use_safe else torch.load``, called with
    ``weights_only=True`` among its keywords: the calls through the name are read as calls of
    each function it may be, within the function that binds it; the name handed on is the
    function handed on. A parameter of the same name elsewhere is not the alias."""
    code = analyzer(tmp_path, {"load.py": """\
        import torch
        from safetensors.torch import load_file as safe_load_file
        def plain(path):
            loader = torch.load
            return loader(path)
        def chosen(path, use_safe):
            loading_func = safe_load_file if use_safe else torch.load
            load_kwargs = {} if use_safe else {"map_location": "cpu", "weights_only": True}
            return loading_func(path, **load_kwargs)
        def passed(path):
            fn = torch.load
            return run(fn, path)
        def elsewhere(loader, path):
            return loader(path)
        def rebound(path):
            loader = torch.load
            loader = pickle.load
            return loader(path)
        def direct(path):
            return torch.load(path)
        """}, Loading())
    flip = uses(code, "2.6.0-torch-load", "Flip default torch.load")
    found = tiers(flip)
    assert found == {("load.py", 5): found[("load.py", 20)], ("load.py", 12): "check",
                     ("load.py", 20): found[("load.py", 20)]}  # through the name as direct
    assert "relies on the default of weights_only" in flip[0].why


def test_fallback_is_no_matter_to_the_exporter_dynamo_false_picks(tmp_path):
    files = {"export.py": textwrap.dedent("""\
        import torch

        def export(model, args, path):
            torch.onnx.export(model, args, path, dynamo=False)
            torch.onnx.export(model, args, path)
        """)}
    code = analyzer(tmp_path, files)
    item = item_of("2.10.0", "`fallback=False` is now the default")
    # Its first line alone: what settles it comes from the vocabulary, not from the prose's
    # "uses the `dynamo=True` option".
    item = item.model_copy(update={"text": item.text.split("\n")[0]})
    assert "dynamo" not in item.text
    found = code.impact(item, "v2.10.0")
    assert found is not None and tiers(found.affects) == {("export.py", 5): "check"}


EXPORTS = {"export.py": """\
    import torch

    def export(model, args, path, flag):
        torch.onnx.export(model, args, path, dynamo=True)
        torch.onnx.export(model, args, path, dynamo=False)
        torch.onnx.export(model, args, path, dynamo=flag)
    """}


def test_a_deprecated_value_touches_calls_passing_it_not_other_constants(tmp_path):
    affects = uses(analyzer(tmp_path, EXPORTS), "2.8.0",
                   "The `dynamo=False` (current default) option")
    found = tiers(affects)
    assert ("export.py", 4) not in found  # dynamo=True is the way forward
    assert found[("export.py", 5)] == "check"
    assert found[("export.py", 6)] == "check"
    assert next(use.why for use in affects if use.line == 6).startswith("passes dynamo= (computed")


def test_a_bare_name_is_not_flagged_for_what_a_forwarded_kwargs_may_carry(tmp_path):
    files = {"x.py": "import torch\n\ndef go(m, a, **kw):\n    torch.onnx.export(m, a, **kw)\n"}
    affects = uses(analyzer(tmp_path, files), "2.9.0", "Switch off runtime asserts by default")
    assert affects == []


SOLVES = {"solve.py": "import torch\nx = torch.linalg.solve_triangular(a, b, upper=False)\n"}
SOLVE_ITEM = ("2.11.0", "`torch.linalg.solve_triangular` and `torch.triangular_solve`")


def test_a_backend_no_longer_dispatched_to_reaches_only_code_that_selects_it(tmp_path):
    files = {**SOLVES, "setup.py": "import torch\n"
             "torch.backends.cuda.preferred_linalg_library('magma')\n"}
    affects = uses(analyzer(tmp_path, files), *SOLVE_ITEM)
    assert tiers(affects) == {("solve.py", 2): "check"}
    assert "only with the MAGMA backend, which the code selects" in affects[0].why


WRAPPER = {"onnx.py": """\
    import warnings
    import torch

    def to_onnx(model, args, buffer, **kwargs):
        options = {"opset_version": 17, "do_constant_folding": True}
        options.update(kwargs)
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        torch.onnx.export(model, args, buffer, **options)
    """}


def test_a_dict_updated_from_kwargs_keeps_its_known_keys(tmp_path):
    code = analyzer(tmp_path, WRAPPER)
    assert uses(code, "2.8.0", "Default opset in `torch.onnx.export`") == []  # passes it
    assert tiers(uses(code, "2.10.0", "`fallback=False` is now the default")) == {
        ("onnx.py", 8): "check"}  # may carry fallback, else relies on the default


WRAPPED = {"convert.py": """\
    import torch

    def to_onnx(model, inputs, path, opset_version=None, dynamo=False):
        torch.onnx.export(model, inputs, path, opset_version=opset_version)

    def pinned(model, inputs, path):
        torch.onnx.export(model, inputs, path, opset_version=None)
        torch.onnx.export(model, inputs, path, opset_version=17)
    """}


class OnnxAtlas(Atlas):
    """torch.onnx.export's signature, its opset_version defaulting to None (as 2.8 has it)."""

    def resolve(self, name: str) -> str | None:
        return name if name.startswith("torch.onnx.") else super().resolve(name)

    def signature(self, api: str) -> Signature | None:
        if api == "torch.onnx.export":
            return Signature((Parameter("model"), Parameter("args", default="()"),
                              Parameter("f", default="None"),
                              Parameter("opset_version", "keyword_only", default="None")))
        return super().signature(api)


def test_passing_none_where_none_is_the_default_relies_on_the_default(tmp_path):
    found = uses(analyzer(tmp_path, WRAPPED, OnnxAtlas()), "2.8.0",
                 "Default opset in `torch.onnx.export`")
    # A wrapper's parameter defaulting to None passes None unless its caller gives a value;
    # None itself is the signature's default; 17 says what it wants.
    assert tiers(found) == {("convert.py", 4): "check", ("convert.py", 7): "check"}
    assert next(use.why for use in found if use.line == 7).startswith(
        "passes opset_version=None, its default, changed in v2.8.0")
    assert next(use.why for use in found if use.line == 4).startswith(
        "passes opset_version= from a parameter defaulting to None")


def test_a_class_named_without_being_made_is_a_mention(tmp_path):
    affects = uses(analyzer(tmp_path, WRAPPER), "2.10.0", "`torch.jit` is not guaranteed")
    assert tiers(affects) == {("onnx.py", 7): "mentions"}


@pytest.mark.parametrize(("files", "item"), [
    (FLEX, FLEX_ITEM), (SCALER, SCALER_ITEM), (SOLVES, SOLVE_ITEM)],
    ids=["no-nested-tensor-made", "grad-scale-never-set", "magma-never-selected"])
def test_a_limited_change_flags_nothing_where_the_code_cannot_meet_its_limit(tmp_path, files,
                                                                              item):
    assert uses(analyzer(tmp_path, files), *item) == []


def test_what_an_option_does_changed_reaches_calls_passing_it_unless_none(tmp_path):
    files = {"attn.py": """\
        import torch.nn.functional as F

        def attend(q, k, v, mask):
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            b = F.scaled_dot_product_attention(q, k, v, attn_mask=None)
            return a, b
        """}
    item = ClassifiedItem(
        text="The `attn_mask` passed to `torch.nn.functional.scaled_dot_product_attention` is "
             "now broadcast over the heads (#131863)", section=("nn",), subsystem="nn",
        kind="bc_breaking", decided_by="rule", confidence=1.0)
    found = analyzer(tmp_path, files).impact(item, "v2.5.0")
    assert found is not None
    affects = found.affects
    assert tiers(affects) == {("attn.py", 4): "check"}
    assert affects[0].why == ("passes attn_mask=, its behaviour changed in v2.5.0 (the notes' "
                              "words; no 2.5.0 package read yet)")
    # Fully masked rows now give zeros, not NaN: a state the code can reach, so check.
    sdpa = uses(analyzer(tmp_path / "again", files), "2.5.0", "call _safe_softmax from SDPA")
    assert tiers(sdpa) == {("attn.py", 4): "check"}


class TensorMaking(NoKnowledge):
    """``Tensor.new_tensor`` where the package defines it, with its signature."""

    def resolve(self, name: str) -> str | None:
        return "torch._C.TensorBase.new_tensor" if name.endswith(".new_tensor") else None

    def signature(self, api: str) -> Signature | None:
        return Signature((Parameter("data"), Parameter("dtype", default="None"),
                          Parameter("device", default="None"))) \
            if api == "torch._C.TensorBase.new_tensor" else None


NEW_TENSORS = {"boxes.py": """\
    import torch
    def weights(scores, class_weight, means):
        a = scores.new_tensor(class_weight, device=scores.device)
        b = scores.new_tensor(means)
        c = scores.new_tensor(means, device="cpu")
        return a, b, c
    """}


def test_a_default_named_in_plain_words_spares_calls_passing_that_option(tmp_path):
    """2.7's "Change `torch.Tensor.new_tensor()` to be on the given Tensor's device by default"
    (mmhuman3d's ``cls_score.new_tensor(w, device=cls_score.device)`` was flagged): the
    package's signature has ``device``, so only a call leaving it out relies on the changed
    default. With no signature to confirm the word names a parameter, every call stays."""
    found = uses(analyzer(tmp_path / "known", NEW_TENSORS, TensorMaking()), "2.7.0",
                 "Change `torch.Tensor.new_tensor()`")
    assert tiers(found) == {("boxes.py", 4): "check"}
    assert "relies on the default of device" in found[0].why
    unknown = uses(analyzer(tmp_path / "unknown", NEW_TENSORS), "2.7.0",
                   "Change `torch.Tensor.new_tensor()`")
    assert sorted(tiers(unknown)) == [("boxes.py", 3), ("boxes.py", 4), ("boxes.py", 5)]


@pytest.mark.parametrize(("title", "option"), [
    ("Change `torch.Tensor.new_tensor()` to be on the given Tensor's device by default",
     "device"),
    ("The default dtype of `torch.foo()` is now float32", "dtype"),
    ("`torch.foo()` now uses strict by default and its device by default", None),
    ("Change `torch.foo()` to use the input's device", None)])
def test_a_default_change_reads_the_option_its_title_names_in_plain_words(title, option):
    subjects = read_subjects(ClassifiedItem(text=title, subsystem="other", kind="bc_breaking"))
    assert [(s.option, s.worded) for s in subjects.python] == [(option, option is not None)]


def test_a_worded_option_the_signature_lacks_is_a_plain_use():
    """A word before "by default" that is no parameter of the API ("the tanh approximation
    by default" of a function taking ``approximate``) leaves the API's plain use."""
    worded = Subject(api="torch.Tensor.new_tensor", scope="method", condition="omits",
                     option="approximation", worded=True)
    assert confirmed_option(worded, TensorMaking()) == Subject(
        api="torch.Tensor.new_tensor", scope="method")
    named = worded.model_copy(update={"option": "device"})
    assert confirmed_option(named, TensorMaking()) == named
