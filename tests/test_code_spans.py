"""Code spans in Slack rendering pair as CommonMark pairs them: a run of n backticks closes at
the next run of exactly n, the runs inside a span are code, a run with no closing run and a
run escaped with a backslash are text. Lines whose runs are all one length pair in order (the
usual case, taken without the general walk); lines of mixed lengths take the walk. Both must
give the same spans."""

from __future__ import annotations

import pytest

from handlers.slack.text import _code_spans, to_mrkdwn


@pytest.mark.parametrize(("line", "spans", "shown"), [
    ("`a` b `c`", [(0, 3, 1), (6, 9, 1)], "`a` b `c`"),
    ("``a`b`` c", [(0, 7, 2)], "`a\u2018b` c"),  # a shorter run inside is code
    ("`a ``b`` c", [(3, 8, 2)], "`a `b` c"),  # the single backtick never closes: text
    ("`a``b`", [(0, 6, 1)], "`a\u2018\u2018b`"),  # the double run inside is code
    ("`` a ` b `` c", [(0, 11, 2)], "`a \u2018 b` c"),
    ("```", [], "```"),
    ("`a` ``b`` `c` ``d", [(0, 3, 1), (4, 9, 2), (10, 13, 1)], "`a` `b` `c` ``d"),
    ("\\`a` b`", [(3, 7, 1)], None),  # the escaped run is text; the span is "` b`"
    ("\\``a`", [], None),  # a whole run escaped: no span
])
def test_code_spans_pair_as_commonmark_pairs_them(line, spans, shown):
    assert _code_spans(line) == spans
    if shown is not None:
        assert to_mrkdwn(line, "o/r") == shown


def test_a_line_of_tens_of_thousands_of_spans_pairs_the_same_either_way():
    """62,500 single-backtick runs pair in order; a double-backtick span in front sends the
    same line down the general walk, and the spans after it are the same, shifted."""
    pairs = "`a" * 62_500
    alike = _code_spans(pairs)
    mixed = _code_spans("``x`` " + pairs)
    assert len(alike) == 31_250 and alike[:2] == [(0, 3, 1), (4, 7, 1)]
    assert mixed[0] == (0, 5, 2)
    assert [(start - 6, end - 6, n) for start, end, n in mixed[1:]] == alike
    rendered = to_mrkdwn(pairs, "o/r")
    assert rendered == "`a`a" * 31_250
