"""The store's pacing window (``rw_pace``): the send times of the last minute's GitHub requests
from every process on this store, so two polls run back to back pace together
(``watcher/github/pacing.py``).

A part of ``Store`` (which mixes it in). The window has its own connection to the store, opened
by the first paced request.
"""

from __future__ import annotations

import threading

from watcher.store.backend import Backend


class PaceLedger:
    db: Backend
    _pace: Backend | None
    _pace_lock: threading.Lock

    def reserve_sends(self, key: str, now: float, per_minute: int, window: float,
                      count: int = 1) -> list[float]:
        """At most ``count`` moments from ``now``, up to the first that lies ahead, at which
        a request under ``key`` keeps every ``window`` seconds at ``per_minute`` requests or
        fewer, counting what every process on this store sent or reserved
        (``watcher/github/pacing.py``); reserved for the caller in one transaction, so two
        processes never take the same place. The table keeps only the last ``window``
        seconds (and drops times more than a window ahead, which only a clock set back can
        leave)."""
        pace = self._pacing()
        with pace.transaction():
            # Two index ranges (one statement with OR would read every row of the key).
            pace.execute("DELETE FROM rw_pace WHERE key = ? AND at <= ?", (key, now - window))
            pace.execute("DELETE FROM rw_pace WHERE key = ? AND at > ?", (key, now + window))
            # Only the sends a new one can be held back by are read (none while the window
            # has room, as it mostly has): the window is a minute of up to 800 sends.
            held = pace.scalar("SELECT count(*) FROM rw_pace WHERE key = ?", (key,))
            first = max(0, held - per_minute)  # the oldest send a new one can be held back by
            oldest = [row[0] for row in pace.all(
                "SELECT at FROM rw_pace WHERE key = ? ORDER BY at LIMIT ? OFFSET ?",
                (key, count, first))] if held + count > per_minute else []
            taken: list[float] = []
            for _ in range(count):
                # A window after the per_minute-th latest send, if there are that many.
                index = held + len(taken) - per_minute
                before = None if index < 0 else (
                    oldest[index - first] if index < held else taken[index - held])
                at = now if before is None else min(now + window, max(now, before + window))
                taken.append(at)
                if at > now:
                    break  # the caller waits for this one; the rest are reserved from then
            pace.executemany("INSERT INTO rw_pace (key, at) VALUES (?, ?)",
                             [(key, at) for at in taken])
        return taken

    def _pacing(self) -> Backend:
        """The pacing window's own connection to the file: its writes (one per request) are
        never part of a ledger transaction, so a poll where nothing changed is still one
        ledger transaction, and fetch threads never wait for the one the poll holds."""
        if self.db.holds_transaction():
            # Our own transaction's write lock would keep this connection waiting.
            raise RuntimeError("GitHub requests are paced outside the store's transactions")
        with self._pace_lock:
            if self._pace is None:
                self._pace = self.db.another()
            return self._pace
