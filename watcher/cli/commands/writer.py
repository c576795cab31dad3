"""One writer at a time, for the commands that write the store by hand (``poll``, ``digest``):
the embedded store's ``writer.lock``, or a shared store's lease, led for the run."""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager

from watcher.config import Config
from watcher.deps import Dependencies
from watcher.store import Store, shared, writer_lock

logger = logging.getLogger(__name__)


def one_writer(config: Config, deps: Dependencies, store: Store, doing: str
               ) -> AbstractContextManager[None]:
    """Beside a running daemon this waits (``poll.lock_wait``) for its job to finish on the
    embedded store; on a shared one for the lease, which a running daemon keeps."""
    def on_wait(why: str) -> None:
        logger.warning("%s", why)

    if shared(store):
        from watcher.daemon import leading

        return leading(store, config.store.lease, wait=config.poll.lock_wait,
                       sleep=deps.sleep, monotonic=deps.epoch, on_wait=on_wait)
    return writer_lock(config.store_path(), wait=config.poll.lock_wait, sleep=deps.sleep,
                       on_wait=on_wait, doing=doing)
