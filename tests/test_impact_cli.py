"""``release-watch impact``: offline, the items of a notes file that touch a codebase, each use
as ``path:line`` and its line of code; exit 1 when a BC-breaking or deprecation item touches it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES
from test_impact_bot import CKPT, NOTES, REMOVAL, WHY

EXAMPLES = FIXTURES / "codebases" / "examples"
TORCH_LOAD_26 = FIXTURES / "releases" / "pytorch" / "v2.6.0-torch-load.md"


@pytest.fixture
def trainer(tmp_path: Path) -> Path:
    root = tmp_path / "trainer"
    (root / "train").mkdir(parents=True)
    (root / "train" / "ckpt.py").write_text(CKPT)
    (root / "train" / "broken.py").write_text("def oops(:\n")
    (root / ".venv" / "lib").mkdir(parents=True)  # a virtual environment is never read
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / ".venv" / "lib" / "torch_user.py").write_text(
        "from torch.utils.cpp_extension import include_paths\ninclude_paths(cuda=True)\n")
    return root


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.md"
    path.write_text(NOTES)
    return path


def test_text_lists_each_touching_item_with_every_use(run_cli, trainer, notes):
    result = run_cli("impact", str(notes), "--code", str(trainer))
    assert result.code == 1  # a use breaks
    # The release is read from the first heading ("# PyTorch 2.6.0 Release Notes").
    assert result.stdout.splitlines()[:7] == [
        "Breaks (1 use in 1 file)",
        "",
        f"BC-breaking [cpp_frontend] {REMOVAL}",
        "  changes: torch.utils.cpp_extension.include_paths",
        "  train/ckpt.py:6  return include_paths(cuda=True)",
        f"      {WHY}",
        ""]
    text = result.stdout
    assert text.index("Check (1 use in 1 file)") < text.index("train/ckpt.py:14")
    # The import only mentions the deprecated namespace: counted, not listed.
    assert "train/ckpt.py:2" not in text
    assert "1 mention in 1 file (imports, annotations" in text
    assert ".venv" not in text
    assert ("2 BC-breaking or deprecation items touch the code (2 uses in 1 file: 1 break, "
            "1 to check)") in text


def test_all_lists_the_mentions_too(run_cli, trainer, notes):
    result = run_cli("impact", str(notes), "--code", str(trainer), "--all")
    assert "Mentions (1 use in 1 file)" in result.stdout
    assert "train/ckpt.py:2  from torch.ao.quantization import quantize_dynamic" in result.stdout
    assert "1 does not parse and was skipped: train/broken.py" in result.stdout


def test_json_carries_apis_and_affects_per_item(run_cli, trainer, notes):
    result = run_cli("impact", str(notes), "--code", str(trainer), "--format", "json")
    assert result.code == 1
    data = json.loads(result.stdout)
    items = {item["text"].split("\n", 1)[0]: item for item in data["items"]}
    flip = items[REMOVAL]
    api = "torch.utils.cpp_extension.include_paths"
    assert flip["kind"] == "bc_breaking" and flip["apis"] == [api]
    assert flip["affects"] == [{"path": "train/ckpt.py", "line": 6,
                                "code": "return include_paths(cuda=True)", "api": api,
                                "root": str(trainer), "codebase": "trainer", "tier": "breaks",
                                "why": WHY, "source": "package", "release": "v2.6.0"}]
    assert flip["release"] == "v2.6.0"
    assert {"subsystem", "kind", "text", "section", "prs", "decided_by",
            "confidence"} <= set(flip)
    assert "apis" not in items["Add a new `ProcessGroup` option for NCCL (#140001)"]
    assert data["scanned"] == [{"root": str(trainer), "codebase": "trainer", "files": 1,
                                "unparsable": [
        {"path": "train/broken.py", "error": data["scanned"][0]["unparsable"][0]["error"]}]}]


def test_code_that_uses_nothing_changed_exits_zero(run_cli, tmp_path, notes):
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "model.py").write_text(textwrap.dedent("""\
        from torch.utils.cpp_extension import include_paths

        def headers():
            return include_paths(device_type="cpu")
        """))
    result = run_cli("impact", str(notes), "--code", str(clean))
    assert result.code == 0, result.stdout
    assert "0 BC-breaking or deprecation items touch the code" in result.stdout


def test_several_codebases_name_their_root(run_cli, trainer, tmp_path, notes):
    other = tmp_path / "other"
    other.mkdir()
    (other / "eval.py").write_text("import torch.utils.cpp_extension as ext\n"
                                   "paths = ext.include_paths(cuda=True)\n")
    result = run_cli("impact", str(notes), "--code", str(trainer), "--code", str(other),
                     "--format", "json")
    data = json.loads(result.stdout)
    flip = next(i for i in data["items"]
                if i.get("apis") == ["torch.utils.cpp_extension.include_paths"])
    assert sorted((a["root"], a["path"], a["line"]) for a in flip["affects"]) == sorted([
        (str(trainer), "train/ckpt.py", 6), (str(other), "eval.py", 2)])


def test_a_missing_codebase_is_one_line_and_exit_two(run_cli, tmp_path, notes):
    result = run_cli("impact", str(notes), "--code", str(tmp_path / "nope"))
    assert result.code == 2
    assert result.stderr.strip() == f"release-watch: --code {tmp_path / 'nope'}: no such directory"


@pytest.mark.skipif(not EXAMPLES.is_dir() or not TORCH_LOAD_26.is_file(),
                    reason="the examples codebase and the 2.6 torch.load item are fixtures")
def test_pytorch_examples_torch_load_flip_touches_the_17_torchfix_calls(run_cli):
    """TorchFix's TOR102 (torch.load without weights_only) flags 17 calls in pytorch/examples;
    the 2.6 item that flipped the default must touch exactly those, and nothing else. Each is
    ``check``: torch.load's signature keeps ``weights_only=None`` in both packages (the flip
    happens inside), so only the notes' words say the default changed."""
    result = run_cli("impact", str(TORCH_LOAD_26), "--code", str(EXAMPLES), "--format", "json")
    data = json.loads(result.stdout)
    (flip,) = [item for item in data["items"] if item.get("affects")]
    assert flip["apis"] == ["torch.load"]
    assert len(flip["affects"]) == 17
    assert all("torch.load(" in use["code"] and "weights_only" not in use["code"]
               and use["tier"] == "check" for use in flip["affects"])
    assert flip["affects"][0]["why"].endswith(
        "(the notes' words; the 2.6.0 package shows the same default of weights_only, None)")
    assert result.code == 0
    gate = run_cli("impact", str(TORCH_LOAD_26), "--code", str(EXAMPLES), "--fail-on", "check")
    assert gate.code == 1


QUANT_25 = textwrap.dedent("""\
    # PyTorch 2.5.0 Release Notes
    # Deprecations
    ## Quantization
    - `torch.ao.quantization` is deprecated and will be removed in 2.10 (#153892)
    """)
# A release no package of which can be read here (none bundled, the index out of reach): the
# notes' stated removal stands.
QUANT_216 = textwrap.dedent("""\
    # PyTorch 2.16.0 Release Notes
    # Backwards Incompatible Changes
    ## Quantization
    - Removed `torch.ao.quantization` (#160000)
    """)


def test_fail_on_check_fails_on_a_deprecation_alone(run_cli, trainer, tmp_path):
    notes = tmp_path / "v2.5.0.md"
    notes.write_text(QUANT_25)
    assert run_cli("impact", str(notes), "--code", str(trainer)).code == 0  # only check
    result = run_cli("impact", str(notes), "--code", str(trainer), "--fail-on", "check")
    assert result.code == 1
    assert "deprecated in v2.5.0" in result.stdout  # the release from the file name


def test_several_notes_files_list_every_use_under_each_change_and_its_release(
        run_cli, trainer, tmp_path):
    """2.5 deprecates the namespace and 2.10 removes it: the call is listed under both
    changes, each with its own release and tier; the same change repeated by a later
    release's notes (a patch release) is listed once, under the first."""
    old, new, patch = tmp_path / "old.md", tmp_path / "new.md", tmp_path / "v2.16.1.md"
    old.write_text(QUANT_25)
    new.write_text(QUANT_216)
    patch.write_text(QUANT_216.replace("2.16.0", "2.16.1"))
    result = run_cli("impact", str(old), str(new), str(patch), "--code", str(trainer),
                     "--format", "json")
    assert result.code == 1
    data = json.loads(result.stdout)
    uses = [(use["line"], use["tier"], use["release"]) for item in data["items"]
            for use in item.get("affects", [])]
    assert sorted(uses) == [(2, "breaks", "v2.16.0"), (14, "breaks", "v2.16.0"),
                            (14, "check", "v2.5.0")]
    assert data["summary"]["releases"] == {
        "v2.5.0": {"breaks": 0, "check": 1, "mentions": 1},
        "v2.16.0": {"breaks": 2, "check": 0, "mentions": 0},
        "v2.16.1": {"breaks": 0, "check": 0, "mentions": 0}}


def test_release_names_a_single_file_and_only_one(run_cli, trainer, notes, tmp_path):
    result = run_cli("impact", str(notes), "--code", str(trainer), "--release", "v2.6.1",
                     "--format", "json")
    assert {item.get("release") for item in json.loads(result.stdout)["items"]} == {"v2.6.1"}
    result = run_cli("impact", str(notes), str(notes), "--code", str(trainer),
                     "--release", "v2.6.1")
    assert result.code == 2 and "--release names the release of a single" in result.stderr


def test_range_reads_the_releases_the_store_knows(run_cli, trainer, fake_github, write_config):
    for number, (tag, body) in enumerate((("v2.5.0", QUANT_25), ("v2.6.0", NOTES),
                                          ("v2.16.0", QUANT_216), ("v2.17.0", QUANT_216))):
        fake_github.add_release("pytorch/pytorch", tag=tag, name=tag, body=body,
                                release_id=100 + number)
    config = write_config(repos=("pytorch/pytorch",))
    assert run_cli("--config", str(config), "poll").code == 0
    result = run_cli("--config", str(config), "impact", "--range", "v2.5.0..v2.16.0",
                     "--code", str(trainer), "--format", "json")
    assert result.code == 1, result.stderr
    data = json.loads(result.stdout)
    assert {item.get("release") for item in data["items"]} == {"v2.5.0", "v2.6.0", "v2.16.0"}
    uses = sorted((use["line"], use["release"]) for item in data["items"]
                  for use in item.get("affects", []))
    # FROM and TO both included: 2.5's deprecation of the call is listed beside 2.16's removal.
    assert uses == [(2, "v2.16.0"), (6, "v2.6.0"), (14, "v2.16.0"), (14, "v2.5.0")]
    empty = run_cli("--config", str(config), "impact", "--range", "v3.0..v3.1", "--code",
                    str(trainer))
    assert empty.code == 2 and "the store knows no release in it" in empty.stderr


@pytest.mark.slow
def test_the_console_script_ends_an_impact_process_with_its_code_and_whole_output(
        run_cli, trainer, notes, tmp_path):
    """The console script's process ends without the interpreter's teardown once the report
    is written (``Teardown.end``): the exit code, every byte of the report and the log lines
    are still there, as in process."""
    args = ["impact", str(notes), "--code", str(trainer), "--format", "json"]
    # Buffered, as a pipe's standard output is by default: what is not flushed is lost.
    env = {key: value for key, value in os.environ.items()
           if key not in ("RELEASE_WATCH_CONFIG", "PYTHONUNBUFFERED")}
    code = "import sys; from watcher.cli import console_script; sys.argv[0]='release-watch'; " \
           "console_script()"
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path,
                          env={**env, "HOME": str(tmp_path)}, capture_output=True, text=True,
                          timeout=120)
    expected = run_cli(*args)
    assert (done.returncode, expected.code) == (1, 1)
    assert done.stdout == expected.stdout and json.loads(done.stdout)["items"]
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "model.py").write_text("import torch\ntorch.load('x', weights_only=True)\n")
    passing = subprocess.run([sys.executable, "-c", code, "impact", str(notes), "--code",
                              str(clean)], cwd=tmp_path, env={**env, "HOME": str(tmp_path)},
                             capture_output=True, text=True, timeout=120)
    assert passing.returncode == 0
    assert passing.stdout == run_cli("impact", str(notes), "--code", str(clean)).stdout
