"""Hostile wheels against a real one (issue 35): no wheel may hurt the process reading it.

Each wheel of ``tests/hostile_wheels.py`` is built the way the bot builds a wheel from the
package index, with the default ``[impact]`` budget (``BoundedBuilder``: a child process with
512 MB of address space, 2 min of CPU, 5 min of wall time), next to the real torch wheel found
in ``$ATLAS_WHEELS``, ``/work/wheels``, ``/tmp/wheels`` or ``/opt/wheels``. Figures: how it
ended (built, with the modules it skipped; or its one-line error), the wall time, and the
child's peak RSS (``wait4``'s), against the issue's bound of 600 MB. Last, a body served at
2 KB/s by the loopback fake index, fetched with the default floor (10 KB/s over 30 s) and
deadlines: the issue wants a drip to end in well under two minutes.

    python bench/bench_wheels.py [--markdown]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from run_all import TESTS, Row, print_table, seconds, verdict

from watcher.impact.atlas import AtlasError, BoundedBuilder, Budget, PackageIndex

FOLDERS = [os.environ.get("ATLAS_WHEELS", ""), "/work/wheels", "/tmp/wheels", "/opt/wheels"]
PEAK = 600 * 1000 * 1000
MB = 1_000_000


def real_wheel() -> Path | None:
    for folder in filter(None, FOLDERS):
        found = sorted(Path(folder).glob("torch-2.15.0-*.whl")) or sorted(
            Path(folder).glob("torch-*.whl"))
        if found:
            return found[-1]
    return None


def build_row(name: str, wheel: Path, budget: Budget, baseline: str) -> Row:
    builder = BoundedBuilder(budget)
    start = time.perf_counter()
    try:
        built = builder.build(wheel, "torch")
        outcome = (f"built, skipped {', '.join(built.atlas.skipped)}" if built.atlas.skipped
                   else "built")
    except AtlasError as error:
        outcome = str(error).removeprefix(f"{wheel.name}: ")
    took = time.perf_counter() - start
    return Row(f"wheel: {name} ({wheel.stat().st_size / MB:,.1f} MB file)",
               f"{seconds(took)}, peak {builder.peak_rss / MB:,.0f} MB", baseline,
               f"{outcome}; {verdict(builder.peak_rss < PEAK, 'peak < 600 MB')}")


def hostile_rows(folder: Path, baseline: str) -> list[Row]:
    import hostile_wheels as hostile

    cases: list[tuple[str, Callable[[Path, str], Path], Budget]] = [
        ("100,000 nested subscripts and a default 900 deep", hostile.deep_nesting, Budget()),
        ("zip bomb, one 3 GB member", hostile.zip_bomb, Budget()),
        ("zip bomb whose directory says 1 KB",
         lambda place, version: hostile.zip_bomb(place, version, lying=True), Budget()),
        ("195 MB module of 2.7 million functions", hostile.huge_module, Budget()),
        ("the same, with no module cap", hostile.huge_module, Budget(max_module=10**10)),
        ("30 modules of 1 MB of functions each",
         lambda place, version: hostile.many_modules(place, version, 30), Budget()),
    ]
    rows = []
    for number, (name, make, budget) in enumerate(cases):
        place = folder / str(number)
        place.mkdir()
        rows.append(build_row(name, make(place, "2.16.0"), budget, baseline))
    return rows


def drip_row(folder: Path) -> Row:
    import hostile_wheels as hostile
    from fakes.pypi import FakePackageIndex

    data = hostile.sound(folder, "2.16.0").read_bytes() + b"\0" * 1_000_000
    with FakePackageIndex() as index:
        index.add("torch", "2.16.0", "torch-2.16.0-py3-none-any.whl", data, drip=(200, 0.1))
        client = PackageIndex(index.url)
        wheel = client.smallest_wheel("torch", "2.16.0")
        start = time.perf_counter()
        try:
            client.download(wheel, folder)
            outcome = "downloaded (not abandoned)"
        except AtlasError as error:
            outcome = str(error)
        took = time.perf_counter() - start
    left = [path.name for path in folder.iterdir() if path.suffix == ".part"]
    return Row("wheel: a 1 MB body served at 2 KB/s, default floor", seconds(took),
               "the issue: well under 2 min",
               f"{outcome}; {len(left)} partial files left; {verdict(took < 60, '< 60 s')}")


def run() -> list[Row]:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    rows = []
    real = real_wheel()
    baseline = "no real wheel found"
    if real is not None:
        row = build_row(f"the real {real.name}", real, Budget(), "")
        rows.append(row)
        baseline = f"real: {row.figure}"
    with tempfile.TemporaryDirectory() as scratch:
        rows += hostile_rows(Path(scratch), baseline)
        (Path(scratch) / "drip").mkdir()
        rows.append(drip_row(Path(scratch) / "drip"))
    return rows


def main() -> int:
    print_table(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
