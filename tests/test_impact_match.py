"""The matcher: which uses of a scanned codebase each subject of an item touches, one affect
per (path, line, api), sorted; and the real pytorch/examples tree against the 2.6 flip of
``torch.load``'s ``weights_only`` default, where TorchFix's TOR102 flags 17 calls."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES

from watcher.impact.code import CodeIndex, scan_codebase
from watcher.impact.knowledge import NoKnowledge
from watcher.impact.model import Subject, Subjects
from watcher.impact.reach.match import find_affects

EXAMPLES = FIXTURES / "codebases" / "examples"

CODE = {
    "train.py": """\
        import functools
        import torch
        import torch.nn.functional as F
        from torch.serialization import load as raw_load
        from torch.ao.quantization import quantize_dynamic
        from torch._export import capture_pre_autograd_graph

        def run(path, model, scheduler, options):
            a = torch.load(path)
            b = torch.load(path, weights_only=True)
            c = torch.load(path, **options)
            d = raw_load(path)
            e = functools.partial(torch.load, map_location="cpu")
            f = functools.partial(torch.load, weights_only=False)
            hook = torch.load
            torch.loads(path)
            torch.load.__doc__
            scheduler.print_lr()
            torch.optim.lr_scheduler.LRScheduler.print_lr(scheduler)
            quantize_dynamic(model)
            capture_pre_autograd_graph(model, ()).module
            F.relu(a, inplace=True)
            with torch._inductor.config.patch(autotune_fallback_to_aten=True):
                pass
            torch.ao.quantization.quantize_fx.prepare_fx(model)
        """,
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> CodeIndex:
    root = tmp_path_factory.mktemp("code")
    for name, text in CODE.items():
        (root / name).write_text(textwrap.dedent(text))
    return scan_codebase(str(root), {})


def lines(index: CodeIndex, *subjects: Subject) -> list[int]:
    return sorted(affect.line for affect in find_affects(Subjects(python=subjects), index, "code"))


def tiers(index: CodeIndex, *subjects: Subject) -> dict[int, str]:
    return {affect.line: affect.tier
            for affect in find_affects(Subjects(python=subjects), index, "code")}


def test_omits_flags_calls_without_the_option_and_without_kwargs(index):
    flip = Subject(api="torch.load", condition="omits", option="weights_only")
    # 9 omits; 10 passes it; 11 may pass it in **options (so: check); 12 imports
    # torch.load from where it is defined; 13 is a partial without it, 14 a partial with it;
    # 15 binds torch.load to a name never used; 16 is torch.loads; 17 is an attribute.
    assert tiers(index, flip) == {9: "breaks", 11: "check", 12: "breaks", 13: "breaks"}


def test_passes_flags_only_calls_that_pass_the_option(index):
    assert tiers(index, Subject(api="torch.load", condition="passes", option="weights_only",
                                effect="removed")) == {10: "breaks", 11: "check", 14: "breaks"}
    assert lines(index, Subject(api="torch.nn.functional.relu", condition="passes",
                                option="inplace")) == [22]
    assert lines(index, Subject(api="torch.load", condition="passes", option=None)) == []


def test_exact_scope_covers_the_name_and_its_attributes_never_a_longer_name(index):
    assert lines(index, Subject(api="torch.load")) == [4, 9, 10, 11, 12, 13, 14, 15, 17]
    # A behaviour change: the import, and the name it is bound to and never used, only
    # mention it.
    assert tiers(index, Subject(api="torch.load")) == {
        4: "mentions", 9: "breaks", 10: "breaks", 11: "breaks", 12: "breaks", 13: "breaks",
        14: "breaks", 15: "mentions", 17: "check"}
    # A removed name: every use breaks, the import too.
    assert set(tiers(index, Subject(api="torch.load", effect="removed")).values()) == {"breaks"}


def test_namespace_scope_covers_everything_under_it(index):
    affects = find_affects(Subjects(python=(Subject(api="torch.ao.quantization",
                                                    scope="namespace"),)), index, "code")
    assert [(a.line, a.code, a.tier) for a in affects] == [  # breaks first, then mentions
        (20, "quantize_dynamic(model)", "breaks"),
        (25, "torch.ao.quantization.quantize_fx.prepare_fx(model)", "breaks"),
        (5, "from torch.ao.quantization import quantize_dynamic", "mentions")]
    assert lines(index, Subject(api="torch.ao.quant", scope="namespace")) == []


def test_config_subjects_touch_patches(index):
    assert lines(index, Subject(api="torch._inductor.config.autotune_fallback_to_aten")) == [23]


def test_a_bare_api_matches_the_last_name_of_a_torch_name(index):
    assert lines(index, Subject(api="capture_pre_autograd_graph")) == [6, 21]


def test_method_scope_matches_by_name_and_marks_it(index):
    subject = Subject(api="torch.optim.lr_scheduler.LRScheduler.print_lr", scope="method",
                      method="print_lr")
    affects = find_affects(Subjects(python=(subject,)), index, "code")
    # breaks first: the resolved call; the one matched by name alone is a guess, so check
    assert [(a.line, a.by_method_name, a.tier) for a in affects] == [(19, False, "breaks"),
                                                                    (18, True, "check")]
    assert affects[1].to_json_dict()["by_method_name"] is True


def test_one_affect_per_line_and_api_sorted_by_path_and_line(tmp_path):
    (tmp_path / "b.py").write_text("import torch\nx = torch.load(a) or torch.load(b)\n")
    (tmp_path / "a.py").write_text("from torch import load\nload(a)\n")
    index = scan_codebase(str(tmp_path), {})
    subjects = Subjects(python=(Subject(api="torch.load"), Subject(api="torch.load",
                                                                   condition="omits",
                                                                   option="weights_only")))
    affects = find_affects(subjects, index, "team")
    assert [(a.path, a.line, a.api, a.root, a.tier) for a in affects] == [
        ("a.py", 2, "torch.load", "team", "breaks"), ("b.py", 2, "torch.load", "team", "breaks"),
        ("a.py", 1, "torch.load", "team", "mentions")]


def test_names_outside_the_subject_root_never_match(tmp_path):
    (tmp_path / "a.py").write_text("import mylib\nmylib.load(x)\nimport numpy\nnumpy.load(y)\n")
    index = scan_codebase(str(tmp_path), {})
    assert find_affects(Subjects(python=(Subject(api="torch.load"),)), index, "x") == []
    assert find_affects(Subjects(python=(Subject(api="load"),)), index, "x") == []


# The examples, checked by hand against TorchFix 0.7.0 (flake8 --select TOR102).
TOR102 = [
    ("dcgan/main.py", 165), ("dcgan/main.py", 206),
    ("distributed/FSDP/model_checkpointing/checkpoint_handler.py", 178),
    ("distributed/FSDP/model_checkpointing/checkpoint_handler.py", 231),
    ("distributed/ddp-tutorial-series/multigpu_torchrun.py", 41),
    ("distributed/ddp-tutorial-series/multinode.py", 42),
    ("distributed/minGPT-ddp/mingpt/trainer.py", 87),
    ("fast_neural_style/neural_style/neural_style.py", 148),
    ("imagenet/main.py", 214), ("imagenet/main.py", 218),
    ("language_translation/main.py", 75),
    ("legacy/snli/train.py", 33), ("legacy/snli/train.py", 53),
    ("super_resolution/super_resolve.py", 30),
    ("time_sequence_prediction/train.py", 47),
    ("word_language_model/generate.py", 65), ("word_language_model/main.py", 274),
]


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="the examples codebase is a fixture")
def test_pytorch_examples_torch_load_omitting_weights_only_is_torchfix_tor102():
    index = scan_codebase(str(EXAMPLES), {})
    assert index.counts.files == 93 and not index.unparsable
    flip = Subject(api="torch.load", condition="omits", option="weights_only")
    affects = find_affects(Subjects(python=(flip,)), index, str(EXAMPLES))
    assert [(a.path, a.line) for a in affects] == TOR102
    assert all("torch.load(" in a.code and "weights_only" not in a.code for a in affects)
    every_load = find_affects(Subjects(python=(Subject(api="torch.load"),)), index, "x")
    # The two FSDP2 calls that pass weights_only are the other uses.
    assert sorted({(a.path, a.line) for a in every_load} - set(TOR102)) == [
        ("distributed/FSDP2/checkpoint.py", 55), ("distributed/FSDP2/checkpoint.py", 86)]


def test_examples_fixture_is_the_documented_copy():
    files = sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*")
                   if p.is_file())
    assert len([f for f in files if f.endswith(".py")]) == 93 and "LICENSE" in files
    assert "77f55b912142" in (FIXTURES / "SOURCES.md").read_text()
    assert Path(EXAMPLES / "LICENSE").read_text().startswith("BSD 3-Clause")


def test_a_method_subject_without_its_module_matches_the_class_under_torch(index):
    subject = Subject(api="LRScheduler.print_lr", scope="method", method="print_lr")
    affects = find_affects(Subjects(python=(subject,)), index, "code")
    assert [(a.line, a.by_method_name) for a in affects] == [(19, False), (18, True)]
    other = Subject(api="StepLR.print_lr", scope="method", method="print_lr")
    assert [a.line for a in find_affects(Subjects(python=(other,)), index, "c")] == [18]


def test_a_bare_api_covers_attributes_of_it_but_options_only_on_its_calls(tmp_path):
    (tmp_path / "q.py").write_text(textwrap.dedent("""\
        from torch.ao.quantization.quantizer.xnnpack_quantizer import XNNPACKQuantizer
        XNNPACKQuantizer.set_global(config)
        XNNPACKQuantizer(is_dynamic=True)
        from mylib import XNNPACKQuantizer_v2
        """))
    index = scan_codebase(str(tmp_path), {})
    assert lines(index, Subject(api="XNNPACKQuantizer")) == [1, 2, 3]
    assert lines(index, Subject(api="XNNPACKQuantizer", condition="passes",
                                option="is_dynamic")) == [3]


def test_by_method_name_only_calls_of_a_distinctive_name(tmp_path):
    """``args.seed`` is no use of ``_PhiloxState.seed``, and ``rng.seed()`` could be anyone's:
    an unknown receiver is matched by a call of a method whose name says what it does."""
    (tmp_path / "run.py").write_text(textwrap.dedent("""\
        import torch

        def main(args, rng, batch, scheduler):
            torch.manual_seed(args.seed)
            rng.seed()
            batch.new_tensor([1.0])
            scheduler.print_lr
        """))
    index = scan_codebase(str(tmp_path), {})
    seed = Subject(api="torch.distributed.tensor._random._PhiloxState.seed", scope="method",
                   method="seed")
    new_tensor = Subject(api="torch.Tensor.new_tensor", scope="method", method="new_tensor")
    print_lr = Subject(api="LRScheduler.print_lr", scope="method", method="print_lr")
    assert lines(index, seed) == []
    assert lines(index, new_tensor) == [6]
    assert lines(index, print_lr) == []  # read, not called


def test_a_change_to_what_invalid_calls_raise_flags_nothing(index):
    assert lines(index, Subject(api="torch.load", condition="errors")) == []


def test_a_handler_of_only_the_old_error_type_around_the_call_is_check(tmp_path):
    """kaolin's ``list_to_packed`` catches ``RuntimeError`` around ``torch.cat`` to give its
    own message; from 2.9 cat raises ``ValueError`` (or ``IndexError``/``TypeError``), which
    passes that handler by. A handler that also catches a new type, or catches ``Exception``,
    still runs; a call outside any ``try`` was never handled. A handler that retries the call
    (Megatron-LM's CPU fallback, fairseq's chunked loop) is for running out of memory, which
    a retry can fix and bad input cannot."""
    (tmp_path / "batch.py").write_text(textwrap.dedent("""\
        import torch
        try:
            packed = torch.cat(tensors, dim=0)
        except RuntimeError as error:
            raise ValueError("tensors must share their last dimension") from error
        try:
            torch.cat(tensors)
        except (RuntimeError, ValueError):
            pass
        try:
            torch.cat(tensors)
        except Exception:
            pass
        torch.cat(tensors)
        try:
            torch.cat(tensors)
        except torch.OutOfMemoryError:
            pass
        def merge(pieces):
            try:
                return torch.cat(pieces)
            except RuntimeError:
                return torch.cat([piece.cpu() for piece in pieces])
        def distances(w, centroids, chunks=1):
            while True:
                try:
                    return torch.cat([w - c for c in centroids.chunk(chunks)])
                except RuntimeError:
                    chunks *= 2
        """))
    cat = Subject(api="torch.cat", condition="errors", raised=("RuntimeError",),
                  raises=("ValueError", "IndexError", "TypeError"))
    affects = find_affects(Subjects(python=(cat,)), scan_codebase(str(tmp_path), {}), "code")
    assert [(affect.line, affect.tier) for affect in affects] == [(3, "check")]
    assert affects[0].why == ("catches RuntimeError around torch.cat, which raises ValueError, "
                              "IndexError or TypeError instead")


def test_a_test_expecting_only_the_old_error_type_is_check(tmp_path):
    """torch-uncertainty's tests expect ``RuntimeError`` from a ``torch.cat`` of mismatched
    sizes (``with pytest.raises(RuntimeError)``, unittest's ``assertRaises``): from 2.9 cat
    raises ``ValueError`` and the test fails, as a handler stops running. A test expecting the
    new type too, or another ``with``, is not reached."""
    (tmp_path / "test_mask.py").write_text(textwrap.dedent("""\
        import contextlib
        import pytest
        import torch
        def test_sizes():
            with pytest.raises(RuntimeError, match="Sizes"):
                torch.cat([torch.zeros(2, 1), torch.zeros(3, 2)], dim=1)
        def test_either():
            with pytest.raises((RuntimeError, ValueError)):
                torch.cat([torch.zeros(2, 1), torch.zeros(3, 2)], dim=1)
        def test_quiet():
            with contextlib.suppress(KeyError):
                torch.cat([torch.zeros(2, 1), torch.zeros(3, 2)], dim=1)
        class Sizes:
            def test_unittest(self):
                with self.assertRaisesRegex(RuntimeError, "Sizes"):
                    torch.cat([torch.zeros(2, 1), torch.zeros(3, 2)], dim=1)
        """))
    cat = Subject(api="torch.cat", condition="errors", raised=("RuntimeError",),
                  raises=("ValueError", "IndexError", "TypeError"))
    affects = find_affects(Subjects(python=(cat,)), scan_codebase(str(tmp_path), {}), "code")
    assert [(affect.line, affect.tier) for affect in affects] == [(6, "check"), (16, "check")]


class TensorMethods(NoKnowledge):
    """torch.Tensor's ``to`` and ``max``, as the atlas resolves them."""

    def resolve(self, name: str) -> str | None:
        return "torch._tensor.Tensor." + name.rpartition(".")[2] if name in (
            "torch.Tensor.to", "torch.Tensor.max") else None


def test_a_tensor_method_is_not_the_codebases_function_of_that_name(tmp_path):
    """hippynn's pair finder catches ``(ValueError, RuntimeError)`` around ``torch.cat(...)
    .to(dev)``; its molecular-dynamics ``Variable.to`` raises ``ValueError`` for a bad argument.
    Joined by name, that made the handler's ``ValueError`` the codebase's and the cat call
    ``check``; ``.to(dev)`` beside a torch call is the tensor's method (the atlas has
    ``torch.Tensor.to``), so the handler still catches cat's new ``ValueError``."""
    (tmp_path / "md.py").write_text(textwrap.dedent("""\
        class Variable:
            def to(self, arg):
                raise ValueError(f"cannot move to {arg}")
        """))
    (tmp_path / "pairs.py").write_text(textwrap.dedent("""\
        import torch
        def gather(pieces, dev):
            try:
                return torch.cat(pieces).to(dev)
            except (ValueError, RuntimeError):
                return torch.empty(0, device=dev)
        """))
    cat = Subject(api="torch.cat", condition="errors", raised=("RuntimeError",),
                  raises=("ValueError", "IndexError", "TypeError"))
    index = scan_codebase(str(tmp_path), {})
    assert find_affects(Subjects(python=(cat,)), index, "code", knowledge=TensorMethods()) == []
    assert [affect.line for affect in find_affects(Subjects(python=(cat,)), index, "code")] \
        == [4]  # without the atlas the name is ambiguous, and the handler may be md's


def test_a_handler_for_the_codebases_own_error_of_that_type_stays_in_use(tmp_path):
    """text-generation-inference's quantized loaders wrap ``torch.cat([weights.get_sharded(p)
    ...])`` in ``except RuntimeError`` to say "make sure the model is already quantized": the
    handler is there for the ``RuntimeError`` its own ``Weights`` raises for a missing tensor
    (through ``get_partial_sharded`` and ``get_filename``, in another file), which it still
    catches when cat raises ``ValueError`` for bad input. A call of a function that raises
    another type, or only ``NotImplementedError`` (an abstract method), leaves the handler to
    torch's error."""
    (tmp_path / "weights.py").write_text(textwrap.dedent("""\
        class Weights:
            def get_filename(self, name):
                if name not in self.routing:
                    raise RuntimeError(f"weight {name} does not exist")
                return self.routing[name]
            def get_partial_sharded(self, name, dim):
                return self.load(self.get_filename(name), dim)
            def get_sharded(self, name, dim):
                return self.get_partial_sharded(name, dim)
            def checked(self, name):
                raise ValueError(name)
            def abstract(self, name):
                raise NotImplementedError
        """))
    (tmp_path / "gptq.py").write_text(textwrap.dedent("""\
        import torch
        def columns(weights, prefixes):
            try:
                return torch.cat([weights.get_sharded(p, dim=1) for p in prefixes], dim=1)
            except RuntimeError:
                raise RuntimeError("make sure the model is already quantized")
        def checked(weights, prefixes):
            try:
                return torch.cat([weights.checked(p) for p in prefixes])
            except RuntimeError:
                raise
        def abstract(weights, prefixes):
            try:
                return torch.cat([weights.abstract(p) for p in prefixes])
            except RuntimeError:
                raise
        """))
    cat = Subject(api="torch.cat", condition="errors", raised=("RuntimeError",),
                  raises=("ValueError", "IndexError", "TypeError"))
    affects = find_affects(Subjects(python=(cat,)), scan_codebase(str(tmp_path), {}), "code")
    assert [(affect.line, affect.tier) for affect in affects] == [(9, "check"), (14, "check")]


def test_a_changed_default_torch_does_not_apply_to_the_value_passed_is_not_relied_on(tmp_path):
    """2.11 makes ``trust_repo="check"`` hub's default, but torch.hub trusts repositories of
    its own owners (``_TRUSTED_REPO_OWNERS``) without asking, and asks nothing for a local
    directory: LLaMA2-Accessory's ``torch.hub.load("facebookresearch/dinov2", ...)`` behaves
    the same. Any other repository, or one only known at run time, relies on the new default."""
    (tmp_path / "hub.py").write_text(textwrap.dedent("""\
        import torch
        torch.hub.load("facebookresearch/dinov2", "dinov2_vitg14")
        torch.hub.load(repo_or_dir="pytorch/vision", model="resnet18")
        torch.hub.list("pytorch/vision")
        torch.hub.load("ultralytics/yolov5", "yolov5s")
        torch.hub.load(checkout, "model", source="local")
        torch.hub.load(repo, "model")
        torch.hub.load("pytorchlightning/x", "model")
        torch.hub.load(f"facebookresearch/{repo}", name)
        torch.hub.load(f"facebook{suffix}/dinov2", name)
        """))
    index = scan_codebase(str(tmp_path), {})
    load = Subject(api="torch.hub.load", condition="omits", option="trust_repo")
    listed = Subject(api="torch.hub.list", condition="omits", option="trust_repo")
    # dinov3's f"facebookresearch/{repo}" names its owner in the constant part; a head that
    # stops before the owner's name is whole is anyone's
    assert tiers(index, load, listed) == {5: "breaks", 7: "breaks", 8: "breaks", 10: "breaks"}


def test_a_name_the_atlas_cannot_place_matches_its_private_module_spelling(tmp_path):
    """Megatron-LM imports ``torch.distributed._symmetric_memory``; 2.11 deprecates
    ``torch.distributed.symmetric_memory.enable_symm_mem_for_group``, a module the atlas does
    not read. One segment's underscore is the whole difference; a longer name is not a twin."""
    (tmp_path / "symm.py").write_text(textwrap.dedent("""\
        import torch.distributed._symmetric_memory as symm_mem
        from torch.distributed import _symmetric_memory

        symm_mem.enable_symm_mem_for_group(group.group_name)
        _symmetric_memory.enable_symm_mem_for_group(group.group_name)
        symm_mem.empty(4)
        torch.distributed.symmetric_memory_extra.enable_symm_mem_for_group(g)
        """))
    index = scan_codebase(str(tmp_path), {})
    subject = Subject(api="torch.distributed.symmetric_memory.enable_symm_mem_for_group",
                      effect="deprecated")
    assert tiers(index, subject) == {4: "check", 5: "check"}
    removed = Subject(api="torch.distributed.symmetric_memory.empty", effect="removed")
    assert tiers(index, removed) == {6: "breaks"}
