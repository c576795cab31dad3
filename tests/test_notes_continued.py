"""A BC-breaking or deprecation entry keeps every line of its notes: the paragraph, the bullets
naming what it deprecates, and the prose that goes on after them, whether the bullets are
nested under the entry or stand at the top level below it."""

from __future__ import annotations

from conftest import FIXTURES

from watcher.notes.invariants import check_items
from watcher.notes.parse import parse_notes
from watcher.notes.taxonomy import builtin_taxonomy

TAXONOMY = builtin_taxonomy()
SHAPE = FIXTURES / "shapes" / "deprecation-prose-after-bullets.md"


def _items():
    body = SHAPE.read_text(encoding="utf-8")
    return body, parse_notes(body, lookup=TAXONOMY)


def test_prose_after_nested_bullets_stays_in_its_entry():
    body, notes = _items()
    assert check_items(body, notes.items, TAXONOMY).ok
    first = next(item for item in notes.items if 170001 in item.prs)
    for name in ("pad_sequence_fast", "pack_weights", "flatten_params"):
        assert f"torch.utils.legacy.{name}" in first.text
    assert "User code calling these APIs does not need to change yet" in first.text
    assert not any("User code calling" in text for text in notes.prose)


def test_a_top_level_list_of_what_is_deprecated_belongs_to_the_entry_above_it():
    _, notes = _items()
    entry = next(item for item in notes.items if 170003 in item.prs)
    assert "torch.distributed.new_subgroups_by_enumeration" in entry.text
    assert "Code that passes `group_name` keeps working" in entry.text
    # The functions it lists are its notes, not changes of their own.
    assert not any(item.text.startswith("`torch.distributed.new_subgroups") for item in notes.items)


def test_the_entries_after_the_prose_stay_entries_of_their_own():
    _, notes = _items()
    by_pr = {pr: item for item in notes.items for pr in item.prs}
    assert sorted(by_pr) == [170001, 170002, 170003, 170004]
    assert by_pr[170002].text.startswith("Deprecate `torch.utils.legacy.Timer`")
    assert "User code calling" not in by_pr[170002].lead
    assert by_pr[170004].section[0] == "Bug Fixes"


def test_a_lead_in_ending_in_a_colon_still_introduces_the_entries_below_it():
    body = ("# Deprecations\n- Deprecate `torch.a` ([#1](https://github.com/pytorch/pytorch/pull/1))\n\n"
            "The following are deprecated as well:\n"
            "- `torch.b` ([#2](https://github.com/pytorch/pytorch/pull/2))\n"
            "- `torch.c` ([#3](https://github.com/pytorch/pytorch/pull/3))\n")
    notes = parse_notes(body, lookup=TAXONOMY)
    assert [item.prs for item in notes.items] == [(1,), (2,), (3,)]
    assert notes.items[1].lead == "The following are deprecated as well:"
    assert "The following" not in notes.items[0].text
