"""The ``feed`` notifier: an Atom feed that feedparser reads without complaint, holding exactly
what the notifier's filters let through, the newest ``entries``, with stable ids; written whole
or not at all; served by the daemon at ``/feeds/NAME.atom``."""

from __future__ import annotations

import html
import io
import json
import os
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import feedparser
import pytest
from conftest import release_notes
from server_support import LISTEN, Served

from handlers.base import HandlerContext, MemoryProgress, notifier_config
from handlers.feed import ID_PREFIX, FeedNotifier
from watcher.config import Secrets
from watcher.delivery.events import added, make_event
from watcher.errors import HandlerError
from watcher.models import Release
from watcher.notes.analyze import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy

ATOM = "{http://www.w3.org/2005/Atom}"
NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def feed(name: str, path: str, extra: str = "") -> str:
    return f'[[notifiers]]\nname = "{name}"\ntype = "feed"\npath = "{path}"\n{extra}\n'


def parsed(path):
    result = feedparser.parse(path.read_bytes())
    assert not result.bozo, result.get("bozo_exception")
    assert result.version == "atom10"
    return result


def poll(run_cli, config):
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    return result


def test_the_feed_is_atom_with_stable_ids_times_and_links(
    fake_github, write_config, run_cli, tmp_path, clock
):
    release = fake_github.add_release(
        "pytorch/xla", tag="v2.0.0", body=release_notes("xla/v2.0.0.md")
    )
    config = write_config(
        repos=("pytorch/xla",), notifiers=feed("team", "feeds/team.atom", 'title = "Team news"')
    )
    poll(run_cli, config)
    path = tmp_path / "feeds" / "team.atom"
    result = parsed(path)
    assert result.feed.title == "Team news"
    assert result.feed.id == ID_PREFIX + "feed/team"
    assert [link.href for link in result.feed.links if link.rel == "self"] == ["/feeds/team.atom"]
    (entry,) = result.entries
    assert entry.id.startswith(ID_PREFIX + "pytorch/xla:1000:published:")
    assert entry.title == "PyTorch/XLA v2.0.0 released"
    assert entry.link == release["html_url"]
    assert entry.updated == clock.now.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert entry.published == release["published_at"]
    assert result.feed.updated == entry.updated
    assert "42 changes" in entry.summary
    assert entry.content[0].type == "text/html"
    before = path.read_bytes()
    clock.sleep(600)
    poll(run_cli, config)  # nothing new: the feed is as it was
    assert path.read_bytes() == before


def jsonl(name: str, path: str, extra: str = "") -> str:
    return f'[[notifiers]]\nname = "{name}"\ntype = "jsonl"\npath = "{path}"\n{extra}\n'


def leaf_items(content: str) -> int:
    """Items in an entry's HTML: every ``<li>`` but those that head a group's list."""
    return content.count("</li>") - content.count("</ul></li>")


@pytest.mark.slow
@pytest.mark.parametrize(
    "filters",
    [
        "",
        'kinds = ["bc_breaking", "deprecation"]',
        'subsystems = ["distributed"]',
        'repos = ["pytorch/xla"]',
        'events = ["edited"]',
    ],
    ids=["all", "breaking", "distributed", "other-repo", "other-event"],
)
def test_the_feed_holds_exactly_what_its_filters_allow(
    fake_github, write_config, run_cli, tmp_path, filters
):
    """Beside it a jsonl notifier with the same filters: what routing gave that one (the
    contract's event, as delivered), the feed shows, item for item, and nothing else."""
    fake_github.add_release(
        "pytorch/pytorch",
        tag="v2.7.0",
        name="PyTorch 2.7.0",
        body=release_notes("pytorch/v2.7.0.md"),
    )
    config = write_config(
        repos=("pytorch/pytorch",),
        notifiers=feed("f", "f.atom", filters)
        + jsonl("j", "j.jsonl", filters)
        + jsonl("all", "all.jsonl"),
    )
    poll(run_cli, config)
    routed = (
        [json.loads(line) for line in (tmp_path / "j.jsonl").read_text().splitlines()]
        if (tmp_path / "j.jsonl").exists()
        else []
    )
    (everything,) = [json.loads(line) for line in (tmp_path / "all.jsonl").open()]
    entries = parsed(tmp_path / "f.atom").entries if (tmp_path / "f.atom").exists() else []
    assert [entry.id for entry in entries] == [ID_PREFIX + event["id"] for event in routed]
    if not routed:
        return
    (event,), (entry,) = routed, entries
    content = ET.parse(tmp_path / "f.atom").getroot().find(f"{ATOM}entry/{ATOM}content").text
    assert leaf_items(content) == len(event["items"])
    assert f"{len(event['items'])} changes" in entry.summary
    shown = {item["text"] for item in event["items"]}
    for item in everything["items"]:
        first = html.escape(item["text"].split("\n", 1)[0])
        if item["text"] in shown:
            assert first in content
    if filters.startswith("kinds"):
        assert {item["kind"] for item in event["items"]} == {"bc_breaking", "deprecation"}
        assert "<h3>BC-breaking" in content and "<h4>Bug fixes" not in content


# ---- the notifier on its own ----------------------------------------------------------------


def event(
    tag: str, body: str, *, release_id: int = 7, minutes: int = 0, repo: str = "pytorch/pytorch"
):
    release = Release(
        id=release_id,
        tag_name=tag,
        name=tag,
        body=body,
        html_url=f"https://github.com/{repo}/releases/tag/{tag}",
        published_at=NOW,
    )
    items = added(Analyzer(builtin_taxonomy()).items(body))
    when = NOW.replace(minute=minutes)
    return make_event("published", repo, release, f"{release_id:064d}", items, when)


def notifier(tmp_path, **keys) -> FeedNotifier:
    cls, config = notifier_config(
        {"name": "team", "type": "feed", "path": "team.atom", **keys}, "test"
    )
    context = HandlerContext(secrets=Secrets(), base_dir=tmp_path, stdout=io.StringIO())
    made = cls(config, context)
    assert isinstance(made, FeedNotifier)
    return made


def test_the_newest_entries_are_kept_and_a_repeated_delivery_is_listed_once(tmp_path):
    feed_ = notifier(tmp_path, entries=2)
    events = [
        event(f"v1.{n}", f"- Fix number {n} (#{n})", release_id=n, minutes=n) for n in range(3)
    ]
    for sent in events:
        feed_.send(sent, MemoryProgress())
    feed_.send(events[2], MemoryProgress())  # a crash after sending, before it was recorded
    result = parsed(tmp_path / "team.atom")
    assert [e.id for e in result.entries] == [ID_PREFIX + events[2].id, ID_PREFIX + events[1].id]
    assert result.feed.updated == "2026-11-29T12:02:00Z"


def test_notes_text_is_escaped_never_markup(tmp_path):
    hostile = (
        '- Fix <script>alert(1)</script> and <a href="javascript:x">link</a> '
        "& <img src=x onerror=y> \x1b[31m (#1)"
    )
    feed_ = notifier(tmp_path)
    feed_.send(event("v<b>1</b>", hostile), MemoryProgress())
    root = ET.parse(tmp_path / "team.atom").getroot()
    content = root.find(f"{ATOM}entry/{ATOM}content").text
    for markup in ("<script", "<img", '<a href="javascript'):
        assert markup not in content
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in content
    assert "&lt;img src=x onerror=y&gt;" in content and "\\x1b[31m" in content
    assert root.find(f"{ATOM}entry/{ATOM}title").text == "PyTorch v<b>1</b> released"  # text
    parsed(tmp_path / "team.atom")


def test_a_failed_write_leaves_the_old_feed_whole_and_no_temporary_file(tmp_path, monkeypatch):
    feed_ = notifier(tmp_path)
    feed_.send(event("v1", "- Fix one (#1)", release_id=1), MemoryProgress())
    before = (tmp_path / "team.atom").read_bytes()

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)  # the new text is written, not yet durable
    with pytest.raises(HandlerError, match=r"cannot write the feed .*No space left") as caught:
        feed_.send(event("v2", "- Fix two (#2)", release_id=2), MemoryProgress())
    assert caught.value.notifier == "team"
    assert (tmp_path / "team.atom").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["team.atom"]
    monkeypatch.undo()
    feed_.send(event("v2", "- Fix two (#2)", release_id=2), MemoryProgress())  # the retry
    assert len(parsed(tmp_path / "team.atom").entries) == 2


def test_a_file_that_is_not_a_feed_is_set_aside_not_lost(tmp_path, caplog):
    (tmp_path / "team.atom").write_text("<html>someone else's file</html>")
    feed_ = notifier(tmp_path)
    feed_.send(event("v1", "- Fix (#1)"), MemoryProgress())
    assert len(parsed(tmp_path / "team.atom").entries) == 1
    assert (tmp_path / "team.atom.broken").read_text() == "<html>someone else's file</html>"
    assert any("set aside" in r.getMessage() for r in caplog.records)


def test_a_digest_adds_its_events_as_entries(fake_github, write_config, run_cli, tmp_path):
    fake_github.add_release("pytorch/xla", tag="v1", body="- Fix one (#1)")
    fake_github.add_release("pytorch/xla", tag="v2", body="- Fix two (#2)")
    weekly = feed("weekly", "weekly.atom", 'mode = "digest"\ndigest_schedule = "0 9 * * MON"')
    config = write_config(
        "[poll]\nfirst_run_announce = 2\n", repos=("pytorch/xla",), notifiers=weekly
    )
    poll(run_cli, config)
    assert not (tmp_path / "weekly.atom").exists()  # queued for the digest
    assert run_cli("--config", str(config), "digest").code == 0
    titles = [e.title for e in parsed(tmp_path / "weekly.atom").entries]
    assert titles == ["PyTorch/XLA v2 released", "PyTorch/XLA v1 released"]


def test_config_check_lists_the_feed_keys(write_config, run_cli):
    config = write_config(notifiers=feed("team", "team.atom"))
    result = run_cli("--config", str(config), "config", "check")
    assert result.code == 0, result.stderr
    assert '"entries": 50' in result.stdout
    assert "#   feed: " in result.stdout and "entries (how many of the newest" in result.stdout


# ---- served by the daemon -------------------------------------------------------------------


def test_served_at_feeds_name_atom_with_an_etag_and_404_for_the_rest(
    fake_github, write_config, clock, tmp_path
):
    fake_github.add_release("pytorch/xla", tag="v2.0.0", body=release_notes("xla/v2.0.0.md"))
    config = write_config(
        LISTEN,
        repos=("pytorch/xla",),
        notifiers=feed("team", "team.atom") + jsonl("log", "log.jsonl"),
    )
    server = Served(config, clock)
    try:
        empty = server.get("/feeds/team.atom")  # before any event: an empty feed, not a 404
        assert empty.status_code == 200
        assert empty.headers["content-type"] == "application/atom+xml; charset=utf-8"
        assert feedparser.parse(empty.content).entries == []
        server.poll()
        served = server.get("/feeds/team.atom")
        assert served.status_code == 200
        assert served.content == (tmp_path / "team.atom").read_bytes()
        assert len(feedparser.parse(served.content).entries) == 1
        again = server.get("/feeds/team.atom", headers={"if-none-match": served.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        for unknown in (
            "/feeds/nope.atom",
            "/feeds/log.atom",
            "/feeds/team",
            "/feeds/",
            "/feeds/team.atom/x",
        ):
            assert server.get(unknown).status_code == 404, unknown
    finally:
        server.close()


def test_an_edit_lists_what_changed_and_a_deletion_says_so(tmp_path):
    base = event("v1", "- Fix one (#1)\n- Fix two (#2)", release_id=1)
    first, second = base.items
    edited = base.model_copy(
        update={
            "id": "pytorch/pytorch:1:edited:" + "e" * 64,
            "event": "edited",
            "items": [
                first.model_copy(update={"change": "changed", "old_text": "Fix <one> (#1)"}),
                second.model_copy(update={"change": "removed"}),
            ],
        }
    )
    deleted = base.model_copy(
        update={"id": "pytorch/pytorch:1:deleted:" + "d" * 64, "event": "deleted", "items": []}
    )
    feed_ = notifier(tmp_path)
    feed_.send(edited, MemoryProgress())
    feed_.send(deleted, MemoryProgress())
    root = ET.parse(tmp_path / "team.atom").getroot()
    contents = [entry.find(f"{ATOM}content").text for entry in root.findall(f"{ATOM}entry")]
    assert "<h3>Changed (1)</h3>" in contents[1] and "<h3>Removed (1)</h3>" in contents[1]
    assert "was: Fix &lt;one&gt; (#1)" in contents[1]
    titles = [e.title for e in parsed(tmp_path / "team.atom").entries]
    assert titles == ["PyTorch v1 release deleted", "PyTorch v1 release notes edited"]
