"""The classifier: headings decide when present, rules from config/ otherwise."""

from __future__ import annotations

import re
import time
from functools import cache

import pytest
from conftest import release_notes

from watcher.errors import ConfigError
from watcher.models import KINDS, SUBSYSTEMS, Item, top_level
from watcher.notes.classify import Classifier
from watcher.notes.labels import LabelMap
from watcher.notes.model import builtin_model
from watcher.notes.parse import parse_notes
from watcher.notes.taxonomy import (
    TextRule,
    builtin_taxonomy,
    literal_hint,
    with_overrides,
)

TAXONOMY = builtin_taxonomy()
CLASSIFIER = Classifier(TAXONOMY)
REAL_NOTES = ["pytorch/v1.13.1.md", "pytorch/v2.5.0.md", "pytorch/v2.7.0.md", "pytorch/v2.8.0.md",
              "pytorch/v2.9.0.md", "pytorch/v2.10.0.md", "xla/v2.0.0.md"]


@cache  # read-only, and several tests sweep the same real releases
def classified(name: str) -> tuple:
    notes = parse_notes(release_notes(name), lookup=TAXONOMY)
    return tuple(CLASSIFIER.classify_all(notes.items))


@pytest.mark.parametrize(("name", "unknown"), [
    ("pytorch/v2.7.0.md", ["PyTorch 2.7.0 Release Notes", "Dropped support for Triton < 2.2.0. "
                           "Removed Support for CUDA 12.4, Anaconda in CI/CD.", "General"]),
    ("pytorch/v2.9.0.md", ["PyTorch 2.9.0 Release Notes"]),
    ("xla/v2.0.0.md", []),
])
def test_headings_the_taxonomy_does_not_know_are_reported(name, unknown):
    """Topics and titles are fine; a new spelling of an area would show up here first."""
    assert parse_notes(release_notes(name), lookup=TAXONOMY).unknown_headings == unknown


@pytest.mark.parametrize("name", REAL_NOTES)
def test_every_item_has_a_contract_subsystem_and_kind(name):
    for item in classified(name):
        assert top_level(item.subsystem) in SUBSYSTEMS
        assert item.kind in KINDS


@pytest.mark.parametrize(("section", "expected"), [
    (("Improvements", "Distributed", "FullyShardedDataParallel2 (FSDP2)"), "distributed/fsdp"),
    (("Bug fixes", "Distributed", "Distibuted Checkpoint (DCP)"), "distributed/checkpoint"),
    (("Improvements", "torch.compile", "Dynamo"), "compile/dynamo"),
    (("Improvements", "torch.export", "serialization"), "export/serialization"),
    (("Improvements", "torch.compile", "Decompositions, FakeTensor and meta tensors"), "compile"),
    (("Improvements", "CPU", "x86"), "cpu/x86"),
    (("Improvements", "ROCm", "TunableOp"), "rocm"),
    (("## **Bug fixes**", "**Nested Tensor (NJT)**"), "nested_tensor"),
    (("Beta Features", "PJRT runtime"), "xla_runtime/pjrt"),
    (("Experimental Features", "PyTorch/XLA GSPMD on single host"), "spmd"),
], ids=lambda v: v if isinstance(v, str) else "/".join(v[1:]))
def test_heading_paths(section, expected):
    item = Item(text="Make it better", section=section)
    assert CLASSIFIER.classify(item).subsystem == expected


@pytest.mark.parametrize(("text", "subsystem", "kind"), [
    ("Fix type annotations in FSDP (#4371)", "distributed/fsdp", "bug_fix"),
    ("Add `torch.export.export_for_training` option (#1)", "export", "improvement"),
    ("Deprecate `torch.onnx.dynamo_export` (#2)", "onnx", "deprecation"),
    ("Speed up Inductor codegen for reductions (#3)", "compile/inductor", "performance"),
    ("Fix crash in DTensor redistribute (#4)", "distributed/dtensor", "bug_fix"),
    ("Release the GIL during TransferFromServer (#4504)", "xla_runtime", "other"),
    ("torch.jit.annotations.parse_type_line is not safe (command injection)", "jit", "security"),
    ("Quantized int8 matmul on MPS (#5)", "mps", "other"),
], ids=lambda v: v[:30] if isinstance(v, str) else v)
def test_text_rules_without_headings(text, subsystem, kind):
    item = CLASSIFIER.classify(Item(text=text))
    assert (item.subsystem, item.kind) == (subsystem, kind)


def test_with_nothing_to_go_on_the_model_guesses_and_says_it_is_unsure():
    item = CLASSIFIER.classify(Item(text="Something nobody has a rule for"))
    assert (item.decided_by, item.kind) == ("model", "other") and item.confidence < 0.3


@pytest.mark.parametrize(("item", "decided_by"), [
    (Item(text="Fix FSDP hang", section=("Bug fixes", "Distributed")), "heading"),
    (Item(text="Make `empty_symint` support dynamism",
          section=("Ongoing development", "Ongoing Dynamic Shape implementation")), "heading"),
    (Item(text="Add `torch.distributed.checkpoint.save` async mode (#1)"), "rule"),
    (Item(text="New PJRT TPU backend through the C-API (#4077)"), "rule"),
    (Item(text="Improve planner for sharding of embedding tables (#1)"), "model"),
], ids=["area-heading", "topic-heading", "namespace-rule", "pjrt-rule", "model"])
def test_every_verdict_says_what_decided_and_how_sure(item, decided_by):
    """Headings are facts; a decisive rule is as sure as such rules were on held-out releases
    for the subsystem it names; the model's guess carries its calibrated probability."""
    decision = CLASSIFIER.explain(item)
    model = builtin_model()
    got = decision.item
    assert got.decided_by == decided_by
    expected = {"heading": 1.0,
                "rule": model.rule_sureness(top_level(got.subsystem)),
                "model": None}[decided_by]
    if expected is None:
        words = CLASSIFIER.words(item)
        expected = model.predict(words, CLASSIFIER.model_cues(words)).probability
    assert got.confidence == pytest.approx(expected, abs=5e-4)


def test_a_pr_label_is_a_fact_unless_a_heading_said_otherwise():
    mapping = LabelMap({"distributed (checkpoint)": "distributed/checkpoint"})
    labels = ["release notes: distributed (checkpoint)"]
    flat = CLASSIFIER.explain(Item(text="Something nobody has a rule for"), labels, mapping)
    assert (flat.item.subsystem, flat.item.decided_by, flat.item.confidence) == (
        "distributed/checkpoint", "label", 1.0)
    headed = CLASSIFIER.explain(Item(text="x", section=("Improvements", "ONNX")), labels, mapping)
    assert (headed.item.subsystem, headed.item.decided_by) == ("onnx", "heading")


# Kinds from the item's words alone, as the maintainers' worksheets file them.
@pytest.mark.parametrize(("text", "kind"), [
    ("Fix hang in `all_gather` with uneven inputs (#1)", "bug_fix"),
    ("Properly handle empty inputs in `cross` (#1)", "bug_fix"),
    ("Deprecate `torch.onnx.dynamo_export` (#2)", "deprecation"),
    ("`torch.export.export_for_inference` has been removed in favor of `export` (#3)",
     "bc_breaking"),
    ("Removed support for Maxwell, Pascal, and Volta architectures with CUDA 12.8 (#4)",
     "bc_breaking"),
    ("Calling an op with an unsupported dtype now raises `NotImplementedError` (#5)",
     "bc_breaking"),
    ("Switched default to `strict=False` in `torch.export.export` (#6)", "bc_breaking"),
    ("Add `num_runners` to `AOTIModelPackageLoader` (#7)", "improvement"),
    ("Support `with` statement on torch.Stream (#8)", "improvement"),
    ("Add a new API `torch.accelerator.synchronize` (#9)", "new_feature"),
    ("Introduce `torch.compiler.set_stance` (#10)", "new_feature"),
    ("Speed up `torch.cat` on CPU (#11)", "performance"),
    ("Use gather in index_select to improve performance (#12)", "performance"),
    ("Improve the docs of `torch.nn.Module.register_forward_hook` (#13)", "docs"),
    ("Updated docstring for `torch.sort` (#14)", "docs"),
    ("DTensor\n- Fixed `redistribute` for uneven shards (#15)", "bug_fix"),
    ("[MPS][BE] Fix `torch.add` crash with alpha (#16)", "bug_fix"),
    ("Something nobody has a rule for", "other"),
], ids=lambda v: v[:30])
def test_kind_from_text(text, kind):
    assert CLASSIFIER.classify(Item(text=text)).kind == kind


@pytest.mark.parametrize(("section", "text", "expected"), [
    (("Ongoing development", "Ongoing Dynamic Shape implementation"),
     "Make `empty_symint` support dynamism", "lazy_tensor/dynamic_shape"),
    (("Ongoing development", "Ongoing Dynamic Shape implementation"),
     "Ongoing SPMD multi host execution (#4573)", "spmd"),
    (("New Features", "Dynamic Shapes"), "Support unbacked symbols in X", "compile/dynamic_shapes"),
    (("Improvements", "torch.export", "Dynamic Shapes"), "Anything", "export/dynamic_shapes"),
], ids=["topic-heading", "decisive-rule-wins", "alone", "refines-an-area"])
def test_context_only_headings(section, text, expected):
    """A context-only heading refines an area above it; alone, it files its items unless a
    decisive rule names another subsystem."""
    assert CLASSIFIER.classify(Item(text=text, section=section)).subsystem == expected


def test_patch_release_lead_in_makes_its_list_bug_fixes():
    items = classified("pytorch/v1.13.1.md")
    kinds = [item.kind for item in items]
    assert kinds.count("bug_fix") == 11 and kinds.count("security") == 1


def test_user_headings_and_rules_win_over_the_builtin_ones():
    taxonomy = with_overrides({"My Team Area": "distributed/fsdp"},
                              [("quantization", [r"\bmy_quant_thing\b"])])
    classifier = Classifier(taxonomy)
    assert classifier.classify(Item(text="x", section=("Improvements", "My Team Area"))
                               ).subsystem == "distributed/fsdp"
    mine = classifier.classify(Item(text="Use my_quant_thing in CUDA kernels"))
    assert (mine.subsystem, mine.decided_by, mine.confidence) == ("quantization", "rule", 1.0)
    assert Classifier(builtin_taxonomy()).classify(
        Item(text="Use my_quant_thing in CUDA kernels")).subsystem == "cuda"


@pytest.mark.parametrize(("headings", "rules"), [
    ({"X": "not_a_subsystem"}, []), ({}, [("distributed", ["(unclosed"])]),
    ({}, [("Distributed", ["x"])])], ids=["bad-id", "bad-regex", "bad-case"])
def test_bad_user_rules_are_config_errors(headings, rules):
    with pytest.raises(ConfigError):
        with_overrides(headings, rules)


@pytest.mark.parametrize(("pattern", "hint"), [
    (r"\bPJRT\b", "pjrt"), (r"\bLazy ?Tensor", "lazy"), (r"(?:foo)bar", "foo"),
    (r"^(?:Update|Upgrade|Bump)\w* to", None), (r"\b(?:foo)?bar", None), (r"a|b", None),
], ids=["word", "optional-char", "group", "alternation-in-group", "optional-group", "alternation"])
def test_literal_hint(pattern, hint):
    assert literal_hint(pattern) == hint


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_literal_prefilter_never_changes_a_rule_outcome():
    """Over every item of every real release (and its words as the classifier reads them),
    the prefilter picks exactly the rules whose regex matches; so does each rule's own check."""
    texts = [text for name in REAL_NOTES for item in classified(name)
             for text in (item.text, CLASSIFIER.words(item))]
    for text in texts:
        every = [rule for rule in TAXONOMY.text_rules if rule.pattern.search(text)]
        assert list(TAXONOMY.matching_rules(text)) == every, text[:60]
        assert [r for r in TAXONOMY.text_rules if r.matches(text, text.lower())] == every
    text = "FSDP2 and DTensor in torch.distributed"
    finer = list(TAXONOMY.matching_rules(text, finer_of="distributed"))
    assert {rule.subsystem for rule in finer} == {"distributed/fsdp", "distributed/dtensor"}
    assert [r for r in TAXONOMY.matching_rules(text) if "/" in r.subsystem] == finer


def test_the_prefilter_follows_rules_added_after_first_use():
    taxonomy = with_overrides({}, [("onnx", [r"\bmy_new_thing\b"])])
    assert [r.subsystem for r in taxonomy.matching_rules("uses my_new_thing")] == ["onnx"]
    taxonomy.text_rules.append(TextRule.make("fx", re.compile(r"\bzzq_thing\b"), 1.0))
    assert [r.subsystem for r in taxonomy.matching_rules("a zzq_thing")] == ["fx"]


def test_rules_stay_linear_on_hostile_text():
    """A body of 100,000 backticks, brackets or CamelCase must not stall classification."""
    for text in ("`" * 100_000, "[" * 100_000, "Ab" * 50_000 + "x", "a " * 50_000):
        start = time.perf_counter()
        CLASSIFIER.classify(Item(text=text))
        assert time.perf_counter() - start < 2.0


def test_explain_says_why():
    decision = CLASSIFIER.explain(Item(text="Fix FSDP hang", section=("Bug fixes", "Distributed")))
    assert "heading 'Distributed'" in decision.subsystem_reason
    assert "section 'Bug fixes'" in decision.kind_reason


def test_unknown_headings_are_logged_once_per_release(caplog):
    from watcher.notes.analyze import Analyzer

    analyzer = Analyzer(TAXONOMY)
    body = "## Distributed\n### Shiny New Area\n- Fix it (#1)\n- Fix that (#2)\n"
    with caplog.at_level("DEBUG", logger="watcher.notes.analyze"):
        analyzer.items(body, label="pytorch/pytorch v9")
        analyzer.items(body, label="pytorch/pytorch v9")  # an edit parses old and new
    logged = [r.getMessage() for r in caplog.records if "does not know" in r.getMessage()]
    assert logged == ["pytorch/pytorch v9: headings the taxonomy does not know: Shiny New Area"]
