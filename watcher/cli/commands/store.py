"""``release-watch store check`` and ``store reinit``: look after the store itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher.errors import StoreDamaged, StoreError
from watcher.present import plural
from watcher.store import (
    FileLock,
    Shape,
    Store,
    inspect,
    refuse_lost,
    set_aside,
    writer_lock,
)

if TYPE_CHECKING:
    from watcher.config import Config
    from watcher.deps import Dependencies

SHOWN = 20  # problems listed; SQLite can report thousands for one bad page
# What store.totals() counts, as one of each reads.
_ONE = {"repos": "repo", "releases": "release", "events": "event",
        "pending deliveries": "pending delivery", "diskcache keys": "diskcache key",
        "stored keys": "stored key"}


def run_store_check(config: Config, deps: Dependencies) -> int:
    """SQLite's integrity check over the whole database; 0 when sound, 1 when not."""
    if config.store_url() is not None:
        return _check_shared(str(config.store_url()), deps)
    path = config.store_path()
    out = deps.stdout
    found = inspect(path)
    if found.shape is Shape.ABSENT:
        out.write(f"{path}: no store yet (nothing has been polled); nothing to check\n")
        return 0
    if found.shape is Shape.LOST:
        raise refuse_lost(path, found)
    try:
        store = Store.open(path, read_only=True)
    except StoreDamaged as damaged:
        problems = Store.file_integrity(path)  # damage the store's own reads trip over
        if not problems:
            raise damaged from None
        totals: dict[str, int] = {}
    else:
        try:
            problems = store.integrity()
            totals = store.totals() if not problems else {}
        finally:
            store.close()
    if problems:
        # SQLite's findings, and diskcache's value files that its rows name but are not there.
        how_many = plural(len(problems), "problem")
        out.write(f"{path}: DAMAGED: the integrity check found {how_many}:\n"
                  + "".join(f"  {line}\n" for line in problems[:SHOWN]))
        out.write("fix: restore the store (cache.db, and the value files it names) from a "
                  "backup, or start over with `release-watch store reinit`\n")
        return 1
    listed = ", ".join(f"{count:,} {name if count != 1 else _ONE.get(name, name)}"
                       for name, count in totals.items())
    out.write(f"{path}: ok (integrity check passed; {listed})\n")
    return 0


def _check_shared(url: str, deps: Dependencies) -> int:
    """A PostgreSQL store: every table there (the server checks its own pages), and counts."""
    store = Store.connect(url, read_only=True)
    try:
        problems, where = store.integrity(), store.db.where
        totals = store.totals() if not problems else {}
    finally:
        store.close()
    if problems:
        deps.stdout.write(f"{where}: DAMAGED: " + "; ".join(problems) + "; restore the "
                          "database from a backup\n")
        return 1
    listed = ", ".join(f"{count:,} {name if count != 1 else _ONE.get(name, name)}"
                       for name, count in totals.items())
    deps.stdout.write(f"{where}: ok (every table there; {listed})\n")
    return 0


def _sound(config: Config) -> bool:
    try:
        store = Store.open(config.store_path(), read_only=True)
    except StoreDamaged:
        return False
    try:
        return not store.integrity()
    except StoreDamaged:
        return False
    finally:
        store.close()


def run_store_reinit(config: Config, deps: Dependencies, *, force: bool) -> int:
    """Start over: the old database is set aside (renamed, not deleted) and a new, empty
    store takes its place. Refused for a sound store unless ``force``, and while a daemon runs."""
    if config.store_url() is not None:
        raise StoreError("store reinit starts an embedded store (store.path) over; a store on "
                         "PostgreSQL starts over in a new database: stop every replica, then "
                         "point [store] url at it")
    path = config.store_path()
    found = inspect(path)
    if found.shape is Shape.READY and not force and _sound(config):
        raise StoreError(f"the store {path} is sound; `release-watch store reinit --force` "
                         "starts over anyway (the next poll then takes every release as its "
                         "baseline, announcing only the newest of each repo)")
    daemon = FileLock(path / "daemon.lock")
    if path.is_dir() and not daemon.try_acquire():
        raise StoreError(f"a release-watch daemon (pid {daemon.holder()}) is running on {path}; "
                         "stop it first")
    try:
        with writer_lock(path, wait=config.poll.lock_wait, sleep=deps.sleep,
                         doing="`release-watch store reinit`"):
            moved = set_aside(path) if path.is_dir() else []
            Store.open(path, fresh=True).close()
    finally:
        daemon.release()
    where = ", ".join(str(p) for p in moved) or "nothing to set aside"
    deps.stdout.write(f"{path}: started over with an empty store (old database: {where}); the "
                      "next poll records what GitHub lists as the baseline and announces the "
                      "newest release of each repo (poll.first_run_announce)\n")
    return 0
