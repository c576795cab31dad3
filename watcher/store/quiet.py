"""What each Slack channel muted and snoozed (``rw_channel_quiet``): a button's answer on a
release's message, kept across restarts and replicas, one row per channel and target: ``mute``
a top-level subsystem, ``snooze`` a release (``watcher.delivery.quiet.release_ref``);
``watcher.delivery.quiet`` reads them as each channel's ``Quiet``. The row
keeps who clicked and when.

A part of ``Store`` (which mixes it in) over the ledger's one connection. The table came after
schema 3 (``schema.ADDITIONS``) and PostgreSQL's schema 2: a read-only store written before it
simply has none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from watcher.store.backend import Backend

What = Literal["mute", "snooze"]


@dataclass(frozen=True)
class QuietEntry:
    channel: str  # Slack's channel id
    what: What
    target: str  # a subsystem id, or a release_ref
    channel_name: str = ""
    by: str = ""  # the Slack user id of whoever clicked
    at: str = ""  # when, ISO 8601


class QuietLedger:
    db: Backend

    def quiet_entries(self, channel: str | None = None) -> list[QuietEntry]:
        """Every channel's entries (or one channel's), oldest first."""
        if not self.db.has_table("rw_channel_quiet"):
            return []
        sql = "SELECT channel, what, target, record FROM rw_channel_quiet"
        rows = (self.db.all(sql + " ORDER BY channel, what, target") if channel is None else
                self.db.all(sql + " WHERE channel = ? ORDER BY what, target", (channel,)))
        entries = [QuietEntry(row[0], row[1], row[2], **json.loads(row[3])) for row in rows]
        return sorted(entries, key=lambda entry: entry.at)

    def put_quiet(self, entry: QuietEntry) -> bool:
        """Keep it; False when the channel had it already (kept as it was)."""
        record = json.dumps({"channel_name": entry.channel_name, "by": entry.by,
                             "at": entry.at})
        with self.db.transaction():
            cursor = self.db.execute(
                "INSERT INTO rw_channel_quiet (channel, what, target, record) "
                "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (entry.channel, entry.what, entry.target, record))
        return cursor.rowcount == 1

    def delete_quiet(self, channel: str, what: What, target: str) -> bool:
        """Drop it; False when the channel had no such entry."""
        with self.db.transaction():
            cursor = self.db.execute(
                "DELETE FROM rw_channel_quiet WHERE channel = ? AND what = ? AND target = ?",
                (channel, what, target))
        return cursor.rowcount == 1


def now_text(at: datetime) -> str:
    return at.isoformat(timespec="seconds")
