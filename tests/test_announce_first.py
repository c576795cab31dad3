"""The package step never delays an announcement (issue 35): a release is announced from its
notes and delivered before its wheel is read, even when the wheel drips or is hostile, and so is
an unrelated release of another repo; the wheel is read after the deliveries, within its budget,
and what its package adds is announced in the same run once a sound wheel is served. A dry run
fetches nothing. ``atlas build`` by hand uses the same bounded builder.

Against the loopback fake GitHub and a loopback fake package index; the wheels are the small
torch of ``atlas_support``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import hostile_wheels as hostile
from atlas_support import V1, V2, write_wheel
from conftest import release_notes
from fakes.pypi import FakePackageIndex
from test_package_later import NOTES, TITLE, TRAIN, events, pending

XLA = release_notes("xla/v2.0.0.md")
BUDGET = ('download_min_rate = "10KB"\ndownload_slow_for = "1s"\ndownload_timeout = "5s"\n'
          'index_timeout = "5s"\n')


def _setup(tmp_path: Path, fake_github, write_config, index: FakePackageIndex) -> Path:
    (tmp_path / "trainer").mkdir()
    (tmp_path / "trainer" / "train.py").write_text(TRAIN)
    fake_github.add_release("pytorch/pytorch", tag="v3.1.0", name="PyTorch 3.1.0", body=NOTES)
    fake_github.add_release("pytorch/xla", tag="v2.0.0", body=XLA)
    index.add("torch", "3.0.0", "torch-3.0.0-py3-none-any.whl",
              write_wheel(tmp_path, "3.0.0", V1).read_bytes())
    return write_config(f'[impact]\ncode = ["trainer"]\npackage_index = "{index.url}"\n'
                        + BUDGET)


def test_a_dripping_wheel_never_holds_up_an_announcement(fake_github, write_config, run_cli,
                                                         clock, tmp_path):
    with FakePackageIndex() as index:
        config = str(_setup(tmp_path, fake_github, write_config, index))
        index.add("torch", "3.1.0", "torch-3.1.0-py3-none-any.whl",
                  write_wheel(tmp_path, "3.1.0", V2).read_bytes() + b"\0" * 50_000,
                  drip=(200, 0.1))  # 2 KB/s: under the floor
        announced_when_asked: list[list[str]] = []
        handle = index._handle

        def spying(method: str, path: str, *rest: object):  # type: ignore[no-untyped-def]
            if path.startswith("/pypi/torch/3.1.0"):
                log = tmp_path / "events.jsonl"
                announced_when_asked.append(
                    [event["tag"] for event in events(tmp_path)] if log.exists() else [])
            return handle(method, path, *rest)  # type: ignore[arg-type]

        index._handle = spying  # type: ignore[method-assign]
        started = time.monotonic()
        first = run_cli("--config", config, "poll")
        took = time.monotonic() - started
        assert first.code == 0, first.stderr
        # Both releases were announced (and delivered) before the index was asked at all.
        assert announced_when_asked == [["v3.1.0", "v2.0.0"]]
        assert [event["event"] for event in events(tmp_path)] == ["published", "published"]
        assert pending(tmp_path) == (True, True)
        assert took < 15  # the drip was abandoned at the floor, not waited out
        assert "under the floor of 10 KB/s" in first.stderr
        assert "trying again after" in first.stderr

        clock.sleep(60)
        again = run_cli("--config", config, "poll")  # within the hour: not asked again
        asked = [path for path in index.requests if "3.1.0" in path]
        assert again.code == 0 and len(asked) == 2  # the JSON and the one download

        index.releases[-1].drip = None  # a sound wheel served now
        index.releases[-1].data = write_wheel(tmp_path, "3.1.0", V2).read_bytes()
        clock.sleep(2 * 3600)
        later = run_cli("--config", config, "poll")
        assert later.code == 0, later.stderr
    # The package's diff arrives in this same run, through the pending path.
    found = events(tmp_path)
    assert [event["event"] for event in found] == ["published", "published", "edited"]
    edit = found[2]
    assert edit["tag"] == "v3.1.0"
    verbose = next(item for item in edit["items"] if item["text"].startswith(TITLE))
    assert [(use["line"], use["tier"]) for use in verbose["affects"]] == [(6, "breaks")]
    assert pending(tmp_path) == (False, False)


def test_a_hostile_wheel_is_one_line_and_the_release_stays_announced(
        fake_github, write_config, run_cli, tmp_path):
    with FakePackageIndex() as index:
        config = str(_setup(tmp_path, fake_github, write_config, index))
        index.add("torch", "3.1.0", "torch-3.1.0-py3-none-any.whl",
                  hostile.other_version(tmp_path, "3.1.0", "3.0.0").read_bytes())
        result = run_cli("--config", config, "poll")
    assert result.code == 0, result.stderr
    assert [event["event"] for event in events(tmp_path)] == ["published", "published"]
    said = [line for line in result.stderr.splitlines() if "not read" in line]
    assert len(said) == 1 and "its METADATA says torch 3.0.0, not the 3.1.0 asked for" in said[0]
    assert "Traceback" not in result.stderr


def test_a_dry_run_fetches_nothing(fake_github, write_config, run_cli, tmp_path):
    with FakePackageIndex() as index:
        config = str(_setup(tmp_path, fake_github, write_config, index))
        index.add("torch", "3.1.0", "torch-3.1.0-py3-none-any.whl",
                  write_wheel(tmp_path, "3.1.0", V2).read_bytes())
        result = run_cli("--config", config, "poll", "--dry-run")
        assert result.code == 0, result.stderr
        assert "v3.1.0" in result.stdout
        assert index.requests == []


def test_atlas_build_refuses_a_wheel_of_another_version(tmp_path, run_cli):
    with FakePackageIndex() as index:
        index.add("torch", "2.16.0", "torch-2.16.0-py3-none-any.whl",
                  hostile.other_version(tmp_path, "2.16.0", "2.15.0").read_bytes())
        config = tmp_path / "release-watch.toml"
        config.write_text(f'[store]\npath = "{tmp_path / "store"}"\n'
                          f'[impact]\npackage_index = "{index.url}"\n', encoding="utf-8")
        result = run_cli("atlas", "build", "2.16.0", "--config", str(config))
    assert result.code == 1
    assert result.stderr.strip().splitlines() == [
        "release-watch: torch-2.16.0-py3-none-any.whl: its METADATA says torch 2.15.0, not "
        "the 2.16.0 asked for; not kept"]
    assert not (tmp_path / "store").exists() or json.dumps(
        sorted(p.name for p in (tmp_path / "store").iterdir())).count("atlas") == 0


def test_atlas_build_of_a_wheel_names_the_modules_it_skipped(tmp_path, run_cli):
    wheel = hostile.deep_nesting(tmp_path, "2.16.0")
    config = tmp_path / "release-watch.toml"
    config.write_text(f'[store]\npath = "{tmp_path / "store"}"\n', encoding="utf-8")
    result = run_cli("atlas", "build", str(wheel), "--config", str(config))
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "  2 modules skipped, too deeply nested or too large to read (torch.deep, "
        "torch.default)")


def test_the_budget_is_configured_under_impact_and_checked_as_every_key(tmp_path, run_cli):
    config = tmp_path / "release-watch.toml"
    config.write_text('[impact]\nwheel_max_size = "900MB"\nbuild_memory = "1GiB"\n'
                      'download_slow_for = "45s"\npackage_hosts = ["files.example.com"]\n',
                      encoding="utf-8")
    shown = run_cli("--config", str(config), "config", "check")
    assert shown.code == 0, shown.stderr
    for line in ('"wheel_max_size": "900MB"', '"build_memory": "1GiB"',
                 '"download_slow_for": "45s"', '"module_max_size": "16MB"',
                 '"package_retry": "1h"', '"package_hosts": [\n      "files.example.com"'):
        assert line in shown.stdout
    config.write_text('[impact]\nwheel_max_sise = "900MB"\nbuild_memory = "lots"\n',
                      encoding="utf-8")
    wrong = run_cli("--config", str(config), "config", "check")
    assert wrong.code == 2
    assert "impact.wheel_max_sise: unknown key; did you mean `wheel_max_size`?" in wrong.stderr
    assert "impact.build_memory: 'lots' is not a size" in wrong.stderr
