"""The impact analysis over a ~100,000-line codebase, as whole processes and in process.

The codebase is built in a temporary folder from what this checkout holds: copies of the
pytorch/examples fixture (tests/fixtures/codebases/examples) and of the project's own Python
(watcher, handlers, tests, bench, scripts) with its pyproject.toml, as ``copyN/`` folders until
they reach 100,000 lines. Nothing is fetched.

Figures (medians of interleaved whole processes, each with a private, warmed bytecode cache):

- the floor: a ``python -c`` that lists the tree and ``ast.parse``s every Python file;
- the command: ``release-watch impact NOTES --code TREE --format json`` of one release (2.8.0:
  parse, classify, read every BC-breaking and deprecation item's subjects, scan, match), the
  issue's figure; target <= 2x the floor, in wall time and in CPU time (the children's
  user+system seconds: on a loaded machine the steadier of the two);
- a cold impact: ``scan_codebase`` with an empty cache, the matching of a handful of subjects,
  and the cache pickled to a file (as the bot keeps it between polls); target <= 3x the floor;
- a warm impact: the same with the pickled cache of an unchanged tree; target < 10% of cold;
- what every impact process pays before it reads a file (interpreter, pydantic, the models);
- in process: the cold and the warm scan alone, and the matching alone;
- the daemon's re-scan: in process, as a poll does it (``watcher.app.impact_step``: the
  per-file index kept in a real store's diskcache and its last index in memory between polls),
  an unchanged tree after a first scan; target <= 10x walking the tree and ``stat``-ing its
  files (the scan's own walk, its skipped folders included), and < 10% of the first scan;
- TorchFix (``--select TOR102``, one job) on the same tree, once, when it is importable or
  ``TORCHFIX_PATH`` names a folder holding it (``pip install --target DIR torchfix``).

    python bench/bench_impact.py [--markdown]

``run()`` gives the same figures as rows for ``bench/run_all.py``.
"""

from __future__ import annotations

import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from run_all import REPO, Row, print_table, seconds, timed, times
from run_all import verdict as target_verdict

from watcher.app import impact_step
from watcher.config import config_from_dict
from watcher.impact.code import scan_codebase
from watcher.impact.code.scan import walk
from watcher.impact.model import EnvironmentSubject, Subject, Subjects
from watcher.impact.reach.match import find_affects
from watcher.models import ClassifiedItem, Release
from watcher.store import Store

EXAMPLES = REPO / "tests" / "fixtures" / "codebases" / "examples"
NOTES = REPO / "tests" / "fixtures" / "releases" / "pytorch" / "v2.8.0.md"
OWN = ("watcher", "handlers", "tests", "bench", "scripts")
LINES = 100_000
REPEAT = 5
COMMAND_TARGET = 2.0
COLD_TARGET = 3.0
WARM_TARGET = 0.10
RESCAN_TARGET = 10.0

SUBJECTS = Subjects(
    python=(Subject(api="torch.load", condition="omits", option="weights_only"),
            Subject(api="torch.ao.quantization", scope="namespace"),
            Subject(api="torch.optim.lr_scheduler.LRScheduler.print_lr", scope="method",
                    method="print_lr"),
            Subject(api="torch._inductor.config.autotune_fallback_to_aten"),
            Subject(api="capture_pre_autograd_graph"),
            Subject(api="torch.nn.functional.scaled_dot_product_attention", condition="passes",
                    option="scale")),
    environment=(EnvironmentSubject(kind="python", minimum="3.10"),
                 EnvironmentSubject(kind="package", name="pydantic", specifier=">=3")))

PARSE = """\
import ast, os, sys
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as handle:
                ast.parse(handle.read())
"""

# What every impact process pays before it reads a file: the interpreter, pydantic and the
# models (the bot has them loaded already).
IMPORTS = ("from watcher.impact.reach.match import find_affects\n"
           "from watcher.impact.model import Subjects\n"
           "from watcher.impact.code import scan_codebase\n")

IMPACT = f"""\
import pickle, sys
from watcher.impact.reach.match import find_affects
from watcher.impact.model import EnvironmentSubject, Subject, Subjects
from watcher.impact.code import scan_codebase
from watcher.models import ClassifiedItem, Release
root, stored = sys.argv[1], sys.argv[2]
try:
    with open(stored, "rb") as handle:
        cache = pickle.load(handle)
except FileNotFoundError:
    cache = {{}}
index = scan_codebase(root, cache)
affects = find_affects({SUBJECTS!r}, index, "bench")
if index.counts.read:
    with open(stored, "wb") as handle:
        pickle.dump(cache, handle, protocol=pickle.HIGHEST_PROTOCOL)
print(index.counts.read, index.counts.cached, len(affects))
"""


def build_tree(target: Path) -> tuple[int, int]:
    """Copies of the examples and of the project's code until LINES; (files, lines)."""
    sources = [(EXAMPLES, Path("examples"))]
    sources += [(REPO / name, Path(name)) for name in OWN if (REPO / name).is_dir()]
    one = [(path, folder / path.relative_to(source)) for source, folder in sources
           for path in sorted(source.rglob("*.py"))
           if "fixtures" not in path.relative_to(source).parts]
    per_copy = sum(path.read_bytes().count(b"\n") for path, _ in one)
    copies = -(-LINES // per_copy)
    for number in range(copies):
        base = target / f"copy{number}"
        for path, relative in one:
            (base / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, base / relative)
        shutil.copyfile(REPO / "pyproject.toml", base / "pyproject.toml")
    return len(one) * copies, per_copy * copies


def environment(tmp: Path, extra_path: str = "") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"))}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (extra_path, str(REPO),
                                                      env.get("PYTHONPATH", ""))))
    return env


def execute(argv: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600,
                          cwd=REPO)
    if done.returncode not in (0, 1):  # TorchFix exits 1 when it finds something
        raise RuntimeError(f"{argv[:3]} exited {done.returncode}: {done.stderr[-500:]}")
    return done.stdout


def cpu_timed(action: Callable[[], object]) -> float:
    """The user+system CPU seconds of the child processes ``action`` runs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    action()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def whole_processes(tree: Path, tmp: Path) -> dict[str, float]:
    """Medians of interleaved runs: the parse floor, the command (wall and CPU), a cold
    impact, a warm impact."""
    env, stored = environment(tmp), tmp / "cache.pickle"
    parse = [sys.executable, "-c", PARSE, str(tree)]
    impact = [sys.executable, "-c", IMPACT, str(tree), str(stored)]
    imports = [sys.executable, "-c", IMPORTS]
    command = [sys.executable, "-m", "watcher", "impact", str(NOTES), "--code", str(tree),
               "--format", "json"]
    execute(parse, env)
    execute(imports, env)
    execute(command, env)
    execute(impact, env)  # warms the bytecode cache (and leaves a cache: a warm run next)
    samples: dict[str, list[float]] = {"parse": [], "cold": [], "warm": [], "imports": [],
                                       "command": [], "parse_cpu": [], "command_cpu": []}
    for _ in range(REPEAT):
        samples["parse"].append(timed(lambda: execute(parse, env)))
        samples["command"].append(timed(lambda: execute(command, env)))
        samples["parse_cpu"].append(cpu_timed(lambda: execute(parse, env)))
        samples["command_cpu"].append(cpu_timed(lambda: execute(command, env)))
        samples["imports"].append(timed(lambda: execute(imports, env)))
        warm = execute(impact, env)
        samples["warm"].append(timed(lambda: execute(impact, env)))
        if not warm.startswith("0 "):
            raise RuntimeError(f"a warm run read files: {warm}")
        stored.unlink()
        samples["cold"].append(timed(lambda: execute(impact, env)))
    return {name: statistics.median(values) for name, values in samples.items()}


def in_process(tree: Path) -> dict[str, float]:
    """Best of 3: a cold scan, a warm re-scan, and the matching (table built on first use)."""
    best: dict[str, float] = {"cold": float("inf"), "warm": float("inf"),
                              "match": float("inf")}
    for _ in range(3):
        cache: dict[str, str] = {}
        start = time.perf_counter()
        scan_codebase(str(tree), cache)
        middle = time.perf_counter()
        index = scan_codebase(str(tree), cache)
        end = time.perf_counter()
        affects = find_affects(SUBJECTS, index, "bench")
        best["cold"] = min(best["cold"], middle - start)
        best["warm"] = min(best["warm"], end - middle)
        best["match"] = min(best["match"], time.perf_counter() - end)
    best["uses"] = sum(len(record.uses) for record in index.records)
    best["affects"] = len(affects)
    return best


def walk_and_stat(tree: Path) -> float:
    """The re-scan's floor: the scan's own walk of the tree and a ``stat`` of each file it
    keeps (best of 5)."""
    def once() -> None:
        for _, entry in walk(str(tree), []):
            entry.stat(follow_symlinks=False)
    return min(timed(once) for _ in range(5))


def daemon_rescan(tree: Path, tmp: Path) -> tuple[float, float]:
    """A poll's first scan and a later poll's re-scan of the unchanged tree, through the
    bot's own impact step (``watcher.app.impact_step``: the index kept in a real store and in
    memory between polls), one BC-breaking item each poll (best of 3)."""
    item = ClassifiedItem(text="`torch.load` now uses `weights_only=True` by default (#1)",
                          subsystem="python_frontend", kind="bc_breaking")
    first = second = float("inf")
    for round_ in range(3):
        config = config_from_dict({"impact": {"code": [str(tree)]}}, base_dir=tmp,
                                  source="bench")
        store = Store.open(tmp / f"store{round_}")
        try:
            step = impact_step(config, store)
            # A pre-release: no package diff, the scan and the matching alone.
            release = Release(id=1, tag_name="v9.9.9-rc1", prerelease=True)
            start = time.perf_counter()
            step(False)("pytorch/pytorch", release).of(item)
            middle = time.perf_counter()
            step(False)("pytorch/pytorch", release).of(item)
            first = min(first, middle - start)
            second = min(second, time.perf_counter() - middle)
        finally:
            store.close()
    return first, second


def torchfix(tree: Path, tmp: Path) -> float | None:
    extra = os.environ.get("TORCHFIX_PATH", "")
    if not extra and importlib.util.find_spec("torchfix") is None:
        return None
    argv = [sys.executable, "-m", "torchfix", "--select", "TOR102", "--jobs", "1", str(tree)]
    return timed(lambda: execute(argv, environment(tmp, extra)))


def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="bench-impact-") as name:
        tmp = Path(name)
        files, lines = build_tree(tmp / "tree")
        took = whole_processes(tmp / "tree", tmp)
        inside = in_process(tmp / "tree")
        first_poll, later_poll = daemon_rescan(tmp / "tree", tmp)
        floor = walk_and_stat(tmp / "tree")
        fixer = torchfix(tmp / "tree", tmp)
    size = f"{files:,} files, {lines:,} lines"
    cold, warm = took["cold"] / took["parse"], took["warm"] / took["cold"]
    command, rescan = took["command"] / took["parse"], later_poll / first_poll
    command_cpu = took["command_cpu"] / took["parse_cpu"]
    walked = later_poll / floor
    rows = [
        Row("impact: ast.parse of every file (whole process)", seconds(took["parse"]), "-",
            f"floor; {size}"),
        Row(f"impact: `release-watch impact {NOTES.name} --code TREE` (whole process)",
            seconds(took["command"]), f"{seconds(took['parse'])} ast.parse",
            f"{times(command)}; "
            f"{target_verdict(command <= COMMAND_TARGET, f'<= {COMMAND_TARGET:g}x')}"
            "; parse, classify, subjects, scan, match"),
        Row("impact: the same command, CPU time (whole process)", seconds(took["command_cpu"]),
            f"{seconds(took['parse_cpu'])} ast.parse CPU",
            f"{times(command_cpu)}; "
            f"{target_verdict(command_cpu <= COMMAND_TARGET, f'<= {COMMAND_TARGET:g}x')}"),
        Row("impact: the daemon's re-scan of an unchanged tree (store-backed, in process)",
            seconds(later_poll), f"{seconds(floor)} walk + stat",
            f"{times(walked)}; {target_verdict(walked <= RESCAN_TARGET, f'<= {RESCAN_TARGET:g}x')}"
            f"; {rescan:.1%} of the first scan ({seconds(first_poll)})"),
        Row("impact: cold scan + match (whole process)", seconds(took["cold"]),
            f"{seconds(took['parse'])} ast.parse",
            f"{times(cold)}; {target_verdict(cold <= COLD_TARGET, f'<= {COLD_TARGET:g}x')}; "
            f"{len(SUBJECTS.python) + len(SUBJECTS.environment)} subjects, cache pickled"),
        Row("impact: warm re-scan + match, unchanged tree (whole process)",
            seconds(took["warm"]), f"{seconds(took['cold'])} cold",
            f"{warm:.1%}; {target_verdict(warm < WARM_TARGET, f'< {WARM_TARGET:.0%}')}"),
        Row("impact: imports only (whole process)", seconds(took["imports"]),
            f"{seconds(took['cold'])} cold", f"{took['imports'] / took['cold']:.1%}; "
            "interpreter, pydantic and the models: in every impact process"),
        Row("impact: cold scan (in process)", seconds(inside["cold"]), "-",
            f"{int(inside['uses']):,} uses indexed"),
        Row("impact: warm re-scan (in process)", seconds(inside["warm"]),
            f"{seconds(inside['cold'])} cold", f"{inside['warm'] / inside['cold']:.1%}"),
        Row("impact: match the subjects (in process)", seconds(inside["match"]),
            f"{seconds(inside['cold'])} cold scan", f"{int(inside['affects'])} affects"),
    ]
    if fixer is not None:
        rows.append(Row("impact: TorchFix --select TOR102, one job (whole process)",
                        seconds(fixer), f"{seconds(took['command'])} impact command",
                        f"{times(fixer / took['command'])} the impact command"))
    return rows


if __name__ == "__main__":
    print_table(run())
