"""Headings matched by the words they contain: a name that combines known names in a new way
means what they mean (the taxonomy stays data); a patch release's generic headings say what
its items are, not whose; an item naming one subsystem's APIs is that subsystem's."""

from __future__ import annotations

import pytest

from watcher.models import Item, top_level
from watcher.notes import Analyzer, is_patch_release
from watcher.notes.classify import Classifier
from watcher.notes.parse import parse_notes
from watcher.notes.taxonomy import builtin_taxonomy

TAXONOMY = builtin_taxonomy()
CLASSIFIER = Classifier(TAXONOMY)
PR = "([#{0}](https://github.com/pytorch/pytorch/pull/{0}))"


@pytest.mark.parametrize(("heading", "areas", "kind"), [
    ("CUDA / ROCm", ["cuda", "rocm"], None),             # two areas: the first named leads
    ("ROCm/CUDA", ["rocm", "cuda"], None),
    ("torch.compile + Inductor", ["compile", "compile/inductor"], None),
    ("Distributed DTensor", ["distributed/dtensor"], None),
    ("FX Foo Inductor", ["fx", "compile/inductor"], None),  # a product name between names
    ("BC-Breaking changes and deprecations", [], "bc_breaking"),
    ("Improvements & fixes", [], "improvement"),
])
def test_a_name_made_of_known_names_means_what_they_mean(heading, areas, kind):
    assert TAXONOMY.meaning(heading) == (areas, kind)


@pytest.mark.parametrize("heading", [
    "Remove torch.compile support",       # an entry's title: a word of no name comes first
    "CUDA graphs",                        # ... or last
    "Compile time improvements",          # an area word and a section word: a topic
    "Distributed and a b c DTensor",      # more than a product name between two names
])
def test_a_title_or_a_topic_is_not_read_as_a_name(heading):
    assert TAXONOMY.meaning(heading) == ([], None)


def _classified(body: str, *, tag: str | None = None) -> list:
    return Analyzer(TAXONOMY).items(body, repo="pytorch/pytorch", tag=tag)


def test_items_under_combined_names_take_their_area_and_section():
    body = (f"# BC-Breaking changes and deprecations\n## torch.compile + Inductor\n"
            f"- Remove the `fallback_random` option {PR.format(1)}\n"
            f"## CUDA / ROCm\n- Drop CUDA 11.8 builds {PR.format(2)}\n"
            f"# Improvements & fixes\n## Distributed DTensor\n"
            f"- Faster redistribute {PR.format(3)}\n")
    items = _classified(body)
    assert [(i.subsystem, i.kind, i.decided_by) for i in items] == [
        ("compile/inductor", "bc_breaking", "heading"),
        ("cuda", "bc_breaking", "heading"),
        ("distributed/dtensor", "improvement", "heading")]


PATCH = (f"This release fixes the following issues:\n\n## Other\n"
         f"- Fix a crash in `torch.distributed.all_reduce` with NCCL 2.21 {PR.format(10)}\n"
         f"- Fix the regression in `torch.onnx.export` of 2.7.0 {PR.format(11)}\n"
         f"- Fix CVE-2025-32434 in `torch.load` {PR.format(12)}\n"
         f"## Fixes\n- Make `torch.export.export` keep buffer names {PR.format(13)}\n")


def test_a_patch_release_leaves_the_subsystem_to_the_items_words_and_its_items_are_fixes():
    assert is_patch_release("v2.7.1") and not is_patch_release("v2.7.0")
    items = _classified(PATCH, tag="v2.7.1")
    assert [top_level(i.subsystem) for i in items] == [
        "distributed", "onnx", "python_frontend", "export"]
    assert all(not (i.subsystem == "other" and i.confidence == 1.0) for i in items)
    assert all(i.decided_by != "heading" for i in items)
    assert [i.kind for i in items] == ["bug_fix", "regression", "security", "bug_fix"]


def test_a_minor_release_keeps_what_its_catch_all_heading_says():
    items = _classified(PATCH, tag="v2.7.0")
    assert (items[0].subsystem, items[0].decided_by, items[0].kind) == ("other", "heading", "other")


def test_a_patch_release_without_headings_is_a_list_of_fixes():
    body = f"- Guard `torch.compile` against stale caches {PR.format(20)}\n"
    (item,) = _classified(body, tag="v2.6.1")
    assert (top_level(item.subsystem), item.kind) == ("compile", "bug_fix")


def test_an_item_naming_one_subsystems_api_is_that_subsystems():
    """"automatic dynamic shapes" is Dynamo's words (a decisive rule); the API named is export's."""
    text = ("**[Prototype] Dim.AUTO**\n\n`Dim.AUTO` allows usage of automatic dynamic shapes "
            "with `torch.export`: ranges and relations between dimensions are inferred.")
    item = Item(text=text, section=("Highlights", "PROTOTYPE FEATURES"))
    decision = CLASSIFIER.explain(item)
    assert decision.item.subsystem == "export"
    assert decision.item.decided_by == "rule" and "torch.export" in decision.subsystem_reason


def test_the_apis_an_item_names_place_it_before_an_unsure_model():
    """The words say sparse (the model's guess, p 0.32); the API named is export's."""
    item = Item(text="Allow `torch.export.save` of models holding sparse tensors (#4)")
    decision = CLASSIFIER.explain(item)
    assert decision.item.subsystem == "export" and decision.item.decided_by == "rule"
    assert "torch.export.save" in decision.subsystem_reason


def test_a_model_surer_than_the_apis_keeps_its_guess():
    """2.6's "Prototype of torch.compile for Metal" is MPS work; the model says so with a
    probability above the APIs' measured 0.78, so the API named does not overrule it."""
    verdict = CLASSIFIER.explain(Item(text="Prototype of torch.compile for Metal (#143893)")).item
    assert (top_level(verdict.subsystem), verdict.decided_by) == ("mps", "model")
    assert verdict.confidence > 0.78


@pytest.mark.parametrize(("text", "subsystem"), [
    ("Make `fully_shard()` free parameters after the forward pass (#11)", "distributed"),
    ("`DTensor.from_local` keeps the placement it is given (#12)", "distributed"),
    ("Allow `F.scaled_dot_product_attention` on nested inputs with `F.pad` (#13)", "nn"),
    ("Support `DTensor` with uneven shards (#15)", "distributed"),
    ("Infer `Dim` ranges from the example inputs (#16)", "export"),
])
def test_code_spans_name_apis_without_their_module(text, subsystem):
    named = TAXONOMY.apis.named(text)
    assert [top_level(n.subsystem) for n in named][:1] == [subsystem]


def test_a_bare_word_in_a_code_span_names_no_api():
    # `verbose`, `True`: no shape of an API; `load` stands for several APIs.
    assert TAXONOMY.apis.named("Pass `verbose` as `True` to `load()` (#14)") == []


def test_apis_of_two_subsystems_decide_nothing_by_themselves():
    item = Item(text="`torch.onnx.export` now calls `torch.export.export` with strict=False")
    verdict = CLASSIFIER.explain(item).item
    assert verdict.subsystem == "onnx"  # the ONNX exporter, built on torch.export


def test_the_longest_known_prefix_names_the_api_s_owner():
    owners = TAXONOMY.apis
    assert owners.owner("torch.distributed.tensor.experimental.local_map") == "distributed/dtensor"
    assert owners.owner("torch.distributed.all_reduce") == "distributed"
    assert owners.owner("torch.nnx") is None
    named = owners.named("`torch.export`-based flow calling `torch.onnx.export`")
    assert [n.subsystem for n in named] == ["onnx"]  # a modifier names no subject


def test_parsing_reads_a_combined_name_as_a_heading_not_as_an_entry():
    body = f"# Bug Fixes\n## CUDA / ROCm\n- Fix hipBLASLt workspace size {PR.format(30)}\n"
    notes = parse_notes(body, lookup=TAXONOMY)
    assert [i.section for i in notes.items] == [("Bug Fixes", "CUDA / ROCm")]
    assert notes.unknown_headings == []
