"""The wheel works on its own: built, installed apart from the source tree, run elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# A wheel built and installed with pip: slow, and longer than the usual deadline on a loaded
# machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(work / "dist"), str(ROOT)], capture_output=True, text=True,
                           timeout=300)
    if build.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{build.stderr[-2000:]}")
    wheel = next((work / "dist").glob("release_watch-*.whl"))
    target = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, timeout=300)
    return target


def run(target: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # Only the installed copy of release-watch is importable: the source tree is not on the path.
    env = {**os.environ, "PYTHONPATH": str(target), "HOME": str(cwd)}
    env.pop("RELEASE_WATCH_CONFIG", None)
    code = "import sys; from watcher.cli import console_script; sys.argv[0]='release-watch'; " \
           "console_script()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_wheel_ships_the_defaults_and_runs_from_another_directory(installed, tmp_path,
                                                                  fake_github):
    assert (installed / "watcher" / "_defaults" / "default.toml").is_file()
    assert (installed / "watcher" / "_defaults" / "subsystems.toml").is_file()
    assert (installed / "watcher" / "_defaults" / "subsystem_model.json").is_file()
    assert (installed / "watcher" / "_defaults" / "pr_labels.toml").is_file()
    notes = tmp_path / "notes.md"
    notes.write_text("## Distributed\n- Fix FSDP hang (#1)\n")
    help_run = run(installed, tmp_path, "--help")
    assert help_run.returncode == 0 and "poll" in help_run.stdout
    classify = run(installed, tmp_path, "classify", str(notes))
    assert classify.returncode == 0 and "distributed/fsdp" in classify.stdout
    env = {**os.environ, "PYTHONPATH": str(installed)}
    where = subprocess.run([sys.executable, "-c", "import watcher, handlers; "
                            "print(watcher.__file__, handlers.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    assert where.stdout.count(str(installed)) == 2
    check = run(installed, tmp_path, "config", "check")
    assert check.returncode == 0 and "pytorch/xla" in check.stdout
    fake_github.add_release("pytorch/xla", tag="v2.0", body="## FSDP\n- Add auto wrap (#1)\n")
    config = tmp_path / "rw.toml"
    config.write_text(f'[github]\napi_url = "{fake_github.url}"\n[store]\npath = "st"\n'
                      '[[repos]]\nname = "pytorch/xla"\n')
    dry = run(installed, tmp_path, "--config", str(config), "poll", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "PyTorch/XLA v2.0 released" in dry.stdout and "would go to: console" in dry.stdout
    assert not (tmp_path / "st").exists()


def test_wheel_ships_the_bundled_api_atlases(installed, tmp_path):
    bundled = sorted(path.name for path in (installed / "watcher" / "_defaults" / "atlases")
                     .glob("torch-*.json.gz"))
    assert {"torch-2.5.0.json.gz", "torch-2.11.0.json.gz"} <= set(bundled)
    config = tmp_path / "rw.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "store"}"\n')
    found = run(installed, tmp_path, "atlas", "diff", "2.8.0", "2.9.0", "--format", "json",
                "--config", str(config))
    assert found.returncode == 0, found.stderr
    assert '"api": "torch.onnx.dynamo_export"' in found.stdout
    env = {**os.environ, "PYTHONPATH": str(installed)}
    where = subprocess.run([sys.executable, "-c", "from watcher.impact.atlas.source import "
                            "bundled_dir; print(bundled_dir())"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=60)
    assert where.stdout.strip() == str(installed / "watcher" / "_defaults" / "atlases")
