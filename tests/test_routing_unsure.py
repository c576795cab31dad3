"""A BC-breaking or deprecation item whose subsystem is unsure reaches the channel of every
subsystem it plausibly belongs to (the model's candidates above the calibrated floor and the
subsystems of the APIs it names), never none and not all; an item that touches the team's code
reaches an ``affects_only`` channel whatever its subsystem."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from statistics import mean

import pytest
from conftest import FIXTURES

from handlers.base import NotifierConfig
from watcher.delivery.events import make_event
from watcher.delivery.routing import route
from watcher.models import ATTENTION_KINDS, SUBSYSTEMS, Affect, EventItem, Release, top_level
from watcher.present.words import UNSURE_BELOW

SHAPES = FIXTURES / "shapes"
CHANNELS = [name for name in SUBSYSTEMS if name != "other"]
NOW = datetime(2026, 1, 21, tzinfo=UTC)


def _notifiers() -> str:
    tables = ['[[notifiers]]\nname = "all"\ntype = "jsonl"\npath = "all.jsonl"\n']
    tables += [f'[[notifiers]]\nname = "{name}"\ntype = "jsonl"\npath = "to-{name}.jsonl"\n'
               f'subsystems = ["{name}"]\n' for name in CHANNELS]
    return "\n".join(tables)


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _channels(item: dict) -> set[str]:
    """The subsystem channels an item belongs in: its own subsystem's; an unsure one's also
    its candidates' (the model's and those of the APIs it names)."""
    names = [item["subsystem"]]
    if item["confidence"] < UNSURE_BELOW:
        names += [name for name, _ in item["candidates"]]
    return {top_level(name) for name in names} & set(CHANNELS)


# What each fixture must hold for every check to check something: 2.10's entries are all
# classified surely (none is unsure), 2.11's include unsure guesses.
@pytest.mark.parametrize(("notes", "unsure_at_least"), [
    ("v2.10.0-breaking-no-areas.md", 0), ("v2.11.0-breaking-no-areas.md", 1)])
def test_every_breaking_entry_reaches_a_subsystem_channel_and_few_on_average(
        notes, unsure_at_least, fake_github, write_config, run_cli):
    """The newest layout: BC-breaking and deprecation entries with no area under the section
    (the real entries of 2.10 and 2.11, their area headings stripped), one channel per
    subsystem, polled end to end."""
    fake_github.add_release("pytorch/pytorch", tag="v2.11.0",
                            body=(SHAPES / notes).read_text(encoding="utf-8"))
    config = write_config(repos=("pytorch/pytorch",), notifiers=_notifiers())
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    (everything,) = _read(config.parent / "all.jsonl")
    breaking = [item for item in everything["items"] if item["kind"] in ATTENTION_KINDS]
    assert len(breaking) >= 10
    reached: dict[str, list[str]] = {item["text"]: [] for item in breaking}
    for name in CHANNELS:
        for event in _read(config.parent / f"to-{name}.jsonl"):
            for item in event["items"]:
                if item["text"] in reached:
                    reached[item["text"]].append(name)
    counts = [len(channels) for channels in reached.values()]
    assert min(counts) >= 1, [text[:60] for text, c in reached.items() if not c]
    assert mean(counts) <= 3 and max(counts) < len(CHANNELS)
    # A sure entry reaches its own subsystem's channel only; an unsure one, each channel it
    # may belong in (it carries where else: its candidates).
    unsure = [item for item in breaking if item["confidence"] < UNSURE_BELOW]
    assert len(unsure) >= unsure_at_least
    assert all(item["candidates"] for item in unsure)
    assert {text: set(channels) for text, channels in reached.items()} == {
        item["text"]: _channels(item) for item in breaking}
    # Candidates are a guess's only: what the model decided carries them, what a heading, a
    # label or a rule decided never does (both kinds are in each fixture).
    guessed = [item for item in everything["items"] if item["decided_by"] == "model"]
    decided = [item for item in everything["items"] if item["decided_by"] != "model"]
    assert guessed and decided
    assert all(item.get("candidates") for item in guessed)
    assert not [item["text"][:60] for item in decided if "candidates" in item]


def _item(**fields: object) -> EventItem:
    base: dict[str, object] = {"subsystem": "nn", "kind": "bc_breaking", "text": "Remove x",
                               "section": [], "prs": [1], "decided_by": "model",
                               "confidence": 0.3,
                               "candidates": [("nn", 0.3), ("distributed", 0.2)]}
    return EventItem.model_validate({**base, **fields})


def _event(*items: EventItem):
    release = Release(id=1, tag_name="v2.11.0", name=None, body="", prerelease=False,
                      html_url="https://github.com/pytorch/pytorch/releases/tag/v2.11.0",
                      published_at=NOW)
    return make_event("published", "pytorch/pytorch", release, "f" * 64, list(items), NOW)


def _routed(config: NotifierConfig, *items: EventItem) -> list[str]:
    view = route(_event(*items), config)
    return [] if view is None else [item.text for item in view.items]


def test_an_unsure_breaking_item_goes_to_its_candidates_only():
    item = _item()
    for wanted, reaches in (("distributed", True), ("nn", True), ("compile", False)):
        config = NotifierConfig(name="c", type="console", subsystems=[wanted])
        assert bool(_routed(config, item)) is reaches, wanted


def test_an_unsure_item_of_another_kind_is_still_left_out_below_min_confidence():
    item = _item(kind="improvement")
    assert _routed(NotifierConfig(name="c", type="console", subsystems=["nn"]), item) == []
    sure = NotifierConfig(name="c", type="console", subsystems=["nn"], min_confidence=0.2)
    assert _routed(sure, item) == ["Remove x"]


def test_a_sure_breaking_item_goes_to_its_own_subsystem_only():
    item = _item(confidence=0.9)
    config = NotifierConfig(name="c", type="console", subsystems=["distributed"])
    assert _routed(config, item) == []


def test_an_item_touching_the_code_reaches_an_affects_only_channel_whatever_its_subsystem():
    use = Affect(path="train.py", line=3, code="torch.nn.Foo()", api="torch.nn.Foo", root="code")
    touching = _item(kind="improvement", confidence=1.0, decided_by="heading", candidates=None,
                     affects=[use], text="Change torch.nn.Foo")
    other = _item(kind="improvement", confidence=1.0, decided_by="heading", candidates=None,
                  text="Change torch.nn.Bar")
    config = NotifierConfig(name="c", type="console", subsystems=["distributed"],
                            affects_only=True)
    assert _routed(config, touching, other) == ["Change torch.nn.Foo"]


def test_candidates_appear_in_the_event_json_only_when_present():
    data = _event(_item(), _item(candidates=None, text="Sure")).to_json_dict()
    first, second = data["items"]
    assert first["candidates"] == [["nn", 0.3], ["distributed", 0.2]]
    assert "candidates" not in second


def test_an_item_exactly_at_min_confidence_counts_as_sure():
    """The floor is "less confident than": an item at ``min_confidence`` is kept by its own
    subsystem's channel, and a breaking one goes there only (not to its candidates)."""
    for floor in (UNSURE_BELOW, 0.2):  # the default, and one a channel sets
        at_floor = _item(kind="improvement", confidence=floor)
        own = NotifierConfig(name="c", type="console", subsystems=["nn"], min_confidence=floor)
        assert _routed(own, at_floor) == ["Remove x"]
        breaking = _item(confidence=floor)
        candidate = NotifierConfig(name="c", type="console", subsystems=["distributed"],
                                   min_confidence=floor)
        assert _routed(candidate, breaking) == []
        below = breaking.model_copy(update={"confidence": floor - 0.01})
        assert _routed(candidate, below) == ["Remove x"]
    default = NotifierConfig(name="c", type="console", subsystems=["nn"])
    assert default.min_confidence == UNSURE_BELOW
