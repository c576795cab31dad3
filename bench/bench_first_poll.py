"""Peak memory of a first poll, as a whole process: ``release-watch poll`` of 500 repos whose
newest release carries the real PyTorch v2.7.0 notes (57 KB, 600 items), from an empty store,
with the defaults (the newest release of each repo announced: 500 events parsed, classified,
recorded and written to a jsonl notifier).

The figure is the process's peak resident set (``ru_maxrss``); the baseline is
the same command polling one such repo, i.e. what the interpreter, the libraries, the
classifier and one release cost. Bounded memory means the 500-repo figure stays near it: a
poll holds one repo's releases and items at a time (and a bounded window of fetched listings).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from run_all import TOKEN, Row, fake_github, print_table, release_notes, seconds, verdict

REPOS = 500
TARGET_MB = 200.0


# The poll runs under this small wrapper, whose children's peak is the poll's own: a child
# forked straight from the benchmark would count the benchmark's memory from before its exec.
WRAPPER = ("import resource, subprocess, sys; "
           "code = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL); "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)")


def peak_of(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(peak RSS in MB, wall seconds) of one process run to its end."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", WRAPPER, *argv], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:5])} failed: {done.stderr[-300:]}")
    return int(done.stdout.split()[-1]) / 1024, time.perf_counter() - started  # Linux: KB


def first_poll(api_url: str, count: int, tmp: Path) -> tuple[float, float, int]:
    """(peak MB, seconds, events written) of a first poll of ``count`` repos."""
    folder = tmp / f"first-{count}"
    folder.mkdir()
    repos = "".join(f'[[repos]]\nname = "org/repo-{n}"\n' for n in range(count))
    config = folder / "release-watch.toml"
    config.write_text(f'[github]\napi_url = "{api_url}"\n[store]\npath = "store"\n'
                      f'[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'
                      f'fsync = false\n{repos}')
    env = {"GITHUB_TOKEN": TOKEN, "PATH": "/usr/bin:/bin"}
    peak, took = peak_of([sys.executable, "-m", "watcher", "--config", str(config), "poll"],
                         env, folder)
    with (folder / "events.jsonl").open() as events:
        written = sum(1 for _ in events)
    return peak, took, written


def run() -> list[Row]:
    fake = fake_github()
    try:
        fake.set_token(TOKEN)
        notes = release_notes("pytorch/v2.7.0.md")
        for n in range(REPOS):
            fake.add_release(f"org/repo-{n}", tag="v2.7.0", name="PyTorch 2.7.0", body=notes)
        with tempfile.TemporaryDirectory(prefix="bench-first-poll-") as name:
            tmp = Path(name)
            one, one_took, _ = first_poll(fake.url, 1, tmp)
            peak, took, written = first_poll(fake.url, REPOS, tmp)
    finally:
        fake.stop()
    if written != REPOS:
        raise RuntimeError(f"expected {REPOS} events, the notifier got {written}")
    return [
        Row(f"first poll, {REPOS} repos x 57 KB notes: peak RSS (whole process)",
            f"{peak:.0f} MB", f"{one:.0f} MB for 1 such repo",
            f"+{peak - one:.0f} MB; " + verdict(peak < TARGET_MB, f"< {TARGET_MB:.0f} MB")
            + "; the schema-1 code peaked at 522 MB here"),
        Row(f"first poll, {REPOS} repos x 57 KB notes: wall", seconds(took),
            f"{seconds(one_took)} for 1 repo",
            f"{written} events parsed, classified, recorded and delivered"),
    ]


if __name__ == "__main__":
    print_table(run())
