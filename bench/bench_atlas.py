"""The API atlas: building one from a real torch wheel, loading a bundled one, diffing two.

Figures (in process, medians of interleaved runs, the floor measured in the same run):

- build: ``build_atlas`` of a real wheel (the zip opened, the public modules and the private
  ones they lead into read and parsed, names linked), against the floor the issue sets:
  ``ast.parse`` of every ``.py``/``.pyi`` of the package read from the same zip, a plain loop
  (target: within 2x). The build turns the cyclic collector off while it parses (ast trees
  hold no cycles), which alone makes a plain loop ~3x slower than it need be; so the same loop
  with the collector off is printed too, and the loop over only the files the atlas reads,
  to show what is left on top of parsing;
- load: ``loads`` of a bundled atlas (a few ms: the header alone is decoded), against
  ``gzip.decompress`` of the same file; the first ``resolve`` after it (one module decoded);
  and every name and API decoded, which a query over the whole release pays once;
- diff: ``diff`` of the bundled 2.6.0 and 2.7.0 atlases, in process, against decoding both
  whole (every name and API: what any full diff reads);
- ``atlas diff`` as a user runs it, a whole process (medians of interleaved runs with bytecode
  compiled, ``bench_startup``'s harness), against a whole process that decodes the bytes of
  the two atlases it diffs (gunzip, then every module's JSON; the issue's floor; target within
  3x): of the consecutive 2.6.0 and 2.7.0 and of 2.5.0 and 2.15.0, the first and last bundled
  torch releases; the diff of every pair of bundled releases is bundled too, and read.

The wheels are not fetched: the first torch wheel found in ``$ATLAS_WHEELS``, ``/tmp/wheels``
or ``/opt/wheels`` (``scripts/build_atlases.py --keep`` leaves them in ``/tmp/wheels``); without
one the build rows say so.

    python bench/bench_atlas.py [WHEEL] [--markdown]

``run()`` gives the same figures as rows for ``bench/run_all.py``.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import gzip
import os
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

from bench_startup import environment, median_times, release_watch
from run_all import Row, print_table, seconds, times
from run_all import verdict as target_verdict

from watcher.impact.atlas import build_atlas, bundled_dir, diff, loads

FOLDERS = [os.environ.get("ATLAS_WHEELS", ""), "/tmp/wheels", "/opt/wheels"]
REPEAT = 3
BUILD_TARGET = 2.0
PROCESS_TARGET = 3.0  # atlas diff as a process / decoding both atlases as a process
# The floor of a whole ``atlas diff``: a process decoding both atlases' bytes (gunzip, the
# header, then every module's JSON document).
DECODE = """
import gzip, json, sys
for path in sys.argv[1:]:
    text = gzip.decompress(open(path, "rb").read())
    head, _, body = text.partition(b"\\n")
    offset = 0
    for name, length in json.loads(head)["modules"]:
        json.loads(body[offset:offset + length])
        offset += length
"""


def find_wheel() -> Path | None:
    for folder in filter(None, FOLDERS):
        found = sorted(Path(folder).glob("torch-2.7.0-*.whl")) or sorted(
            Path(folder).glob("torch-*.whl"))
        if found:
            return found[0]
    return None


def parse_all(wheel: Path, members: list[str] | None = None, *, collect: bool = True) -> int:
    """The floor: ``ast.parse`` of the package's ``.py``/``.pyi`` files read from the zip."""
    was = gc.isenabled()
    if not collect:
        gc.disable()
    try:
        with zipfile.ZipFile(wheel) as archive:
            names = members if members is not None else [
                name for name in archive.namelist()
                if name.startswith("torch/") and name.endswith((".py", ".pyi"))]
            for name in names:
                with contextlib.suppress(SyntaxError):
                    ast.parse(archive.read(name).decode("utf-8", "replace"))
        return len(names)
    finally:
        if was:
            gc.enable()


def files_read(wheel: Path) -> list[str]:
    """The members the build reads (its linker asks for a module's facts once)."""
    from watcher.impact.atlas.wheel import Wheel

    read: list[str] = []
    original = Wheel.text

    def spy(self: Wheel, member: str) -> str:
        read.append(member)
        return original(self, member)

    Wheel.text = spy  # type: ignore[method-assign]
    try:
        build_atlas(wheel)
    finally:
        Wheel.text = original  # type: ignore[method-assign]
    return read


def interleaved(actions: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median wall time of each action, run in turns so load falls on all alike."""
    found: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(repeat):
        for name, action in actions.items():
            start = time.perf_counter()
            action()
            found[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in found.items()}


def build_rows(wheel: Path | None) -> list[Row]:
    if wheel is None:
        return [Row("atlas: build from a wheel", "no torch wheel found", "",
                    "run scripts/build_atlases.py --keep 2.7.0, or set ATLAS_WHEELS")]
    members = files_read(wheel)
    every = parse_all(wheel)
    figures = interleaved({
        "build": lambda: build_atlas(wheel),
        "floor": lambda: parse_all(wheel),
        "strict floor": lambda: parse_all(wheel, collect=False),
        "read floor": lambda: parse_all(wheel, members, collect=False),
    }, REPEAT)
    ratio = figures["build"] / figures["floor"]
    return [
        Row(f"atlas: build from {wheel.name} ({wheel.stat().st_size / 1e6:.0f} MB)",
            seconds(figures["build"]),
            f"ast.parse of its {every:,} .py/.pyi: {seconds(figures['floor'])}",
            f"{times(ratio)}; {target_verdict(ratio <= BUILD_TARGET, '<= 2x')}"),
        Row("atlas: build, against the same loop with the collector off",
            seconds(figures["build"]),
            f"ast.parse of its {every:,} .py/.pyi: {seconds(figures['strict floor'])}",
            times(figures["build"] / figures["strict floor"])),
        Row("atlas: build, against only the files it reads", seconds(figures["build"]),
            f"ast.parse of those {len(members):,} (collector off): "
            f"{seconds(figures['read floor'])}",
            times(figures["build"] / figures["read floor"])),
    ]


def load_rows() -> list[Row]:
    path = bundled_dir() / "torch-2.7.0.json.gz"
    data = path.read_bytes()
    figures = interleaved({
        "load": lambda: loads(data),
        "floor": lambda: gzip.decompress(data),
        "resolve": lambda: loads(data).resolve("torch.optim.lr_scheduler.StepLR.print_lr"),
        "everything": lambda: _read_everything(data),
    }, 21)
    before = (bundled_dir() / "torch-2.6.0.json.gz").read_bytes()
    changes = diff(loads(before), loads(data))
    compared = interleaved({
        "diff": lambda: diff(loads(before), loads(data)),
        "decode": lambda: (_read_everything(before), _read_everything(data)),
    }, 5)
    return [
        Row(f"atlas: load bundled {path.name} ({len(data) / 1e3:.0f} KB)",
            seconds(figures["load"]), f"gzip.decompress alone: {seconds(figures['floor'])}",
            times(figures["load"] / figures["floor"])),
        Row("atlas: load + first resolve (a method through a subclass)",
            seconds(figures["resolve"]), "", ""),
        Row("atlas: load + every name and API decoded", seconds(figures["everything"]), "",
            "what a query over the whole release pays once"),
        Row("atlas: diff 2.6.0 -> 2.7.0 (bundled), in process", seconds(compared["diff"]),
            f"both decoded whole: {seconds(compared['decode'])}",
            f"{times(compared['diff'] / compared['decode'])}; {len(changes)} changes"),
    ]


def process_rows() -> list[Row]:
    """``release-watch atlas diff`` as whole processes, against decoding both atlases."""
    pairs = {"consecutive": ("2.6.0", "2.7.0"), "furthest apart": ("2.5.0", "2.15.0")}
    with tempfile.TemporaryDirectory(prefix="bench-atlas-") as name:
        tmp = Path(name)
        env = environment(tmp)
        (tmp / "release-watch.toml").write_text('[store]\npath = "store"\n')
        # Each diff against decoding the two releases it diffs.
        commands = {f"floor {kind}": [sys.executable, "-c", DECODE,
                                      *(str(bundled_dir() / f"torch-{v}.json.gz") for v in pair)]
                    for kind, pair in pairs.items()}
        commands |= {kind: [*release_watch(), "--config", "release-watch.toml", "atlas", "diff",
                            old, new] for kind, (old, new) in pairs.items()}
        took = median_times(commands, env, tmp)
    rows = []
    for kind, (old, new) in pairs.items():
        floor = took[f"floor {kind}"]
        ratio = took[kind] / floor
        rows.append(Row(f"atlas diff {old} {new} as a process ({kind}: its bundled diff read)",
                        seconds(took[kind]),
                        f"{seconds(floor)} decoding {old} and {new} as a process",
                        f"{times(ratio)}; "
                        f"{target_verdict(ratio <= PROCESS_TARGET, f'<= {PROCESS_TARGET:g}x')}"))
    return rows


def _read_everything(data: bytes) -> int:
    atlas = loads(data)
    return len(dict(atlas.names)) + sum(1 for name in atlas.apis if atlas.apis[name].kind)


def run(wheel: Path | None = None) -> list[Row]:
    return [*build_rows(wheel if wheel is not None else find_wheel()), *load_rows(),
            *process_rows()]


if __name__ == "__main__":
    given = [Path(arg) for arg in sys.argv[1:] if not arg.startswith("--")]
    print_table(run(given[0] if given else None))
