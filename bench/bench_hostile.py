"""Hostile release bodies against real ones: no body a release author writes may stall a poll.

For each body below (up to GitHub's 125,000-character limit for a release body) this measures
parse + classify, and rendering every item for Slack, next to a real note of the same size (the
real notes joined and cut at a line boundary to that length), the two taking turns in the same
run. The bound: at most 3x the real note's time. Two families: pathological runs of one
construct (backticks, brackets, nesting), and item-heavy bodies (tens of thousands of tiny
bullets, headings or table rows, where a real note of that size has about 700 items), whose
cost is per block and per item; those beyond ``poll.max_items_per_release`` (2,000) are summed
up in one item, so the rendering and the classifier see at most 2,001.

Last, a 1,000,000-character body of one-word bullets (GitHub refuses bodies over 125,000; the
issue measured it when ``poll.max_body_chars`` let all of it through), taken the way a poll
takes it, with the default config: cut at ``poll.max_body_chars``, items past
``poll.max_items_per_release`` summed up, then planned for Slack by the Slack notifier with its
defaults (``max_messages_per_event``). Each figure is printed beside the issue's.

    python bench/bench_hostile.py [--markdown]
"""

from __future__ import annotations

import io
import logging
import sys
import tempfile
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

from bench_first_poll import peak_of
from run_all import TOKEN, Row, fake_github, print_table, seconds, timed, times, verdict

from handlers.base import HandlerContext
from handlers.slack.compose import Limits, event_messages
from handlers.slack.items import Style
from handlers.slack.notifier import SlackNotifier, SlackNotifierConfig
from watcher.config import Secrets
from watcher.config.load import load_config
from watcher.delivery.events import added, make_event
from watcher.models import Event, Release
from watcher.notes.analyze import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy

ROOT = Path(__file__).resolve().parent.parent
RELEASES = ROOT / "tests" / "fixtures" / "releases" / "pytorch"
LIMIT = 125_000  # GitHub's longest release body


def hostile_bodies(size: int = LIMIT) -> dict[str, str]:
    """Pathological runs of every construct whose naive handling backtracks or nests."""
    runs = {
        "20,000 backticks": "- x " + "`" * 20_000,
        "100,000 backticks": "- x " + "`" * 100_000,
        "backtick pairs": "- " + "`a" * (size // 2),
        "opening brackets": "- " + "[" * size,
        "bracket-letter pairs": "- " + "[a" * (size // 2),
        "unclosed links": "- " + "[a](b" * (size // 5),
        "asterisks": "- " + "*" * size,
        "bold openers": "- " + "**a" * (size // 3),
        "underscores": "- " + "_" * size,
        "angle brackets": "- " + "<" * size,
        "HTML table tags": "<table><tr><td>" * (size // 15),
        "deep nesting": "".join("  " * n + "- a (#1)\n" for n in range(250)),
        "hash runs": "#" * size,
        "one long line": "- " + "word (#1) " * (size // 10),
    }
    return {name: body[:size] for name, body in runs.items()}


def _numbered(line: str, size: int) -> str:
    out, length, number = [], 0, 0
    while length < size:
        number += 1
        out.append(line.format(number))
        length += len(out[-1])
    return "".join(out)[:size]


def item_heavy_bodies(size: int = LIMIT) -> dict[str, str]:
    """Tens of thousands of tiny blocks or items, where a real note has about a thousand: what
    they cost is per block and per item (markdown-it's, the parser's, the classifier's)."""
    table = "| change | PR |\n|---|---|\n" + _numbered("| fix {0} | (#{0}) |\n", size)
    runs = {
        "GFM table rows citing PRs": table,
        "NUL-byte bullets": "- \x00\n" * (size // 4),
        "`- fix #i` bullets": _numbered("- fix #{}\n", size),
        "`# h` x31,250": "# h\n" * (size // 4),
        "`## Distributed` + bullet pairs": "## Distributed\n- x (#1)\n" * (size // 24),
        "setext headings": "h\n=\n" * (size // 4),
        "1,000 nested list markers on one line": "- " * 1000 + "x\n",
        "one-word bullets": "- x\n" * (size // 4),
    }
    return {name: body[:body.rfind("\n", 0, size) + 1] for name, body in runs.items()}


def real_body(size: int) -> str:
    joined = "\n".join(path.read_text(encoding="utf-8") for path in sorted(RELEASES.glob("*.md")))
    while len(joined) < size:
        joined += "\n" + joined
    return joined[: joined.rfind("\n", 0, size) + 1]


BOUND = 3.0  # times a real note of the same size
ROUNDS = 5  # each body and its real note take turns this many times; the best of each counts
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
_URL = "https://github.com/pytorch/pytorch/releases/tag/v9"


def _event(analyzer: Analyzer, body: str) -> Event:
    items = analyzer.items(body, repo="pytorch/pytorch", url=_URL)
    release = Release(id=1, tag_name="v9", name="PyTorch 9", body=body, html_url=_URL)
    return make_event("published", "pytorch/pytorch", release, "0" * 64, added(items), _EPOCH)


def measure(analyzer: Analyzer, body: str, real: str) -> tuple[list[float], list[float]]:
    """Best (parse + classify, Slack rendering of every item) in seconds, of the body and of the
    real note; the two take turns, so that other work on the machine falls on both alike."""
    events = [_event(analyzer, body), _event(analyzer, real)]
    best = [[float("inf")] * 2 for _ in events]
    for _ in range(ROUNDS):
        for which, text in enumerate((body, real)):
            event = events[which]
            best[which][0] = min(best[which][0], timed(
                lambda text=text: analyzer.items(text, repo="pytorch/pytorch", url=_URL)))
            best[which][1] = min(best[which][1], timed(
                lambda event=event: event_messages(event, Limits(True, 10_000),
                                                   Style(repo=event.repo))))
    return best[0], best[1]


def run() -> list[Row]:
    logging.getLogger("watcher.notes.analyze").setLevel(logging.ERROR)  # the cap's warnings
    analyzer = Analyzer(builtin_taxonomy(), max_body_chars=LIMIT)
    analyzer.items(real_body(2000))  # load the taxonomy and model outside the timings
    rows = []
    for name, body in {**hostile_bodies(), **item_heavy_bodies()}.items():
        size = len(body)
        (classify, render), (real_classify, real_render) = measure(analyzer, body,
                                                                   real_body(size))
        worst = max(classify / real_classify, render / real_render)
        items = len(analyzer.items(body, repo="pytorch/pytorch"))
        rows.append(Row(f"hostile body: {name} ({size:,} chars, {items:,} items): "
                        "parse+classify / render",
                        f"{seconds(classify)} / {seconds(render)}",
                        f"real note, same size: {seconds(real_classify)} / "
                        f"{seconds(real_render)}",
                        f"{times(classify / real_classify)} / {times(render / real_render)}; "
                        + verdict(worst <= BOUND, f"<= {BOUND:g}x")))
    return rows + megabyte_rows()


MEGABYTE = 1_000_000
# What the issue measured for that body, before the body and item caps (2 cores).
ISSUE_CLASSIFY = "28 s, 720 MB (issue, classify)"
ISSUE_POLL = "39 s, 895 MB (issue, poll)"
ISSUE_SLACK = "917 messages (issue)"


def megabyte_body() -> str:
    return "- x\n" * (MEGABYTE // 4)


def megabyte_rows() -> list[Row]:
    """The 1 MB one-word-bullet body through a poll's caps: in process, as a whole ``classify``
    process and a whole first ``poll`` of one repo (whose newest release it is, so announced),
    and the Slack messages the notifier plans for its event."""
    poll = load_config(None).poll
    body = megabyte_body()
    analyzer = Analyzer(builtin_taxonomy(), max_body_chars=poll.max_body_chars,
                        max_items=poll.max_items_per_release)
    analyzer.items(real_body(2000))  # the taxonomy and model, outside the figures
    took = min(timed(lambda: analyzer.items(body, repo="pytorch/pytorch", url=_URL))
               for _ in range(3))
    tracemalloc.start()
    items = analyzer.items(body, repo="pytorch/pytorch", url=_URL)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    caps = (f"cut at max_body_chars = {poll.max_body_chars:,}, "
            f"max_items_per_release = {poll.max_items_per_release:,}")
    rows = [Row(f"1 MB one-word bullets ({len(body):,} chars), parse+classify in process: "
                "wall, peak traced memory", f"{seconds(took)}, {peak:.0f} MiB",
                ISSUE_CLASSIFY, f"{len(items):,} items ({caps})")]
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as name:
        tmp = Path(name)
        (tmp / "body.md").write_text(body, encoding="utf-8")
        env = {"PATH": "/usr/bin:/bin"}
        rss, wall = peak_of([sys.executable, "-m", "watcher", "classify", "body.md"], env, tmp)
        rows.append(Row("1 MB one-word bullets: `release-watch classify FILE`, whole process: "
                        "wall, max RSS", f"{seconds(wall)}, {rss:.0f} MB", ISSUE_CLASSIFY,
                        f"cut at max_body_chars; classify lists every item of the cut body "
                        f"({poll.max_body_chars // 4:,})"))
        rss, wall = _poll_process(body, tmp)
        rows.append(Row("1 MB one-word bullets: first `release-watch poll` of its repo, whole "
                        "process: wall, max RSS", f"{seconds(wall)}, {rss:.0f} MB", ISSUE_POLL,
                        "against the fake GitHub; the release announced to a jsonl notifier"))
    config = SlackNotifierConfig(name="releases", type="slack", channel="#releases")
    context = HandlerContext(secrets=Secrets(SLACK_BOT_TOKEN="xoxb-bench-token-5678"),
                             base_dir=Path("."), stdout=io.StringIO())
    notifier = SlackNotifier(config, context)
    planned = notifier.plan(_event(analyzer, body))
    notifier.close()
    rows.append(Row("1 MB one-word bullets: Slack messages planned for its event",
                    f"{len(planned)} messages", ISSUE_SLACK,
                    "bot token, parent and thread; "
                    + verdict(len(planned) <= config.max_messages_per_event,
                              f"<= max_messages_per_event ({config.max_messages_per_event})")))
    return rows


def _poll_process(body: str, tmp: Path) -> tuple[float, float]:
    """(max RSS in MB, wall seconds) of a first poll of one repo whose release has ``body``."""
    fake = fake_github()
    try:
        fake.set_token(TOKEN)
        fake.add_release("pytorch/pytorch", tag="v9", name="PyTorch 9", body=body)
        config = tmp / "release-watch.toml"
        config.write_text(f'[github]\napi_url = "{fake.url}"\n[store]\npath = "store"\n'
                          '[[repos]]\nname = "pytorch/pytorch"\n[[notifiers]]\nname = "log"\n'
                          'type = "jsonl"\npath = "events.jsonl"\n')
        env = {"GITHUB_TOKEN": TOKEN, "PATH": "/usr/bin:/bin"}
        found = peak_of([sys.executable, "-m", "watcher", "--config", str(config), "poll"],
                        env, tmp)
        if not (tmp / "events.jsonl").read_text().strip():
            raise RuntimeError("the poll announced nothing")
        return found
    finally:
        fake.stop()


def main() -> int:
    print_table(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
