"""The store as history piles up: the cost of adding an event and of sending one (marking its
delivery done) with 100 and with 10,000 events stored, and ``status`` with 1,000 and 10,000.

Adding an event is what a poll does for every change (event row, two deliveries, one digest
queue entry, one transaction). Each figure is the median of 200 single-event transactions,
timed once the store holds the stated number of events; the baseline is the same at 100
stored. ``status`` is timed in process (``collect``, what grows if anything does) and as a
whole ``release-watch status`` process, each the median of several runs.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from run_all import Row, median_time, print_table, seconds, times, verdict

from watcher.config import Config, config_from_dict
from watcher.delivery.events import make_event
from watcher.health import collect
from watcher.models import Event, EventItem, Release
from watcher.store.store import Store

NOW = datetime(2026, 1, 1, tzinfo=UTC)
SAMPLES = 400
ROUND = 20
FLAT = 0.2  # "the same within 20 %"
ITEMS = [EventItem(subsystem="distributed/fsdp", kind="bug_fix", text=f"Fix case {n} (#{n})",
                   section=["Bug fixes", "Distributed"], prs=[n]) for n in range(20)]


def an_event(n: int) -> Event:
    release = Release(id=n, tag_name=f"v{n}", html_url=f"https://github.com/o/r/releases/v{n}")
    return make_event("published", f"org/repo-{n % 50}", release, f"{n:064x}", ITEMS, NOW)


def fill(store: Store, start: int, count: int, *, delivered: bool) -> None:
    """``count`` events, their deliveries sent (history) or left queued (pending)."""
    with store.transaction():
        for n in range(start, start + count):
            store.add_event(an_event(n), ["slack", "log"], NOW, ["weekly"])
        if delivered:
            store.db.execute("DELETE FROM rw_delivery")
            store.db.execute("DELETE FROM rw_digest_queue")


def timed_each(action: Callable[[], object]) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def interleaved(stores: dict[int, Store]) -> dict[int, tuple[float, float]]:
    """Median seconds to add one event and to mark one delivery sent, per store. The stores
    take turns in small rounds, so a busy moment on the machine hits all of them alike."""
    adds: dict[int, list[float]] = {size: [] for size in stores}
    sends: dict[int, list[float]] = {size: [] for size in stores}
    serial = 10**6
    for _ in range(SAMPLES // ROUND):
        for size, store in stores.items():
            for _ in range(ROUND):
                serial += 1
                event = an_event(serial)
                adds[size].append(timed_each(
                    lambda s=store, e=event: s.add_event(e, ["slack", "log"], NOW, ["weekly"])))
            for delivery in store.pending_deliveries()[-ROUND:]:
                sends[size].append(timed_each(lambda s=store, d=delivery: s.delivered(d)))
    return {size: (statistics.median(adds[size]), statistics.median(sends[size]))
            for size in stores}


def event_cost_rows(tmp: Path) -> list[Row]:
    stores = {}
    for stored in (100, 10_000):
        stores[stored] = Store.open(tmp / f"events-{stored}")
        fill(stores[stored], 0, stored, delivered=False)  # all still queued: the worst case
    measured = interleaved(stores)
    for store in stores.values():
        store.close()
    (add_small, send_small), (add_large, send_large) = measured[100], measured[10_000]
    return [
        Row("store: add an event, 10,000 stored", seconds(add_large),
            f"{seconds(add_small)} with 100 stored",
            f"{times(add_large / add_small)}; "
            + verdict(abs(add_large / add_small - 1) <= FLAT, "within 20 %")),
        Row("store: mark a delivery sent, 10,000 queued", seconds(send_large),
            f"{seconds(send_small)} with 100 queued", times(send_large / send_small)),
    ]


def status_config(path: Path) -> Config:
    return config_from_dict({"store": {"path": str(path)}}, base_dir=path.parent,
                            source="bench_store")


def status_rows(tmp: Path) -> list[Row]:
    stores: dict[int, tuple[Store, Config, list[str]]] = {}
    for stored in (1_000, 10_000):
        path = tmp / f"status-{stored}"
        store = Store.open(path)
        fill(store, 0, stored, delivered=True)
        fill(store, stored, 10, delivered=False)  # a few pending, as a daemon would have
        config_file = tmp / f"status-{stored}.toml"
        config_file.write_text(f'[store]\npath = "{path}"\n')
        argv = [sys.executable, "-m", "watcher", "--config", str(config_file), "status"]
        stores[stored] = (store, status_config(path), argv)
    inside: dict[int, list[float]] = {size: [] for size in stores}
    whole: dict[int, list[float]] = {size: [] for size in stores}
    for _ in range(7):  # round-robin, so background load falls on both sizes alike
        for size, (store, config, argv) in stores.items():
            inside[size].append(median_time(lambda s=store, c=config: collect(c, s), repeat=15))
            whole[size].append(timed_each(lambda a=argv: subprocess.run(
                a, check=True, capture_output=True, timeout=60)))
    for store, _, _ in stores.values():
        store.close()
    small, large = (statistics.median(inside[size]) for size in (1_000, 10_000))
    whole_small, whole_large = (statistics.median(whole[size]) for size in (1_000, 10_000))
    return [
        Row("status, 10,000 events stored (in process)", seconds(large),
            f"{seconds(small)} with 1,000",
            f"{times(large / small)}; " + verdict(large / small <= 1 + FLAT,
                                                  "no growth (within 20 %)")),
        Row("status, 10,000 events stored (whole process)", seconds(whole_large),
            f"{seconds(whole_small)} with 1,000", times(whole_large / whole_small)),
    ]


def run() -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="bench-store-") as name:
        tmp = Path(name)
        return event_cost_rows(tmp) + status_rows(tmp)


if __name__ == "__main__":
    print_table(run())

