"""Suppressions, as linters keep theirs: an ignore comment on a line, a baseline file written
by ``--write-baseline``; a suppressed use leaves the tiers and is counted, never dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES

from watcher.impact.analysis.suppress import Suppression, Suppressor, read_baseline
from watcher.impact.code.ignores import line_markers
from watcher.models import Affect, ClassifiedItem

TORCH_LOAD_26 = FIXTURES / "releases" / "pytorch" / "v2.6.0-torch-load.md"
LOADS = """\
import torch


def restore(path):
    return torch.load(path)


def restore_trusted(path):
    return torch.load(path)  # release-watch: ignore[137602]


def restore_any(path):
    # release-watch: ignore[*]
    return torch.load(path)


def restore_other(path):
    return torch.load(path)  # release-watch: ignore[1]
"""


@pytest.fixture
def loads(tmp_path: Path) -> Path:
    root = tmp_path / "svc"
    root.mkdir()
    (root / "ckpt.py").write_text(LOADS)
    return root


def test_line_markers_read_the_comment_on_the_line_and_the_one_above():
    assert line_markers("x = 1\n") == {}
    assert line_markers("a()  # release-watch: ignore[12, torch.load]\n") == {
        1: ("12", "torch.load")}
    # A comment alone on its line covers the next line.
    assert line_markers("# release-watch: ignore[*]\nb()\n") == {2: ("*",)}
    # Written with a leading '#' on the PR number, as notes write them.
    assert line_markers("c()  # release-watch: ignore[#99]\n") == {1: ("99",)}
    # A string that happens to hold the words is no comment.
    assert line_markers('s = "release-watch: ignore[1]"\n') == {}


def test_ignore_comments_keep_a_use_out_of_the_tiers_and_are_counted(run_cli, loads):
    # The flip is ``check`` (the notes' words; the package keeps weights_only=None): a gate on
    # check fails on the calls left.
    result = run_cli("impact", str(TORCH_LOAD_26), "--code", str(loads), "--format", "json",
                     "--fail-on", "check")
    assert result.code == 1
    data = json.loads(result.stdout)
    (item,) = [item for item in data["items"] if item.get("affects")]
    lines = sorted(use["line"] for use in item["affects"])
    # Line 18 names another item's PR: not suppressed by this one's.
    assert lines == [5, 18]
    assert sorted((use["line"], use["suppressed"]) for use in item["suppressed"]) == [
        (9, "inline"), (14, "inline")]
    assert data["summary"]["suppressed"] == {"total": 2, "inline": 2, "baseline": 0,
                                             "store": 0}
    assert data["summary"]["uses"]["check"] == 2

    text = run_cli("impact", str(TORCH_LOAD_26), "--code", str(loads)).stdout
    assert "2 uses suppressed (2 inline), not in the tiers" in text
    assert "ckpt.py:9" not in text and "ckpt.py:5" in text


def test_a_baseline_accepts_what_is_there_and_still_catches_a_new_use(run_cli, loads,
                                                                      tmp_path):
    baseline = tmp_path / "baseline.json"
    written = run_cli("impact", str(TORCH_LOAD_26), "--code", str(loads),
                      "--write-baseline", str(baseline))
    assert written.code == 0
    assert "4 uses written to" in written.stdout  # the suppressed ones are kept too
    entries = read_baseline(str(baseline))
    assert {entry.item for entry in entries} == {"137602"}
    assert all("line" not in entry.model_dump() for entry in entries)

    clean = run_cli("impact", str(TORCH_LOAD_26), "--code", str(loads), "--baseline",
                    str(baseline), "--format", "json", "--fail-on", "check")
    assert clean.code == 0
    summary = json.loads(clean.stdout)["summary"]
    assert summary["uses"]["check"] == 0
    assert summary["suppressed"] == {"total": 4, "inline": 2, "baseline": 2, "store": 0}

    # Code moved down by an edit above it is still the accepted use; a new call is not.
    source = (loads / "ckpt.py").read_text()
    (loads / "ckpt.py").write_text("import os\n" + source +
                                   "\n\ndef fresh(p):\n    return torch.load(p, mmap=True)\n")
    again = run_cli("impact", str(TORCH_LOAD_26), "--code", str(loads), "--baseline",
                    str(baseline), "--fail-on", "check")
    assert again.code == 1
    assert "ckpt.py:23  return torch.load(p, mmap=True)" in again.stdout
    assert "ckpt.py:6 " not in again.stdout


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read it"),
    ("{not json", "not JSON"),
    ('{"uses": []}', "not a release-watch baseline"),
    ('{"version": 1, "uses": [{"api": "torch.load"}]}', "uses.0.codebase: Field required"),
], ids=["missing", "not-json", "no-version", "entry-incomplete"])
def test_a_broken_baseline_is_one_line_and_exit_2(run_cli, loads, tmp_path, content, message):
    baseline = tmp_path / "b.json"
    if content is not None:
        baseline.write_text(content)
    result = run_cli("impact", str(TORCH_LOAD_26), "--code", str(loads), "--baseline",
                     str(baseline))
    assert result.code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_a_mention_is_never_suppressed_and_an_entry_is_stable():
    item = ClassifiedItem(text="x (#5)", section=(), subsystem="jit", kind="deprecation",
                          prs=(5,))
    use = Affect(path="a.py", line=3, code="import torch.jit", api="torch.jit", root="/r",
                 tier="mentions", ignore=("*",))
    call = use.model_copy(update={"tier": "check", "ignore": ()})
    entry = Suppression.of(item, call)
    kept, suppressed = Suppressor.of(store=[entry]).split(item, [use, call])
    assert kept == [use]
    assert [how for _, how in suppressed] == ["store"]
    assert entry.key == Suppression.of(item, call.model_copy(update={"line": 90})).key
