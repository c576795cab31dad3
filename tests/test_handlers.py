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
    assert lines[2].startswith("  609 changes: torch.compile ")
    assert lines[3].startswith("  BC-breaking (")
    assert text.index("BC-breaking") < text.index("Deprecations") < text.index(
        "  torch.compile (")
    assert "Bug fixes" in text and "  Distributed (" in text  # every item, per subsystem


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
