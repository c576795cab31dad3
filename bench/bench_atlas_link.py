"""The atlas build of wheels made of star imports, 2k, 8k and 32k modules, against a plain
``ast.parse`` loop over the same files (issue 35: linking must grow linearly in the modules).

Each synthetic wheel is shaped the way torch uses star imports (``torch.nn`` and
``torch.nn.modules``): the package's ``__init__`` star-imports a sub-package whose ``__init__``
star-imports every module; each module star-imports a shared helper module (5 functions),
defines two functions and a class with two methods, half of them with an ``__all__``. The
floor is ``ast.parse`` of every ``.py`` read from the same zip with the cyclic collector off
(as the build runs); the ratio must stay within 2x at every size, so a build that grows
faster than its input shows here.

    python bench/bench_atlas_link.py [2000 8000 32000] [--markdown]

It runs itself again in a child Python whose bytecode cache is private and warmed
(``-X pycache_prefix``; this machine sets ``PYTHONDONTWRITEBYTECODE``), as the other benches do.
``run()`` gives the rows for ``bench/run_all.py``.
"""

from __future__ import annotations

import ast
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from run_all import Row, print_table, seconds, times
from run_all import verdict as target_verdict

from watcher.impact.atlas import build_atlas

SIZES = (2_000, 8_000, 32_000)
REPEAT = 3
TARGET = 2.0

HELPERS = "\n".join(f"def helper_{i}(x, y=None):\n    return x if y is None else y\n"
                    for i in range(5))
# About 9 lines a definition: denser in definitions than torch (21 lines a def/class over
# its 2.7.0 wheel), so what linking adds per name weighs more here than in a real build.
MODULE = """from torch.mods.helpers import *
{listing}
def forward_{i}(input, weight=None, *, bias=True):
    \"\"\"Applies layer {i} to ``input``.\"\"\"
    if weight is None:
        return helper_0(input)
    out = input @ weight
    if bias:
        out = out + 1
    return out

def reset_{i}(module, seed=0):
    \"\"\"Resets the parameters of ``module``.\"\"\"
    for name, value in module.items():
        module[name] = helper_1(value, seed)
    return module

class Layer{i}:
    \"\"\"Layer number {i}.\"\"\"

    def __init__(self, size, dtype=None):
        self.size = size
        self.dtype = dtype
        self.weight = None

    def extra_repr(self):
        return f"size={{self.size}}, dtype={{self.dtype}}"
"""


def write_wheel(folder: Path, modules: int) -> Path:
    path = folder / f"torch-2.0.0-{modules}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("torch/__init__.py", "from torch.mods import *\n")
        archive.writestr("torch/mods/helpers.py", HELPERS)
        archive.writestr("torch/mods/__init__.py", "".join(
            f"from .m{i} import *\n" for i in range(modules)))
        for i in range(modules):
            listing = f'__all__ = ["forward_{i}", "Layer{i}"]\n' if i % 2 else ""
            archive.writestr(f"torch/mods/m{i}.py", MODULE.format(i=i, listing=listing))
        archive.writestr("torch-2.0.0.dist-info/METADATA", "Name: torch\nVersion: 2.0.0\n")
    return path


def parse_all(wheel: Path) -> int:
    """The floor: ``ast.parse`` of every ``.py`` of the wheel read from the zip."""
    with zipfile.ZipFile(wheel) as archive:
        names = [name for name in archive.namelist() if name.endswith(".py")]
        for name in names:
            ast.parse(archive.read(name).decode("utf-8"))
    return len(names)


def measure(modules: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-atlas-link-") as folder:
        wheel = write_wheel(Path(folder), modules)
        names = len(build_atlas(wheel).names)  # warm: the page cache, the code's first run
        found: dict[str, list[float]] = {"build": [], "floor": []}
        gc.disable()  # the floor as the build runs (build_atlas turns the collector off)
        try:
            for _ in range(REPEAT):
                for name, action in (("build", lambda: build_atlas(wheel)),
                                     ("floor", lambda: parse_all(wheel))):
                    start = time.perf_counter()
                    action()
                    found[name].append(time.perf_counter() - start)
        finally:
            gc.enable()
    return {"build": statistics.median(found["build"]),
            "floor": statistics.median(found["floor"]), "names": names}


def run(sizes: tuple[int, ...] = SIZES) -> list[Row]:
    """The rows, measured in a child Python with a private, warmed bytecode cache."""
    figures = _in_child(sizes)
    rows = []
    for modules in sizes:
        found = figures[str(modules)]
        ratio = found["build"] / found["floor"]
        rows.append(Row(f"atlas: build of {modules:,} star-imported modules "
                        f"({int(found['names']):,} names)", seconds(found["build"]),
                        f"ast.parse of the same {modules + 3:,} files: "
                        f"{seconds(found['floor'])}",
                        f"{times(ratio)}; {target_verdict(ratio <= TARGET, '<= 2x')}"))
    return rows


def _in_child(sizes: tuple[int, ...]) -> dict[str, dict[str, float]]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="bench-pycache-") as cache:
        command = [sys.executable, "-X", f"pycache_prefix={cache}", __file__, "--child",
                   *map(str, sizes)]
        subprocess.run([*command[:-len(sizes)], "0"], env=env, check=True,
                       stdout=subprocess.DEVNULL)  # warm the cache
        out = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    found: dict[str, dict[str, float]] = json.loads(out.stdout)
    return found


def _child(sizes: list[int]) -> None:
    print(json.dumps({str(size): measure(size) for size in sizes if size}))


if __name__ == "__main__":
    if "--child" in sys.argv:
        _child([int(arg) for arg in sys.argv[sys.argv.index("--child") + 1:]])
    else:
        wanted = tuple(int(arg) for arg in sys.argv[1:] if arg.isdigit()) or SIZES
        print_table(run(wanted))
