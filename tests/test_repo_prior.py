"""The repository is evidence: the model starts from the prior of the repository whose release
it reads. PyTorch/XLA's releases start from XLA's own areas, and never from PyTorch's device
back ends unless an item names one (issue 20)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import FIXTURES, RELEASES

from watcher.models import Item, top_level
from watcher.notes import Analyzer
from watcher.notes.classify import Classifier
from watcher.notes.model import RepoPrior, SubsystemModel, builtin_model
from watcher.notes.taxonomy import builtin_taxonomy

TAXONOMY = builtin_taxonomy()
CLASSIFIER = Classifier(TAXONOMY)
XLA = "pytorch/xla"
# PyTorch's own device back ends: an XLA device runs behind XLA's runtime (xla_runtime).
DEVICE_AREAS = {"cuda", "rocm", "mps", "xpu"}
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "releases" / "xla"
XLA_NOTES = sorted(
    {
        *(RELEASES / "xla").glob("*"),
        *(FIXTURES / "seeds").glob("003_*.txt"),
        *(SHARED.glob("*") if SHARED.is_dir() else []),
    }
)
INDEX_TYPE = "Support int as index type"  # PyTorch/XLA 2.0; was `mps?` at 0.32


def named(item: Item) -> set[str]:
    """The areas the item's words name: those with a text rule that matches them."""
    return set(CLASSIFIER.rule_scores(CLASSIFIER.words(item)).tops)


def test_the_shipped_model_has_pytorch_xlas_prior():
    prior = builtin_model().prior("PyTorch/XLA")  # owner/name in any case
    assert prior is not None and builtin_model().prior("pytorch/pytorch") is None
    assert prior.favoured == {"xla_runtime", "spmd", "lazy_tensor"} and prior.favour > 0
    assert prior.unless_named >= DEVICE_AREAS


@pytest.mark.parametrize(
    "path", XLA_NOTES,
    ids=lambda p: ("shared/" if SHARED in p.parents else "") + f"{p.parent.name}/{p.name}")
def test_no_xla_item_gets_a_pytorch_device_area_it_does_not_name(path):
    """As the poller classifies a release of pytorch/xla: every item of every XLA notes file."""
    items = Analyzer(TAXONOMY).items(path.read_text(encoding="utf-8"), repo=XLA)
    guessed = [item for item in items if item.decided_by == "model"]
    assert guessed, "the model decides none of these items: the check would be empty"
    wrong = [
        (item.text[:50], item.subsystem)
        for item in items
        if top_level(item.subsystem) in (DEVICE_AREAS | {"cpu", "mobile"}) - named(item)
    ]
    assert not wrong


def test_support_int_as_index_type_is_no_mps_change_of_pytorch_xla(run_cli):
    notes = str(RELEASES / "xla" / "v2.0.0.md")
    result = run_cli("classify", notes, "--repo", XLA, "--format", "json", "--explain")
    assert result.code == 0, result.stderr
    item = next(i for i in json.loads(result.stdout)["items"] if i["text"].startswith(INDEX_TYPE))
    assert top_level(item["subsystem"]) not in DEVICE_AREAS, item
    assert item["decided_by"] == "model" and "pytorch/xla's prior" in item["why"]["subsystem"]
    text = run_cli("classify", notes, "--repo", XLA).stdout
    line = next(line for line in text.splitlines() if INDEX_TYPE in line)
    assert not line.startswith("mps"), line


def test_the_prior_is_the_repositorys_not_the_classifiers():
    """One classifier serves every repo of a poll: a guess under one repo's prior is never
    reused for another's."""
    item = Item(text=f"{INDEX_TYPE} (#4602)")
    plain = CLASSIFIER.explain(item)
    under_xla = CLASSIFIER.explain(item, repo=XLA)
    assert "prior" not in plain.subsystem_reason and "prior" in under_xla.subsystem_reason
    assert CLASSIFIER.explain(item) == plain
    assert CLASSIFIER.explain(item, repo="pytorch/pytorch") == plain


# A model of three areas: "kernel" says CUDA, "shard" says SPMD; nothing says nn.
TOY = SubsystemModel(
    ("cuda", "nn", "spmd"),
    (0.0, 0.0, 0.0),
    {"kernel": (0, 6.0), "shard": (2, 6.0)},
    temperature=1.0,
    repo_priors={XLA: RepoPrior(frozenset({"spmd"}), 0.5, frozenset({"cuda"}))},
)


def test_a_ruled_out_area_is_impossible_unless_the_item_names_it():
    prior = TOY.prior(XLA)
    assert TOY.predict_features(["kernel", "fix"]).subsystem == "cuda"
    unnamed = dict(TOY.calibrated(TOY.feature_scores(["kernel", "fix"]), prior, ["kernel"]))
    assert unnamed["cuda"] == 0.0 and math.isclose(sum(unnamed.values()), 1.0)
    assert TOY.predict_features(["kernel", "fix"], prior).subsystem != "cuda"
    assert TOY.predict_features(["kernel", "rule:cuda"], prior).subsystem == "cuda"


def test_favoured_areas_are_e_to_the_favour_times_as_likely():
    found = ["fix"]
    plain = dict(TOY.calibrated(TOY.feature_scores(found)))
    moved = dict(TOY.calibrated(TOY.feature_scores(found), TOY.prior(XLA), found))
    assert math.isclose(moved["spmd"] / moved["nn"], math.exp(0.5) * plain["spmd"] / plain["nn"])


def test_the_classifier_applies_the_prior_to_what_the_rules_say_an_item_names():
    classifier = Classifier(TAXONOMY, TOY)
    assert classifier.classify(Item(text="Faster kernel launch"), repo=XLA).subsystem != "cuda"
    assert classifier.classify(Item(text="Faster kernel launch")).subsystem == "cuda"
    assert classifier.classify(Item(text="Faster CUDA kernel launch"), repo=XLA).subsystem == "cuda"


def test_priors_round_trip_and_older_model_files_load_without_them():
    assert SubsystemModel.from_json(TOY.to_json()) == TOY
    data = TOY.to_json()
    del data["repo_priors"]
    assert SubsystemModel.from_json(data).prior(XLA) is None
