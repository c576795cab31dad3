""""Affects your code" in tiers, everywhere a reader sees it (issue 27 item 5, issue 28 item 3):
what breaks first, then what to check, each use with its why, the mentions counted in one line;
the Slack parent and its thread, the console (``poll`` and ``--short``), a digest (console and
Slack), the Atom feed and the jsonl events agree on the counts. With several codebases every
use names its codebase and links into its own repository.

Against the loopback fake GitHub and fake Slack, with codebases written by each test, so every
use is known line by line: a call passing the ``cuda`` argument the 2.6.0 package removed from
``include_paths`` (breaks), one forwarding ``**kwargs`` to it (check), and an import of the
deprecated namespace (a mention)."""

from __future__ import annotations

import html
import io
import json
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import feedparser
import pytest
from test_impact_bot import ENV, slack

from handlers.base import HandlerContext, notifier_config
from handlers.slack.items import CALLOUT_ITEMS, Style, affects_lines
from watcher.config import Secrets
from watcher.delivery.events import make_event
from watcher.models import Affect, EventItem, Release
from watcher.present import AffectsTally, affects_of

NOTES = textwrap.dedent("""\
    # PyTorch 2.6.0 Release Notes
    # Backwards Incompatible Changes
    ### Remove the `cuda` argument of `torch.utils.cpp_extension.include_paths` (#137602, #138225)
    `include_paths` takes the device instead: code passing `cuda=True` passes
    `device_type="cuda"`.
    # Deprecations
    ## Quantization
    - `torch.ao.quantization` is deprecated and will be removed in 2.10 (#153892)
    # New Features
    ## Distributed
    - Add a new `ProcessGroup` option for NCCL (#140001)
    """)
FLIP = ("Remove the `cuda` argument of `torch.utils.cpp_extension.include_paths` (#137602, "
        "#138225)")
DEPRECATED = "`torch.ao.quantization` is deprecated and will be removed in 2.10 (#153892)"

CKPT = textwrap.dedent("""\
    import torch
    from torch.ao.quantization import QConfig
    from torch.utils.cpp_extension import include_paths

    def load(path):
        return include_paths(cuda=True)


    def load_with(path, **kwargs):
        return include_paths(**kwargs)
    """)
SCORE = ("from torch.utils.cpp_extension import include_paths\n\n\ndef score(path):\n"
         "    return include_paths(cuda=True)\n")
WHY = ("passes cuda=, removed in v2.6.0 (the 2.6.0 package: torch.utils.cpp_extension."
       "include_paths takes no cuda)")

ONE = ('[impact]\ncode = ["trainer"]\n'
       'link = "https://github.com/acme/trainer/blob/main/{path}#L{line}"\n')
# ``[impact] code`` names its entry after its folder (``trainer``); an ``[[impact.codebases]]``
# entry by its ``name``.
TWO = ONE + textwrap.dedent("""\

    [[impact.codebases]]
    name = "evals"
    path = "eval-suite"
    link = "https://git.example.com/acme/evals/-/blob/main/{path}#L{line}"
    """)
TITLE_ONE = "Affects your code (1 item, 2 uses in 1 file: 1 break, 1 to check; 1 mention)"
TITLE_TWO = "Affects your code (1 item, 3 uses in 2 files: 2 break, 1 to check; 1 mention)"
MENTIONS = ("1 mention in 1 file (imports, annotations, isinstance, marking decorators), "
            "not listed")


def notifier(name: str, kind: str, extra: str = "") -> str:
    return f'[[notifiers]]\nname = "{name}"\ntype = "{kind}"\n{extra}\n'


WEEKLY = 'mode = "digest"\ndigest_schedule = "0 9 * * MON"\n'
NOTIFIERS = (notifier("log", "jsonl", 'path = "events.jsonl"')
             + notifier("feed", "feed", 'path = "team.atom"')
             + slack("releases", "#releases"))


def publish(fake_github, tmp_path: Path, *, evals: bool = False) -> None:
    """The release, and the code it touches: ``trainer``, and ``eval-suite`` with ``evals``."""
    fake_github.add_release("pytorch/pytorch", tag="v2.6.0", name="PyTorch 2.6.0", body=NOTES)
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "ckpt.py").write_text(CKPT)
    if evals:
        (tmp_path / "eval-suite").mkdir()
        (tmp_path / "eval-suite" / "score.py").write_text(SCORE)


def poll(run_cli, config: Path, *args: str) -> str:
    result = run_cli("--config", str(config), "poll", *args, env=ENV)
    assert result.code == 0, result.stderr
    return result.stdout


def parent_text(fake_slack, channel: str) -> str:
    parent = next(m for m in fake_slack.channel_messages(channel) if m.thread_ts is None)
    return parent.blocks[1]["text"]["text"]


def jsonl_tiers(tmp_path: Path) -> dict[str, list[tuple[str, str, int]]]:
    """Per tier, the uses of the first event's BC-breaking and deprecation items."""
    event = json.loads((tmp_path / "events.jsonl").read_text().splitlines()[0])
    tiers: dict[str, list[tuple[str, str, int]]] = {}
    for item in event["items"]:
        for use in item.get("affects") or ():
            tiers.setdefault(use["tier"], []).append((use["codebase"], use["path"], use["line"]))
    return tiers


@pytest.mark.slow
def test_every_renderer_leads_with_breaks_then_check_and_counts_the_mentions(
        fake_github, fake_slack, write_config, run_cli, tmp_path):
    publish(fake_github, tmp_path)
    config = write_config(ONE, repos=("pytorch/pytorch",), slack_url=fake_slack.api_url,
                          notifiers=NOTIFIERS + notifier("console", "console")
                          + slack("weekly", "#breaking", WEEKLY)
                          + notifier("digest", "console", WEEKLY))
    stdout = poll(run_cli, config)

    # The jsonl: the truth the renderers count.
    assert jsonl_tiers(tmp_path) == {"breaks": [("trainer", "ckpt.py", 6)],
                                     "check": [("trainer", "ckpt.py", 10)],
                                     "mentions": [("trainer", "ckpt.py", 2)]}

    # Slack's parent: the title counts, breaks before check, each place linked with its why
    # in italics, the mentions in one line; a single codebase is not named.
    lines = parent_text(fake_slack, "releases").split("\n")
    assert lines[0] == f"*{TITLE_ONE}*"
    assert lines[1] == "*Breaks (1 use in 1 file)*"
    assert lines[2].startswith("• *BC-breaking:* ") and "Remove the `cuda` argument" in lines[2]
    assert lines[3] == (f"\u2003<https://github.com/acme/trainer/blob/main/ckpt.py#L6|ckpt.py:6> "
                        f"_{WHY}_")
    assert lines[4] == "*Check (1 use in 1 file)*"
    assert "Remove the `cuda` argument" in lines[5]
    assert lines[6].startswith("\u2003<https://github.com/acme/trainer/blob/main/ckpt.py#L10|"
                               "ckpt.py:10> _")
    assert lines[-1] == f"_{MENTIONS}_"
    assert DEPRECATED not in "\n".join(lines)  # a mention alone does not touch the code

    # The thread marks the one item that touches the code, not the one only mentioned.
    replies = "\n".join(m.all_text() for m in fake_slack.channel_messages("releases")
                        if m.thread_ts is not None)
    marked = [line for line in replies.splitlines() if "_(affects your code)_" in line]
    assert len(marked) == 1 and "Remove the `cuda` argument" in marked[0]

    # The console: the same tiers, each use with its code and why.
    out = stdout.splitlines()
    start = out.index(f"  {TITLE_ONE}:")
    assert out[start + 1:start + 7] == [
        "    Breaks (1 use in 1 file):",
        f"      - BC-breaking: {FLIP}",
        f"          ckpt.py:6  return include_paths(cuda=True)  — {WHY}",
        "    Check (1 use in 1 file):",
        f"      - BC-breaking: {FLIP}",
        "          ckpt.py:10  return include_paths(**kwargs)  — "
        + out[start + 6].split("  — ", 1)[1]]
    assert out[start + 7] == f"    {MENTIONS}"

    # The feed: the same title, tiers and mention line.
    entry = feedparser.parse((tmp_path / "team.atom").read_bytes()).entries[0]
    content = html.unescape(entry.content[0].value)
    assert content.index(TITLE_ONE) < content.index("Breaks (1 use in 1 file)") < \
        content.index("Check (1 use in 1 file)") < content.index(MENTIONS)
    assert (f"<code>ckpt.py:6</code> <code>return include_paths(cuda=True)</code> "
            f"<em>{WHY}</em>") in content

    # The digests, console and Slack: the same counts over the period.
    result = run_cli("--config", str(config), "digest", env=ENV)
    assert result.code == 0, result.stderr
    digest = result.stdout.splitlines()
    start = digest.index(f"    {TITLE_ONE}:")
    assert digest[start + 1] == "      Breaks (1 use in 1 file):"
    assert digest[start + 3] == f"            ckpt.py:6  return include_paths(cuda=True)  — {WHY}"
    assert digest[start + 4] == "      Check (1 use in 1 file):"
    assert digest[start + 7] == f"      {MENTIONS}"
    weekly = [m for m in fake_slack.channel_messages("breaking") if m.thread_ts is None]
    text = weekly[0].all_text()
    assert f"*{TITLE_ONE}*" in text
    assert text.index("*Breaks (1 use in 1 file)*") < text.index("*Check (1 use in 1 file)*") \
        < text.index(f"_{MENTIONS}_")


def test_the_short_console_form_has_the_tiers_too(fake_github, write_config, run_cli,
                                                  tmp_path):
    publish(fake_github, tmp_path)
    config = write_config(ONE, repos=("pytorch/pytorch",), notifiers=notifier("c", "console"))
    out = poll(run_cli, config, "--short").splitlines()
    assert out[1:4] == [f"  {TITLE_ONE}:", "    Breaks (1 use in 1 file):",
                        f"      - BC-breaking: {FLIP}"]
    assert f"    {MENTIONS}" in out
    assert out.index("    Check (1 use in 1 file):") < out.index(f"    {MENTIONS}")


def test_with_two_codebases_each_use_names_its_codebase_and_links_into_its_own(
        fake_github, fake_slack, write_config, run_cli, tmp_path):
    publish(fake_github, tmp_path, evals=True)
    config = write_config(TWO, repos=("pytorch/pytorch",), slack_url=fake_slack.api_url,
                          notifiers=NOTIFIERS + notifier("console", "console"))
    stdout = poll(run_cli, config)
    assert jsonl_tiers(tmp_path)["breaks"] == [("trainer", "ckpt.py", 6),
                                               ("evals", "score.py", 5)]

    parent = next(m for m in fake_slack.channel_messages("releases") if m.thread_ts is None)
    assert parent.blocks[1]["text"]["text"].startswith(f"*{TITLE_TWO}*\n*Breaks (2 uses in 2 ")
    links = [link for link in parent.links if ".py#L" in link[0]]
    assert links == [
        ("https://github.com/acme/trainer/blob/main/ckpt.py#L6", "trainer: ckpt.py:6"),
        ("https://git.example.com/acme/evals/-/blob/main/score.py#L5", "evals: score.py:5"),
        ("https://github.com/acme/trainer/blob/main/ckpt.py#L10", "trainer: ckpt.py:10")]

    out = stdout.splitlines()
    assert f"  {TITLE_TWO}:" in out
    assert f"          trainer: ckpt.py:6  return include_paths(cuda=True)  — {WHY}" in out
    assert f"          evals: score.py:5  return include_paths(cuda=True)  — {WHY}" in out

    content = html.unescape(feedparser.parse((tmp_path / "team.atom").read_bytes())
                            .entries[0].content[0].value)
    assert "<code>evals: score.py:5</code>" in content
    assert "<code>trainer: ckpt.py:10</code>" in content


def test_a_codebase_without_a_link_is_never_linked_through_another(
        fake_github, fake_slack, write_config, run_cli, tmp_path):
    publish(fake_github, tmp_path, evals=True)
    unlinked = TWO.replace('link = "https://git.example.com/acme/evals/-/blob/main/'
                           '{path}#L{line}"\n', "")
    config = write_config(unlinked, repos=("pytorch/pytorch",), slack_url=fake_slack.api_url,
                          notifiers=slack("releases", "#releases"))
    poll(run_cli, config)
    parent = next(m for m in fake_slack.channel_messages("releases") if m.thread_ts is None)
    assert "\u2003`evals: score.py:5` _" in parent.all_text()
    assert all("score.py" not in url for url, _ in parent.links)


# ---- the plan and its drawing, on their own -------------------------------------------------
NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def use(line: int, tier: str, codebase: str = "trainer") -> Affect:
    return Affect(path="ckpt.py", line=line, code="torch.load(f)", api="torch.load",
                  root=codebase, codebase=codebase, tier=tier, why=f"why {line}")  # type: ignore[arg-type]


def deprecation(number: int, *uses: Affect) -> EventItem:
    return EventItem(subsystem="python_frontend", kind="deprecation", text=f"Item {number}",
                     section=["Deprecations"], prs=[number], affects=list(uses))


def test_the_plan_lists_breaks_then_check_and_leaves_mention_only_items_out():
    items = [deprecation(1, use(3, "check")), deprecation(2, use(4, "mentions")),
             deprecation(3, use(5, "breaks"), use(6, "check"), use(7, "mentions"))]
    plan = affects_of(items)
    assert plan.title == ("Affects your code (2 items, 3 uses in 1 file: 1 break, 2 to check; "
                          "2 mentions)")
    assert [(group.title, [(entry.item.prs, [u.line for u in entry.uses])
                           for entry in group.entries]) for group in plan.tiers] == [
        ("Breaks (1 use in 1 file)", [([3], [5])]),
        ("Check (2 uses in 1 file)", [([1], [3]), ([3], [6])])]
    assert plan.mentions == ("2 mentions in 1 file (imports, annotations, isinstance, marking "
                             "decorators), not listed")
    assert not plan.named
    assert not affects_of([deprecation(1, use(4, "mentions"))])  # a mention touches nothing


def test_slack_lists_eight_items_and_counts_the_rest_with_a_digests_unkept_ones():
    items = [deprecation(number, use(number, "breaks")) for number in range(1, 11)]
    tally = AffectsTally()
    for item in items:
        tally.add(item, keep=9)
    assert tally.count == 10 and len(tally.items) == 9
    lines = affects_lines(tally.plan(), Style(), more=tally.count - len(tally.items))
    assert lines[0] == "*Breaks (10 uses in 1 file)*"
    assert sum(line.startswith("• *Deprecation:* ") for line in lines) == CALLOUT_ITEMS == 8
    assert lines[-1] == "_…and 2 more in the thread_"  # one the digest did not keep, one cut
    assert tally.plan().title == "Affects your code (10 items, 10 uses in 1 file: 10 break)"


def test_a_context_with_one_link_for_all_links_every_codebase_through_it(tmp_path):
    cls, config = notifier_config({"name": "r", "type": "slack", "channel": "#r"}, "test",
                                  environ={"SLACK_BOT_TOKEN": "xoxb-1"})
    context = HandlerContext(secrets=Secrets(), base_dir=tmp_path, stdout=io.StringIO(),
                             code_link="https://h/{path}#L{line}")
    release = Release(id=1, tag_name="v2.6.0", name="PyTorch 2.6.0", body="",
                      html_url="https://github.com/pytorch/pytorch/releases/tag/v2.6.0",
                      published_at=NOW)
    item = deprecation(1, use(5, "breaks", "trainer"), use(6, "breaks", "evals"))
    event = make_event("published", "pytorch/pytorch", release, "1" * 64, [item], NOW)
    (message,) = cls(config, context).plan(event)
    text = json.dumps(message.blocks)
    assert "<https://h/ckpt.py#L5|trainer: ckpt.py:5> _why 5_" in text
    assert "<https://h/ckpt.py#L6|evals: ckpt.py:6> _why 6_" in text


def test_a_why_is_one_line_of_text_that_pings_nobody():
    hostile = use(5, "breaks").model_copy(update={"why": "calls <!channel>\n*x*"})
    (title, entry) = affects_lines(affects_of([deprecation(1, hostile)]), Style())
    assert title == "*Breaks (1 use in 1 file)*"
    assert entry.split("\n")[1] == "\u2003`ckpt.py:5` _calls &lt;!channel&gt;\\n*x*_"
