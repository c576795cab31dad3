"""Every registered notifier honours the handler contract; console and jsonl output."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import release_notes

from handlers.base import (
    HandlerContext,
    MemoryProgress,
    Notifier,
    NotifierConfig,
    available_types,
    notifier_class,
    notifier_config,
)
from watcher.config import Secrets
from watcher.delivery.events import added, make_event
from watcher.delivery.routing import route
from watcher.errors import ConfigError, HandlerError
from watcher.models import Release
from watcher.notes.analyze import Analyzer
from watcher.notes.taxonomy import builtin_taxonomy
from watcher.present.plain import format_event

NOW = datetime(2026, 11, 29, tzinfo=UTC)


def event(body: str = release_notes("pytorch/v2.7.0.md"), *, prerelease: bool = False,
          repo: str = "pytorch/pytorch"):
    release = Release(id=7, tag_name="v2.7.0", name="PyTorch 2.7.0", body=body,
                      prerelease=prerelease,
                      html_url="https://github.com/pytorch/pytorch/releases/tag/v2.7.0",
                      published_at=NOW)
    items = added(Analyzer(builtin_taxonomy()).items(body))
    return make_event("published", repo, release, "f" * 64, items, NOW)


def context(tmp_path: Path) -> HandlerContext:
    return HandlerContext(secrets=Secrets(), base_dir=tmp_path, stdout=io.StringIO())


def test_builtin_types_are_registered():
    assert {"console", "jsonl"} <= set(available_types())


@pytest.mark.parametrize("type_name", available_types())
def test_every_registered_handler_honours_the_contract(type_name, tmp_path):
    cls = notifier_class(type_name)
    assert issubclass(cls, Notifier)
    assert issubclass(cls.Config, NotifierConfig)
    assert cls.Config.model_config.get("extra") == "forbid"
    with pytest.raises(ConfigError, match="unknown key"):
        notifier_config({"name": "n", "type": type_name, "path": "x", "chanel": "#typo"}, "t")
    for name, field in cls.Config.model_fields.items():
        assert field.description or name in {"name", "type"}, f"{type_name}.{name} undocumented"


def test_unknown_type_names_the_installed_ones():
    with pytest.raises(ConfigError, match=r"installed types: .*console"):
        notifier_class("carrier-pigeon")


def test_jsonl_writes_the_contract_shape(tmp_path):
    cls, config = notifier_config({"name": "log", "type": "jsonl", "path": "out/e.jsonl"}, "t")
    notifier = cls(config, context(tmp_path))
    notifier.send(event(), MemoryProgress())
    (line,) = (tmp_path / "out" / "e.jsonl").read_text().splitlines()
    data = json.loads(line)
    assert data["id"] == "pytorch/pytorch:7:published:" + "f" * 64
    assert data["summary"]["items"] == 609 and data["items"][0]["change"] == "added"


def test_jsonl_failure_is_a_handler_error(tmp_path):
    (tmp_path / "file").write_text("")
    cls, config = notifier_config({"name": "log", "type": "jsonl", "path": "file/e.jsonl"}, "t")
    with pytest.raises(HandlerError) as caught:
        cls(config, context(tmp_path)).send(event(), MemoryProgress())
    assert caught.value.notifier == "log"


def test_console_summary_puts_breaking_changes_first():
    text = format_event(event())
    lines = text.split("\n")
    assert lines[0] == "PyTorch 2.7.0 released"
    assert lines[1].strip() == "https://github.com/pytorch/pytorch/releases/tag/v2.7.0"
    assert lines[2].startswith("  609 changes: 23 by kind (BC-breaking 11 · Deprecations 2 · "
                               "Highlights 10), 586 by subsystem (torch.compile 133 · ")
    assert lines[3].startswith("  BC-breaking (")
    assert text.index("BC-breaking") < text.index("Deprecations") < text.index(
        "  torch.compile (")
    assert "Bug fixes" in text and "  Distributed (" in text  # every item, per subsystem


def test_console_counts_add_up_with_the_sections_below_them():
    """Each number of the count line is the number of a section below it, and a subsystem
    says how many of its items were listed under BC-breaking or Highlights instead."""
    import re

    text = format_event(event())
    counts = text.split("\n")[2]
    total = int(re.match(r"  (\d+) changes: ", counts).group(1))
    by_kind = dict(re.findall(r"([A-Z][\w-]+) (\d+)", counts.split(" by kind (")[1].split(")")[0]))
    by_subsystem = counts.split(" by subsystem (")[1].rsplit(")", 1)[0].split(" · ")
    sections = {name: int(n) for name, n in re.findall(r"^  (\S[^(\n]*) \((\d+)", text, re.M)}
    assert {kind: sections[kind] for kind in by_kind} == {k: int(n) for k, n in by_kind.items()}
    for part in by_subsystem:
        name, number = part.rsplit(" ", 1)
        assert sections[name] == int(number), name
    assert sum(sections.values()) == total == 609
    assert "  torch.compile (133 changes; 6 more under Highlights):" in text
    assert "  Distributed (86 changes; 2 more under BC-breaking, Highlights):" in text


def test_console_shows_markdown_pr_links_as_numbers_and_hyperlinks_only_on_a_terminal(
        tmp_path):
    body = ("## Distributed\n- Fix a hang ([#123](https://github.com/pytorch/pytorch/pull/123))"
            " see [the docs](https://pytorch.org/docs/fsdp) and [#7](https://evil.example/x) (#55)"
            "\n")
    plain = format_event(event(body))
    assert "- [FSDP] Fix a hang (#123) see the docs (https://pytorch.org/docs/fsdp) and " \
           "#7 (https://evil.example/x) (#55)" in plain
    assert "\x1b" not in plain and "](" not in plain
    code = format_event(event("# Backwards Incompatible Changes\n### Call hooks (#9)\nNow:\n"
                              "```python\nout = hooks[name](x)\n```\n"))
    assert "out = hooks[name](x)" in code  # code, not a link

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stdout, hyperlinks in ((Terminal(), True), (io.StringIO(), False)):
        cls, config = notifier_config({"name": "screen", "type": "console"}, "t")
        cls(config, HandlerContext(secrets=Secrets(), base_dir=tmp_path, stdout=stdout)).send(
            event(body), MemoryProgress())
        shown = stdout.getvalue()
        pr = "\x1b]8;;https://github.com/pytorch/pytorch/pull/123\x1b\\#123\x1b]8;;\x1b\\"
        assert (pr in shown) is hyperlinks and ("Fix a hang (#123)" in shown) is not hyperlinks
        # a label that is not the PR it leads to shows where it goes, on a terminal too
        assert "#7 (" in shown and "evil.example/x" in shown


def test_console_short_form_is_the_headline_counts_breaking_and_a_link(tmp_path):
    cls, config = notifier_config({"name": "screen", "type": "console", "short": True}, "t")
    stdout = io.StringIO()
    cls(config, HandlerContext(secrets=Secrets(), base_dir=tmp_path, stdout=stdout)).send(
        event(), MemoryProgress())
    lines = stdout.getvalue().rstrip("\n").split("\n")
    assert lines[0] == "PyTorch 2.7.0 released"
    assert lines[1].startswith("  609 changes: 23 by kind (") and "19 more subsystems 223" \
        in lines[1]
    assert lines[2] == "  BC-breaking (11):" and lines[14] == "  Deprecations (2):"
    assert all(line.startswith("    - ") for line in lines[3:14] + lines[15:17])
    assert lines[17:] == [
        "  596 more changes: https://github.com/pytorch/pytorch/releases/tag/v2.7.0"]


@pytest.mark.slow
@pytest.mark.parametrize(("filters", "expect"), [
    ({}, 609),
    ({"repos": ["pytorch/xla"]}, None),
    ({"subsystems": ["distributed"]}, "distributed"),
    ({"subsystems": ["distributed/fsdp"]}, "distributed/fsdp"),
    ({"kinds": ["bc_breaking", "deprecation"]}, "kinds"),
    ({"events": ["edited"]}, None),
    ({"subsystems": ["spmd"]}, None),
], ids=["all", "other-repo", "distributed", "fsdp", "breaking", "other-event", "no-items"])
def test_routing_filters(filters, expect):
    config = NotifierConfig(name="n", type="console", **filters)
    view = route(event(), config)
    if expect is None:
        assert view is None
    elif expect == 609:
        assert view is not None and len(view.items) == 609
    elif expect == "kinds":
        assert view is not None and {i.kind for i in view.items} == {"bc_breaking", "deprecation"}
        assert view.summary.items == len(view.items)
    else:
        assert view is not None and view.items
        assert all(i.subsystem == expect or i.subsystem.startswith(expect + "/")
                   for i in view.items)


def test_prerelease_filter():
    config = NotifierConfig(name="n", type="console", prereleases=False)
    assert route(event(prerelease=True), config) is None
    assert route(event(prerelease=False), config) is not None
