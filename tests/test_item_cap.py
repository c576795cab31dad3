"""What one release can cost downstream is bounded: past ``poll.max_items_per_release`` items
the rest of a release is one item that says how many there are and where to read them, never
a silent loss; bodies past ``poll.max_body_chars`` (by default GitHub's own 125,000-character
limit) are parsed only that far."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from watcher.config import config_from_dict, load_config
from watcher.errors import ConfigError
from watcher.notes.analyze import MAX_ITEMS, Analyzer
from watcher.notes.parse import parse_notes
from watcher.notes.taxonomy import builtin_taxonomy

TAXONOMY = builtin_taxonomy()
URL = "https://github.com/pytorch/pytorch/releases/tag/v9.0.0"
BODY = "## Bug fixes\n\n" + "".join(f"- Fix the {n}th thing (#{n})\n" for n in range(1, 9))


def test_items_past_the_cap_are_summed_up_in_one_item_with_the_release_link(caplog):
    analyzer = Analyzer(TAXONOMY, max_items=5)
    with caplog.at_level(logging.WARNING, logger="watcher.notes.analyze"):
        items = analyzer.items(BODY, label="pytorch/pytorch v9.0.0", url=URL)
    assert [item.prs for item in items[:5]] == [(1,), (2,), (3,), (4,), (5,)]
    summary = items[5]
    assert len(items) == 6
    assert summary.text == f"3 more items not shown: see [the release notes]({URL})"
    assert (summary.subsystem, summary.kind, summary.prs) == ("other", "other", ())
    assert [record.getMessage() for record in caplog.records] == [
        "pytorch/pytorch v9.0.0: 8 items, over poll.max_items_per_release=5; the first 5 are "
        "kept and the other 3 summed up in one item"]


def test_the_summary_says_where_to_look_even_without_a_link():
    items = Analyzer(TAXONOMY, max_items=7).items(BODY)
    assert items[-1].text == "1 more item not shown: see the release notes"
    assert len(items) == 8


def test_a_release_at_the_cap_loses_nothing_and_says_nothing(caplog):
    with caplog.at_level(logging.WARNING, logger="watcher.notes.analyze"):
        items = Analyzer(TAXONOMY, max_items=8).items(BODY, url=URL)
    assert [item.prs for item in items] == [(n,) for n in range(1, 9)]
    assert not caplog.records


def test_the_parser_counts_the_items_it_does_not_build():
    notes = parse_notes(BODY, lookup=TAXONOMY, max_items=2)
    assert [item.prs for item in notes.items] == [(1,), (2,)]
    assert notes.omitted == 6
    assert parse_notes(BODY, lookup=TAXONOMY).omitted == 0  # no cap: every item built


def test_a_thousand_times_the_largest_real_release_stays_within_the_cap():
    body = "".join(f"- Fix {n} (#{n})\n" for n in range(1, 31_251))
    items = Analyzer(TAXONOMY, max_body_chars=1_000_000).items(body, url=URL)
    assert len(items) == MAX_ITEMS + 1
    assert items[-1].text.startswith(f"{31_250 - MAX_ITEMS:,} more items not shown")


def test_the_defaults_are_github_s_body_limit_and_2000_items():
    poll = load_config(None).poll
    assert poll.max_body_chars == 125_000
    assert poll.max_items_per_release == MAX_ITEMS == 2000
    assert Analyzer(TAXONOMY).max_body_chars == 125_000


@pytest.mark.parametrize(("key", "value"), [("max_body_chars", 999),
                                            ("max_items_per_release", 0)])
def test_the_caps_have_a_floor(key, value):
    with pytest.raises(ConfigError, match=f"poll.{key}"):
        config_from_dict({"poll": {key: value}}, base_dir=Path("."), source="test")


def test_a_polled_release_s_summary_item_links_its_release_page():
    """The poll hands the release's page to the analyzer: the item summing up what is past the
    cap points the reader (and Slack's "see the release notes") at the right place."""
    from datetime import UTC, datetime

    from watcher.models import Release
    from watcher.plan import RepoPolicy, plan_repo

    release = Release(id=1, tag_name="v9.0.0", body=BODY, html_url=URL,
                      published_at=datetime(2026, 1, 1, tzinfo=UTC))
    plan = plan_repo("pytorch/pytorch", {}, [release], [], RepoPolicy(),
                     Analyzer(TAXONOMY, max_items=5), datetime(2026, 1, 2, tzinfo=UTC))
    (event,) = plan.events
    assert event.items[-1].text == f"3 more items not shown: see [the release notes]({URL})"
    assert len(event.items) == 6
    # Slack shows it as a link labelled in words, the console as the words and the address.
    from handlers.slack.text import to_mrkdwn
    from watcher.present import show_links

    assert to_mrkdwn(event.items[-1].text, "pytorch/pytorch").endswith(
        f"see <{URL}|the release notes>")
    assert show_links(event.items[-1].text, "pytorch/pytorch", hyperlinks=False).endswith(
        f"see the release notes ({URL})")
