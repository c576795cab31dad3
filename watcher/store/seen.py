"""The signed requests the store has seen (``rw_seen_request``): each Slack request URL
signature, kept until its timestamp leaves the five minutes Slack's signature is good for, so
a captured request sent again is refused after a restart too, and by every process on the
store (replicas sharing it).

A part of ``Store`` (which mixes it in), over the ledger's connection. Recording is one
``INSERT OR IGNORE`` on the key, in a transaction of its own taken before anything the request
asks for is done: of two requests with one signature, at once or a restart apart, exactly one
finds the key absent. The table came after schema 3 (``schema.ADDITIONS``).
"""

from __future__ import annotations

from watcher.store.backend import Backend


class SeenLedger:
    db: Backend

    def first_sighting(self, key: str, now: float, until: float) -> bool:
        """Record ``key``, good until the epoch second ``until``; True when no record of it
        was kept, False when it was seen before (a replay). Expired keys are pruned on the
        way, so the table holds at most the last window's requests."""
        with self.db.transaction():
            self.db.execute("DELETE FROM rw_seen_request WHERE until < ?", (now,))
            cursor = self.db.execute(
                "INSERT INTO rw_seen_request (key, until) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (key, until))
        return cursor.rowcount == 1

    def seen_requests(self) -> int:
        """How many keys are kept (``status`` and the tests)."""
        return int(self.db.scalar("SELECT count(*) FROM rw_seen_request") or 0)
