"""The uses a team said are "not us" (``rw_suppression``): a Slack button's answer to a false
alarm, kept across restarts and replicas and read by ``impact``/``upgrade --suppressions
store`` as a baseline is. One row per entry, by its stable key; a second "Not us" on the same
use undoes the first.

A part of ``Store`` (which mixes it in) over the ledger's one connection, ``self.db``. The
table came after schema 3 (``schema.ADDITIONS``) and PostgreSQL's schema 1: a read-only store
written before it simply has none.
"""

from __future__ import annotations

from watcher.impact import Suppression
from watcher.store.backend import Backend


class SuppressionLedger:
    db: Backend

    def suppressions(self) -> list[Suppression]:
        """Every entry, in the order they were made (the key breaks ties)."""
        if not self.db.has_table("rw_suppression"):
            return []
        entries = [Suppression.model_validate_json(record) for (record,) in
                   self.db.all("SELECT record FROM rw_suppression ORDER BY key")]
        return sorted(entries, key=lambda entry: (entry.at is None, entry.at or 0, entry.key))

    def put_suppression(self, entry: Suppression) -> bool:
        """Keep it; False when an entry of the same key was there already (kept as it was)."""
        with self.db.transaction():
            before = self.db.scalar("SELECT count(*) FROM rw_suppression WHERE key = ?",
                                    (entry.key,))
            self.db.execute("INSERT INTO rw_suppression (key, record) VALUES (?, ?) "
                            "ON CONFLICT (key) DO NOTHING",
                            (entry.key, entry.model_dump_json(exclude_defaults=True)))
        return not before

    def delete_suppression(self, key: str) -> Suppression | None:
        """Drop the entry of that key; what was dropped, or None when there was none."""
        with self.db.transaction():
            record = self.db.scalar("SELECT record FROM rw_suppression WHERE key = ?", (key,))
            if record is None:
                return None
            self.db.execute("DELETE FROM rw_suppression WHERE key = ?", (key,))
        return Suppression.model_validate_json(record)
