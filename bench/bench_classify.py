"""How long parsing and classifying real release notes takes, model included.

Prints, for each real note (and for the 2.7 and 2.8 notes joined into one ~100 KB body, the size
of the largest PyTorch notes), the time markdown-it takes to tokenize it (the floor: the parser
starts with that), to parse it, to classify its items with headings and again as one flat list
(so every item goes through the rules and the model), items/second, and the ratio of parse +
classify to tokenize, measured in the same run (the target: at most 2x on v2.7.0). The shipped
model's load time is printed first, since the first classification pays it once.

Then the command as a user runs it: ``release-watch classify v2.7.0.md`` as a whole process
against a whole process that runs markdown-it's block pass over the same file (the preset the
parser uses; the floor under any classify of it), medians of interleaved runs with bytecode
compiled (``bench_startup``'s harness); target at most 3x. And how many regular expressions
the command compiles (``re``'s cache misses), of them the notes pipeline's, against the
taxonomy's shipped patterns (compiled on first search: ``prefilter.LazyPattern``).

    python bench/bench_classify.py [NOTES.md ...]   # default: tests/fixtures/releases/**/*.md

``run()`` gives the same figures as rows for ``bench/run_all.py``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

from bench_startup import environment, execute, median_times, release_watch
from markdown_it import MarkdownIt
from run_all import seconds, times
from run_all import verdict as target_verdict

from watcher.models import Item
from watcher.notes.classify import Classifier
from watcher.notes.model import builtin_model
from watcher.notes.parse import parse_notes
from watcher.notes.taxonomy import builtin_taxonomy

ROOT = Path(__file__).resolve().parent.parent
RELEASES = ROOT / "tests" / "fixtures" / "releases"
T = TypeVar("T")
REPEAT = 20


def timed(call: Callable[[], T], repeat: int = 5) -> tuple[T, float]:
    """The result and the best of ``repeat`` wall-clock times, in seconds."""
    best = float("inf")
    result: T
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return result, best


class Measurement(NamedTuple):
    name: str
    kilobytes: float
    items: int
    tokenize: float
    parse: float
    headed: float
    flat: float

    @property
    def rate(self) -> float:
        return self.items / self.flat if self.flat else float("inf")

    @property
    def ratio(self) -> float:
        """Parse + classify (with headings, as a poll does) over markdown-it's tokenize."""
        return (self.parse + self.headed) / self.tokenize


def measure(name: str, body: str, classifier: Classifier) -> Measurement:
    taxonomy = classifier.taxonomy
    tokenizer = MarkdownIt("commonmark", {"html": True})  # the preset the parser uses
    # The ratio's three terms: best of more runs, since other work on the machine adds noise.
    _, tokenize = timed(lambda: tokenizer.parse(body), REPEAT)
    notes, parse = timed(lambda: parse_notes(body, lookup=taxonomy), REPEAT)
    items = notes.items
    flat = [Item(text=item.text) for item in items]
    _, headed = timed(lambda: classifier.classify_all(items), REPEAT)
    _, bare = timed(lambda: classifier.classify_all(flat))
    return Measurement(name, len(body) / 1000, len(items), tokenize, parse, headed, bare)


def measurements(paths: Sequence[Path]) -> tuple[float, list[Measurement]]:
    """The model's load time, then one measurement per note and one for 2.7 + 2.8 joined."""
    start = time.perf_counter()
    builtin_model()
    load = time.perf_counter() - start
    classifier = Classifier(builtin_taxonomy())
    bodies = {str(p.relative_to(RELEASES) if p.is_relative_to(RELEASES) else p):
              p.read_bytes().decode("utf-8") for p in paths}
    found = [measure(name, body, classifier) for name, body in bodies.items()]
    joined = [b for n, b in bodies.items() if n.endswith(("v2.7.0.md", "v2.8.0.md"))]
    if len(joined) == 2:
        found.append(measure("pytorch 2.7 + 2.8 joined", "\n\n".join(joined), classifier))
    return load, found


PROCESS_TARGET = 3.0  # classify FILE as a process / markdown-it's block pass as a process
PROCESS_NOTES = RELEASES / "pytorch" / "v2.7.0.md"
# The floor: markdown-it's block pass over the file, with the preset the parser uses.
BLOCK_PASS = ("import sys\nfrom markdown_it import MarkdownIt\n"
              "MarkdownIt('commonmark', {'html': True}).enable('table').disable('inline')"
              ".parse(open(sys.argv[1], encoding='utf-8').read())")
# The command in process, counting ``re``'s compiles (its cache's misses), and those of them
# the notes pipeline asked for; prints both and the shipped patterns as JSON.
COUNT_COMPILES = """
import json, re._compiler, sys
counts = [0, 0]
compile = re._compiler.compile
def counted(*args, **kwargs):
    caller = sys._getframe(1)
    while caller is not None and "/re/" in caller.f_code.co_filename:
        caller = caller.f_back
    counts[0] += 1
    counts[1] += caller is not None and "/watcher/notes/" in caller.f_code.co_filename
    return compile(*args, **kwargs)
re._compiler.compile = counted
from watcher.cli import main
main(["classify", sys.argv[1]], None)
from watcher.notes.taxonomy import builtin_taxonomy
t = builtin_taxonomy()
shipped = len(t.text_rules) + len(t.kind_rules) + len(t.lead_rules) + len(t.patch_rules)
print(json.dumps({"all": counts[0], "notes": counts[1], "shipped": shipped}), file=sys.stderr)
"""


def process_rows(path: Path = PROCESS_NOTES) -> list[tuple[str, str, str, str]]:
    """``release-watch classify FILE`` as a whole process against markdown-it's block pass
    over FILE as one, and the patterns the command compiles."""
    with tempfile.TemporaryDirectory(prefix="bench-classify-") as name:
        tmp = Path(name)
        env = environment(tmp)
        took = median_times({"floor": [sys.executable, "-c", BLOCK_PASS, str(path)],
                             "classify": [*release_watch(), "classify", str(path)]}, env, tmp)
        counted = execute([sys.executable, "-c", COUNT_COMPILES, str(path)], env, tmp)
        compiles = json.loads(counted.stderr.strip().splitlines()[-1])
    ratio = took["classify"] / took["floor"]
    return [
        (f"classify {path.name} as a process (release-watch classify FILE)",
         seconds(took["classify"]),
         f"{seconds(took['floor'])} markdown-it block pass of it as a process",
         f"{times(ratio)}; {target_verdict(ratio <= PROCESS_TARGET, f'<= {PROCESS_TARGET:g}x')}"),
        (f"classify {path.name}: regular expressions compiled", f"{compiles['all']} in all, "
         f"{compiles['notes']} by the notes pipeline",
         f"{compiles['shipped']} shipped taxonomy patterns",
         "compiled on first search (866 in all before)"),
    ]


def run() -> list[tuple[str, str, str, str]]:
    """Rows for bench/run_all.py: benchmark, figure, baseline, note."""
    load, found = measurements(sorted(RELEASES.glob("*/*.md")))
    rows = [*process_rows(),
            ("classify: model load", f"{load * 1e3:.1f} ms", "", "once per process")]
    for m in found:
        target = ""
        if m.name.endswith("v2.7.0.md"):  # issue 10's yardstick
            target = "target <= 2x: " + ("met" if m.ratio <= 2 else "MISSED")
        rows.append((f"parse + classify {m.name} ({m.kilobytes:.0f} KB, {m.items} items)",
                     f"{(m.parse + m.headed) * 1e3:.0f} ms ({m.ratio:.2f}x tokenize)",
                     f"tokenize {m.tokenize * 1e3:.0f} ms", target))
        rows.append((f"classify {m.name} as one flat list",
                     f"{m.flat * 1e3:.0f} ms, {m.rate:,.0f} items/s", "", ""))
    return rows


def main(argv: Sequence[str]) -> int:
    load, found = measurements([Path(a) for a in argv] or sorted(RELEASES.glob("*/*.md")))
    print(f"model load {load:.3f} s")
    for m in found:
        print(f"{m.name:28} {m.kilobytes:6.1f} KB {m.items:5d} items  tokenize {m.tokenize:6.3f} s"
              f"  parse {m.parse:6.3f} s  classify {m.headed:6.3f} s  parse + classify "
              f"{m.ratio:.2f}x tokenize  flat {m.flat:6.3f} s ({m.rate:,.0f} items/s flat)")
    for benchmark, figure, baseline, note in process_rows():
        print(f"{benchmark}: {figure} ({baseline}); {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
