"""The bundled atlas of torch 2.13.0 (read from the Linux CPU wheel with ``ast``) held against
what the same wheel has when imported (``tests/fixtures/runtime/torch-2.13.0.json.gz``, made by
``scripts/dump_runtime_api.py`` in a throwaway venv): at least 98 % of the public names and of
the signatures ``inspect`` can read agree, and every disagreement is one of a short, named list
of what no reading of the source can know (``tests/atlas_runtime.py`` says how each side is
read; run it to see the disagreements)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from atlas_runtime import Comparison, compare, load_dump

from watcher.impact.atlas import loads
from watcher.impact.atlas.source import bundled_path

DUMP = Path(__file__).parent / "fixtures" / "runtime" / "torch-2.13.0.json.gz"
TARGET = 0.98

# What the source cannot tell, each with why: (name, pattern of "api: disagreement").
NAMES_ALLOWED = {
    "C names the stubs leave out": (
        r"^torch\.(\w*Script\w*|ArgumentSpec|Capsule|Code|CompleteArgumentSpec|"
        r"DeepCopyMemoTable|ExcludeDispatchKeyGuard|ExecutionPlan|FatalError|Gradient|"
        r"OperatorInfo|PyObjectType|StaticModule|Storage|AVG|SUM|bit|u?int[1-7]|"
        r"(get|set|is)_autocast_(ipu|xla)_\w+|monitor\.\w+|linalg\.LinAlgError): runtime",
        "bound from the C extension torch._C at import; its .pyi stubs do not declare them"),
    "stub names the extension lacks": (
        r"^torch\.\w+: in the atlas",
        "declared in torch/_C/__init__.pyi, yet not in the built extension, or dropped by a "
        "loop at import (TensorBase deleted, unique_dim in PRIVATE_OPS)"),
    "names bound by a loop or a decorator": (
        r"^torch\.(return_types|onnx\.symbolic_opset9|fx\.experimental\.sym_node|"
        r"(ao\.nn\.quantized\.|jit\.annotations\.|nn\.)?functional\.BroadcastingList|"
        r"jit\.annotations\.BroadcastingList|distributed\.rpc(\.api)?\.(new_)?method|"
        r"fx\.experimental\.symbolic_shapes\.int_oo)",
        "globals()[name] = ... over a C module, or a registering decorator: no assignment in "
        "the source names them"),
    "legacy tensor types": (
        r"^torch\.(cuda|sparse)(\.sparse)?\.\w+Tensor: runtime",
        "registered on torch.cuda / torch.sparse by the C extension at import"),
    "modules replaced in sys.modules": (
        r"^torch\.backends\.(python_native|cudnn|mkldnn)\.",
        "the module object is swapped for an instance of a class whose attributes are "
        "properties and methods (sys.modules[__name__] = PythonNativeModule(...))"),
    "other builds' backends": (
        r"ProcessGroup(MPI|NCCL|UCC|XCCL): in the atlas",
        "imported in a try: only in builds with that backend; this dump is of the CPU build"),
    "names typed for a config module": (
        r"^torch\.distributed\.config\.\w+: in the atlas",
        "declared under TYPE_CHECKING by a star import of torch.utils._config_typing; "
        "install_config_module serves only the config's values"),
    "a branch the CPU build does not take": (
        r"^torch\.(distributed\.rpc\.api\.RRefMeta|utils\.data\.datapipes\.gen_pyi\.REPO_ROOT):",
        "defined in one branch of an if the import does not enter"),
}
SIGNATURES_ALLOWED = {
    "decorators that hide a signature": (
        r": atlas \(.*\) != runtime \(\*args, \*\*kwargs\)$",
        "a wrapper without functools.wraps (deprecation, TorchScript, torch.compile "
        "decorators): inspect sees the wrapper's (*args, **kwargs)"),
    "structseq return types": (
        r"^torch\.return_types\.\w+: atlas \(sequence\) != runtime \(/iterable=\)$",
        "the stub declares (sequence); the C structseq's __new__ reads (iterable, /)"),
    "stubs that lag their source": (
        r"^torch\.nn\.functional\.(huber|l1|mse)_loss: ",
        "torch/nn/functional.pyi is generated and lacks weight=; the atlas takes the stub's "
        "signature over the source's (both are the package's own word)"),
    "C types with a builtin constructor": (
        r"^torch\.Size: no signature in the atlas",
        "torch.Size is tuple's subclass in C: its constructor is tuple's"),
    "a default inspect cannot render": (
        r"^torch\.fx\.Graph\.placeholder: default of default_value",
        "the default is inspect.Signature.empty, which inspect shows as None"),
}


@cache
def comparison() -> Comparison:
    return compare(loads(bundled_path("torch", "2.13.0").read_bytes()), load_dump(DUMP))


def _unexplained(differ: list[tuple[str, str]], allowed: dict[str, tuple[str, str]]
                 ) -> tuple[list[str], set[str]]:
    """The disagreements no allowed pattern names, and the names of the patterns used."""
    patterns = {name: re.compile(pattern) for name, (pattern, _) in allowed.items()}
    left, used = [], set()
    for api, why in differ:
        line = f"{api}: {why}"
        hit = next((name for name, pattern in patterns.items() if pattern.search(line)), None)
        if hit is None:
            left.append(line)
        else:
            used.add(hit)
    return left, used


def test_the_dump_is_of_the_wheel_the_bundled_atlas_is_built_from() -> None:
    dump = load_dump(DUMP)
    assert dump["version"] == "2.13.0+cpu"
    assert DUMP.stat().st_size < 600_000
    assert comparison().failed == 0  # every public module imported
    assert comparison().modules > 800


@pytest.mark.parametrize("figure", ["names", "signatures"])
def test_at_least_98_percent_agree(figure: str) -> None:
    tally = getattr(comparison(), figure)
    assert tally.total > (10_000 if figure == "names" else 20_000)
    assert tally.share >= TARGET, f"{tally.agree}/{tally.total}"


@pytest.mark.parametrize(("figure", "allowed"), [("names", NAMES_ALLOWED),
                                                 ("signatures", SIGNATURES_ALLOWED)])
def test_every_disagreement_is_a_named_one(figure: str,
                                           allowed: dict[str, tuple[str, str]]) -> None:
    left, used = _unexplained(getattr(comparison(), figure).differ, allowed)
    assert left == [], "\n".join(left[:30])
    assert used == set(allowed), f"allowed but never met (remove): {set(allowed) - used}"


def test_what_the_issue_found_now_agrees() -> None:
    """Issue 36's list, at run time and in the atlas alike."""
    atlas = loads(bundled_path("torch", "2.13.0").read_bytes())
    assert atlas.resolve("torch.autograd.Function.apply") is not None
    assert atlas.resolve("torch.cond") is not None
    assert atlas.kind(atlas.resolve("torch.cond") or "") == "function"
    for stub_only in ("torch.FxNode", "torch.DeviceMesh", "torch.TorchDispatchMode"):
        assert not atlas.spells(stub_only), stub_only
    # The implementation's (*args, **kwargs), not its @overload stubs merged.
    assert [p.kind for p in atlas.signature(
        atlas.resolve("torch.nn.utils.rnn.PackedSequence.to") or "") or ()] == [
        "var_positional", "var_keyword"]
