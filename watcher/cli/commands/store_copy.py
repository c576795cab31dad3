"""``release-watch store copy --to URL``: the embedded store (``store.path``) copied into a
PostgreSQL database, for replicas to share from then on (``[store] url``). One line per table:
its rows, how many were new, verified. Run again, it copies nothing new."""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher.errors import ConfigError, StoreError
from watcher.logs import mask_url_credentials
from watcher.store import Shape, Store, check_usable, copy_store, writer_lock

if TYPE_CHECKING:
    from watcher.config import Config
    from watcher.deps import Dependencies


def run_store_copy(config: Config, deps: Dependencies, url: str | None) -> int:
    target_url = url or config.store_url()
    if not target_url or not target_url.lower().startswith(("postgresql://", "postgres://")):
        raise ConfigError("store copy needs a PostgreSQL database: --to postgresql://… "
                          "(or [store] url)")
    path = config.store_path()
    if check_usable(path).shape is not Shape.READY:
        raise StoreError(f"there is no store at {path} to copy (store.path)")
    out = deps.stdout
    # No poll or delivery writes the embedded store meanwhile: the copy is of one moment.
    with writer_lock(path, wait=config.poll.lock_wait, sleep=deps.sleep,
                     doing="`release-watch store copy`"):
        source = Store.open(path, read_only=True)
        try:
            target = Store.connect(target_url)
            try:
                report = copy_store(source, target)
            finally:
                target.close()
        finally:
            source.close()
    for copied in report:
        out.write(f"{copied.line}\n")
    total = sum(copied.copied for copied in report)
    out.write(f"copied {total:,} rows from {path} into {mask_url_credentials(target_url)}"
              f"{'' if total else ' (nothing new)'}\n")
    return 0
