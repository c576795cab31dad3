"""The shortcuts that make hostile bodies cheap give the answers of the long way, exactly: rules
tried all at once (``prefilter.any_of``), highlight-table cells matched through an index of the
entries' words (``tables.Retold``), typo look-ups among the headings of a near length,
classification shared by items that read alike, and patterns compiled on first use
(``prefilter.LazyPattern``)."""

from __future__ import annotations

import re
import string

import pytest
from conftest import RELEASES
from hypothesis import given, settings
from hypothesis import strategies as st

from watcher.errors import ConfigError
from watcher.models import Item
from watcher.notes.classify import Classifier
from watcher.notes.classify.kinds import first_match
from watcher.notes.headings import _swapped_pair, close_key, heading_keys
from watcher.notes.model import builtin_model, features
from watcher.notes.prefilter import LazyPattern, any_of
from watcher.notes.tables import Retold
from watcher.notes.taxonomy import builtin_taxonomy, with_overrides

TAXONOMY = builtin_taxonomy()
CLASSIFIER = Classifier(TAXONOMY)
LINES = [line for path in sorted(RELEASES.glob("*/*"))
         for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("group", range(3), ids=["strong", "anchored", "anywhere"])
def test_kind_rules_tried_at_once_pick_the_rule_tried_one_by_one(group):
    rules, together = CLASSIFIER.kinds._kind_rules[group]
    assert together is not None  # the shipped rules join
    for line in LINES:
        first = next((rule for rule in rules if rule.pattern.search(line)), None)
        assert first_match((rules, together), line) is first, line


def test_every_shipped_pattern_compiles_as_re_would_and_only_when_searched():
    """The taxonomy's built-in patterns wait for a text to need them, so nothing else would
    find a broken one: each is compiled here, and reads as ``re.compile`` reads it."""
    rules = [*TAXONOMY.text_rules, *TAXONOMY.kind_rules, *TAXONOMY.lead_rules,
             *TAXONOMY.patch_rules]
    assert len(rules) > 600
    for rule in rules:
        compiled = re.compile(rule.pattern.pattern, re.IGNORECASE)
        assert rule.pattern.flags == compiled.flags
        assert rule.pattern.compiled().pattern == compiled.pattern
    fresh = LazyPattern(r"\bzz(q)\b", re.IGNORECASE)
    assert fresh._compiled is None and fresh.flags == re.compile("", re.IGNORECASE).flags
    found = fresh.search("a ZZQ b")
    assert found is not None and found.group(1) == "Q" and fresh._compiled is not None


def test_a_user_rule_that_does_not_compile_is_refused_at_once():
    with pytest.raises(ConfigError, match=r"classify.rules: pattern '\(' is not a valid regex"):
        with_overrides({}, [("nn", ["("])])


def test_patterns_that_joining_would_change_are_not_joined():
    assert any_of([re.compile(r"(a)\1"), re.compile("b")]) is None
    assert any_of([re.compile("(?P<x>a)"), re.compile("(?P<x>b)")]) is None
    assert any_of([re.compile("a", re.IGNORECASE), re.compile("b")]) is None
    joined = any_of([re.compile("^x", re.IGNORECASE), re.compile(r"\bY\b", re.IGNORECASE)])
    assert joined is not None and joined.search("a y") and not joined.search("ax")
    lazy = [LazyPattern("^x", re.IGNORECASE), LazyPattern(r"\bY\b", re.IGNORECASE)]
    assert any_of(lazy) is not None and all(p._compiled is None for p in lazy)  # not compiled
    assert any_of([LazyPattern("a", re.IGNORECASE), re.compile("b", re.IGNORECASE)]) is not None


def _similar(cell: str, title: str) -> bool:
    """The comparison the index stands in for, as it was written before it."""
    a, b = (set(re.findall(r"\w+", text.lower())) for text in (cell, title))
    return bool(a and b) and (len(a & b) / len(a | b) >= 0.6 or a <= b)


WORDS = st.lists(st.sampled_from(["fix", "it", "a", "b", "c", "Flex", "attention", "x1", ""]),
                 max_size=6).map(" ".join)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=8), st.lists(WORDS, max_size=10))
def test_the_title_index_finds_the_cells_every_title_would(titles, cells):
    told = Retold(titles)
    for cell in cells:
        assert told.retells(cell) == any(_similar(cell, title) for title in titles), (cell,)


def test_typos_found_among_headings_of_a_near_length_are_those_found_among_all():
    known = [*TAXONOMY.area_headings, *TAXONOMY.kind_headings]
    for key in known[:120]:
        for cut in range(len(key)):
            for typo in (key[:cut] + key[cut + 1:], key[:cut] + "x" + key[cut + 1:],
                         key[:cut] + key[cut + 1:cut + 2] + key[cut:cut + 1] + key[cut + 2:]):
                assert close_key(typo, TAXONOMY._keys_near(len(typo))) == close_key(typo, known)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="abcd", max_size=6), st.text(alphabet="abcd", max_size=6))
def test_a_swapped_pair_is_one_swap_and_nothing_else(a, b):
    diffs = [i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
    expected = len(a) == len(b) and len(diffs) == 2 and diffs[1] == diffs[0] + 1 and (
        a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]])
    assert _swapped_pair(a, b) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.ascii_letters + " ()[]:-.`&_/#+\u2013", max_size=30))
def test_plain_heading_keys_take_the_short_way_to_the_same_keys(title):
    from watcher.notes.headings import _ROUND, _trimmed, _without_qualifiers, heading_key

    plain = _without_qualifiers(title)
    keys: list[str] = []
    for variant in (title, plain, _ROUND.sub(" ", plain), *_ROUND.findall(plain)):
        keys.extend(_trimmed(heading_key(variant)))
    assert heading_keys(title) == tuple(key for key in dict.fromkeys(keys) if key)


def test_items_that_read_alike_share_one_classification():
    items = [Item(text="Fix the thing", prs=(n,)) for n in range(1, 4)] + [
        Item(text="Fix the thing", section=("Distributed",), prs=(9,))]
    classified = Classifier(TAXONOMY).classify_all(items)
    assert [item.prs for item in classified] == [(1,), (2,), (3,), (9,)]
    one_by_one = [Classifier(TAXONOMY).classify(item) for item in items]
    assert classified == one_by_one
    assert classified[3].subsystem.startswith("distributed")


def test_the_model_s_best_guess_is_the_first_of_its_calibrated_list():
    model = builtin_model()
    for line in LINES[::7]:
        found = [*features(line), *CLASSIFIER.model_cues(line)]
        subsystem, probability = model.calibrated(model.feature_scores(found))[0]
        guess = model.predict_features(found)
        assert (guess.subsystem, guess.probability) == (subsystem, probability), line
