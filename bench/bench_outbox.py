"""``status`` with a long outbox: 10,000 deliveries pending (Slack down for a while) against 10.

``collect`` (what ``release-watch status`` reads, in process) counts the outbox per notifier in
SQL and reads only each notifier's oldest delivery and the failing ones; the note gives, from
the same store, what parsing every pending delivery costs (what ``status`` did before).
Medians of 15 in each of 7 rounds, the two stores taking turns. Target: within 2x of the
10-pending figure.
"""

from __future__ import annotations

import statistics
import tempfile
from functools import partial
from pathlib import Path

from bench_store import NOW, an_event, status_config
from run_all import Row, median_time, print_table, seconds, times, verdict

from watcher.health import collect
from watcher.store.store import Store

SIZES = (10, 10_000)
REPEAT = 7
TARGET = 2.0


def pending_store(path: Path, count: int) -> Store:
    store = Store.open(path)
    with store.transaction():
        for n in range(count):
            store.add_event(an_event(n), ["slack"], NOW)
    failed = store.pending_deliveries()[0]
    store.delivery_failed(failed, "slack: Slack answered HTTP 503", permanent=False)
    return store


def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="bench-outbox-") as name:
        tmp = Path(name)
        stores = {size: pending_store(tmp / f"s{size}", size) for size in SIZES}
        try:
            took: dict[int, list[float]] = {size: [] for size in SIZES}
            parsed: list[float] = []
            for _ in range(REPEAT):
                for size, store in stores.items():
                    config = status_config(tmp / f"s{size}")
                    took[size].append(median_time(partial(collect, config, store), repeat=15))
                parsed.append(median_time(stores[SIZES[-1]].pending_deliveries, repeat=1))
            data = collect(status_config(tmp / "s10000"), stores[SIZES[-1]])
            assert data["pending_deliveries"] == SIZES[-1] and data["failing_deliveries"]
        finally:
            for store in stores.values():
                store.close()
    small, large = (statistics.median(took[size]) for size in SIZES)
    return [Row(f"status with {SIZES[-1]:,} deliveries pending, in process", seconds(large),
                f"{seconds(small)} with {SIZES[0]}",
                f"{times(large / small)}; parsing every pending delivery (as before): "
                f"{seconds(statistics.median(parsed))}; "
                + verdict(large / small <= TARGET, f"<= {TARGET:g}x"))]


if __name__ == "__main__":
    print_table(run())
