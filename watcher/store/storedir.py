"""What is at ``store.path`` before anything opens it: nothing yet, a store, a store that has
lost its database, or something that cannot be a store at all.

A store whose ``cache.db`` is missing or empty while the rest of it is there (lock files, the
WAL, the marker, diskcache's value folders) must not quietly become a new, empty store: the
next poll would take every release as a baseline and never announce the one that came while
the database was gone. It is refused until restored, or started over on purpose
(``release-watch store reinit``). So is a ``cache.db`` that SQLite reads but that holds none of
the store's tables (an empty SQLite file put in its place, or its ledger tables dropped).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path

from watcher.errors import StoreError, StorePathError, StoreReadOnly
from watcher.store.db import DB_NAME, Database
from watcher.store.schema import is_bare, prepare, stored_version

MARKER = "release-watch-store"  # written beside cache.db once a store exists
MARKER_TEXT = ("This directory is a release-watch store; cache.db holds what it has seen.\n"
               "If cache.db is lost, restore it from a backup, or run "
               "`release-watch store reinit` to start over.\n")
WAL_FILES = (f"{DB_NAME}-wal", f"{DB_NAME}-shm")
TRACES = (MARKER, "daemon.lock", "writer.lock", *WAL_FILES)
_VALUE_FOLDER = re.compile(r"[0-9a-f]{2}")  # diskcache keeps big values in 00/…ff/


class Shape(Enum):
    ABSENT = "absent"        # nothing there yet (or an empty directory): a new store
    READY = "ready"          # cache.db holds something
    LOST = "lost"            # cache.db missing, empty or bare, the rest of a store still there


_STATES = {"missing": "is missing", "empty": "is empty",
           "bare": "holds none of the store's tables"}


@dataclass(frozen=True)
class Inspection:
    shape: Shape
    traces: tuple[str, ...] = ()
    database: str = "missing"  # or "empty", "bare" (no table of a store), "present"


def inspect(path: Path) -> Inspection:
    if path.exists() and not path.is_dir():
        raise StorePathError(f"store.path {path} is a file, not a directory; point store.path "
                             "at a directory (it is created if missing)")
    if not path.exists():
        return Inspection(Shape.ABSENT)
    database = path / DB_NAME
    try:
        size = database.stat().st_size if database.exists() else None
        names = os.listdir(path)
    except OSError as error:
        raise StoreError(f"cannot read the store directory {path}: {error.strerror}; check "
                         "that this user may read it") from None
    if size and not _bare(database):
        return Inspection(Shape.READY, database="present")
    state = "missing" if size is None else "bare" if size else "empty"
    # A store being made right now has no table yet either, and only its WAL beside it: the
    # marker and the locks come once its tables are committed.
    kept = TRACES if state != "bare" else tuple(n for n in TRACES if n not in WAL_FILES)
    traces = tuple(sorted(name for name in names
                          if name in kept or (_VALUE_FOLDER.fullmatch(name)
                                              and (path / name).is_dir())))
    return Inspection(Shape.LOST if traces else Shape.ABSENT, traces, state)


def _bare(database: Path) -> bool:
    """Whether SQLite reads ``database`` as holding no store (``schema.is_bare``). A file it
    cannot read is not bare: opening it as the store says what is wrong with it."""
    try:
        db = Database.connect(database, read_only=True)
    except StoreError:
        return False
    try:
        return is_bare(db, database.parent)
    except StoreError:
        return False
    finally:
        db.close()


def refuse_lost(path: Path, found: Inspection) -> StoreError:
    return StoreError(
        f"the store {path} has lost its database ({DB_NAME} {_STATES[found.database]}; "
        f"{', '.join(found.traces)} still there); refusing to start over, which would take "
        "the next release as a new baseline and never announce it: restore "
        f"{DB_NAME} from a backup, or run `release-watch store reinit` to start over")


def check_usable(path: Path) -> Inspection:
    """The inspection, unless the store is one that must not be opened as it is."""
    found = inspect(path)
    if found.shape is Shape.LOST:
        raise refuse_lost(path, found)
    return found


def write_marker(path: Path) -> None:
    marker = path / MARKER
    if not marker.exists():
        marker.write_text(MARKER_TEXT)


def set_aside(path: Path, now: datetime | None = None) -> list[Path]:
    """Moves the database and its WAL out of the way (never deletes them: they may be worth
    a look), so the store starts over; returns where they went. diskcache's value files stay
    where they are: the database set aside names them (renamed back, it is whole again), and
    nothing in the new one does."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    moved = []
    for name in (DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm"):
        source = path / name
        if source.exists():
            target = path / f"{name}.set-aside-{stamp}"
            source.rename(target)
            moved.append(target)
    return moved


def open_database(path: Path, *, read_only: bool, fresh: bool = False) -> Database:
    """The store's database, made ready: refused if the store lost it (unless ``fresh``),
    created or upgraded if ``read_only`` is not set, checked either way."""
    found = inspect(path)
    if found.shape is Shape.LOST and not fresh:
        raise refuse_lost(path, found)
    if read_only:
        if found.shape is not Shape.READY:
            raise StoreError(f"there is no store at {path} yet; nothing has been polled")
        if _needs_upgrade(path) and os.access(path, os.W_OK):
            open_database(path, read_only=False).close()  # the one write a reader makes
        return _ready(Database.connect(path / DB_NAME, read_only=True), path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as error:
        raise StorePathError(f"cannot open the store at {path}: {error.strerror}; point "
                             "store.path at a directory") from None
    except OSError as error:
        raise StoreError(f"cannot open the store at {path}: {error.strerror}") from None
    _require_writable(path)
    db = _ready(Database.connect(path / DB_NAME), path)
    try:
        write_marker(path)
    except OSError as error:
        db.close()
        raise StoreReadOnly(f"cannot write in the store {path}: {error.strerror}") from None
    return db


def _ready(db: Database, path: Path) -> Database:
    try:
        prepare(db, path)
    except BaseException:
        db.close()
        raise
    return db


def _needs_upgrade(path: Path) -> bool:
    db = Database.connect(path / DB_NAME, read_only=True)
    try:
        return stored_version(db) == 1
    finally:
        db.close()


def _require_writable(path: Path) -> None:
    """Say so up front, rather than at the first write half-way through a poll."""
    for target in (path, path / DB_NAME):
        if target.exists() and not os.access(target, os.W_OK):
            raise StoreReadOnly(f"the store {path} is read-only for this user ({target.name} "
                                "cannot be written); make it writable, or point store.path at "
                                "a directory this user may write (`release-watch status` "
                                "still reads it)")
