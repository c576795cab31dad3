"""No wheel can hurt the process that builds its atlas (issue 35): each hostile wheel is built
in a child process within its budget and ends in time, in one line or with the modules it
could not read named in the atlas (``skipped``), the child's peak RSS measured under 600 MB;
the zip directory's sizes are checked before anything is read."""

from __future__ import annotations

import gzip
import time
from collections.abc import Callable
from pathlib import Path

import hostile_wheels as hostile
import pytest
from atlas_support import V1, write_wheel

from watcher.impact.atlas import (
    Atlas,
    AtlasError,
    BoundedBuilder,
    Budget,
    OverBudget,
    WheelUnreadable,
    WrongVersion,
    build_atlas,
    dumps,
    loads,
)

PEAK = 600 * 1000 * 1000  # bytes: what the issue allows the build's process at most
Make = Callable[[Path, str], Path]

BUILT = [
    ("deep nesting", hostile.deep_nesting, Budget(), ("torch.deep", "torch.default")),
    ("zip bomb", hostile.zip_bomb, Budget(), ("torch.bomb",)),
    ("huge module", hostile.huge_module, Budget(), ("torch.huge",)),
    # read whole, the 195 MB module sinks the child into its memory limit: that module only
    ("huge module, no module cap", hostile.huge_module, Budget(max_module=10**10),
     ("torch.huge",)),
]


@pytest.mark.parametrize(("make", "budget", "skipped"), [case[1:] for case in BUILT],
                         ids=[case[0] for case in BUILT])
def test_a_module_too_deep_or_too_large_is_skipped_and_named(
        tmp_path: Path, make: Make, budget: Budget, skipped: tuple[str, ...]) -> None:
    builder = BoundedBuilder(budget)
    started = time.monotonic()
    built = builder.build(make(tmp_path, "2.16.0"), "torch", expect="2.16.0")
    assert time.monotonic() - started < budget.build_seconds
    assert built.atlas.skipped == skipped
    assert built.atlas.resolve("torch.load") is not None  # the rest of the wheel is read
    assert 0 < built.peak_rss < PEAK


FAILED = [
    ("zip bomb whose directory lies", lambda folder, version: hostile.zip_bomb(
        folder, version, lying=True), Budget(), WheelUnreadable, "Bad CRC-32 for file"),
    ("source over the total cap", lambda folder, version: hostile.many_modules(
        folder, version, 8), Budget(max_modules=5 * 10**6), OverBudget,
     "source is 8 MB uncompressed, over the cap of 5 MB \\(impact.modules_max_size\\)"),
    ("a build using up its CPU", lambda folder, version: hostile.many_modules(
        folder, version, 30), Budget(cpu_seconds=1), OverBudget,
     r"the build used up its 1s of CPU \(impact.build_cpu"),
    ("a build past its wall-clock time", hostile.huge_module,
     Budget(max_module=10**10, build_seconds=0.3), OverBudget,
     r"the build took longer than 0.3s \(impact.build_timeout\); stopped"),
    ("another version's METADATA", lambda folder, version: hostile.other_version(
        folder, version, "2.15.0"), Budget(), WrongVersion,
     "its METADATA says torch 2.15.0, not the 2.16.0 asked for; not kept"),
]


@pytest.mark.parametrize(("make", "budget", "error", "message"),
                         [case[1:] for case in FAILED], ids=[case[0] for case in FAILED])
def test_a_hostile_wheel_ends_in_time_in_one_line(
        tmp_path: Path, make: Make, budget: Budget, error: type[AtlasError],
        message: str) -> None:
    wheel = make(tmp_path, "2.16.0")
    builder = BoundedBuilder(budget)
    started = time.monotonic()
    with pytest.raises(error, match=message) as raised:
        builder.build(wheel, "torch", expect="2.16.0")
    assert time.monotonic() - started < min(budget.build_seconds, budget.cpu_seconds) + 5
    said = str(raised.value)
    assert said.startswith(wheel.name) and "\n" not in said and "Traceback" not in said
    assert builder.peak_rss < PEAK
    assert list(tmp_path.iterdir()) == [wheel]  # nothing written beside it


def test_a_sound_wheel_builds_in_the_child_as_in_process(tmp_path: Path) -> None:
    wheel = write_wheel(tmp_path, "2.6.0", V1)
    built = BoundedBuilder().build(wheel, "torch", expect="2.6.0")
    here = build_atlas(wheel)
    assert built.data == dumps(here) and not built.atlas.skipped
    assert dict(built.atlas.names) == dict(here.names)


def test_a_child_that_fails_without_a_word_is_one_line(tmp_path: Path) -> None:
    """However the child ends (here a "python" that is not one), the caller gets one line."""
    wheel = write_wheel(tmp_path, "2.6.0", V1)
    with pytest.raises(WheelUnreadable, match=r"the build failed \(exit 1\)") as raised:
        BoundedBuilder(python="/bin/false").build(wheel, "torch")
    assert "\n" not in str(raised.value)


def test_an_aborted_build_stops_at_once(tmp_path: Path) -> None:
    import threading

    wheel = hostile.many_modules(tmp_path, "2.16.0", 30)
    builder = BoundedBuilder()
    threading.Timer(0.5, builder.abort).start()
    started = time.monotonic()
    with pytest.raises(AtlasError, match="the build was stopped"):
        builder.build(wheel, "torch")
    assert time.monotonic() - started < 5


def test_the_skipped_modules_survive_the_file_and_old_atlases_still_load(
        tmp_path: Path) -> None:
    atlas = build_atlas(hostile.deep_nesting(tmp_path, "2.16.0"))
    assert atlas.skipped == ("torch.deep", "torch.default")
    again = loads(dumps(atlas))
    assert again.skipped == atlas.skipped
    (tmp_path / "whole").mkdir()
    whole = dumps(build_atlas(hostile.sound(tmp_path / "whole", "2.16.0")))
    assert b'"skipped"' not in gzip.decompress(whole).split(b"\n")[0]  # the bytes of old
    assert loads(whole).skipped == ()


def test_the_package_diff_leaves_out_what_a_skipped_module_defined(tmp_path: Path) -> None:
    """What a module the build could not read defines is unknown, not removed: the diff of a
    release whose ``torch.contrib`` was skipped says nothing about ``torch.contrib``."""
    import dataclasses

    from watcher.impact import package_changes
    from watcher.impact.atlas import AtlasSource

    before = build_atlas(write_wheel(tmp_path, "3.0.0", V1))
    after = build_atlas(write_wheel(tmp_path, "3.1.0", {**V1, "torch/contrib.py": ""}))

    def changes(atlas: Atlas) -> set[str]:
        folder = tmp_path / f"bundled-{len(atlas.skipped)}"
        folder.mkdir()
        for each in (before, atlas):
            (folder / f"torch-{each.version}.json.gz").write_bytes(dumps(each))
        source = AtlasSource(store=None, index=None, clock=lambda: None,  # type: ignore
                             bundled=folder)
        found = package_changes(source, "pytorch/pytorch", "v3.1.0")
        assert found is not None
        return {change.api for change in found.changes}

    assert "torch.contrib.helper" in changes(after)
    skipped = dataclasses.replace(after, skipped=("torch.contrib",))
    assert not {api for api in changes(skipped) if api.startswith("torch.contrib")}
