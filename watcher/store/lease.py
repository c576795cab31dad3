"""The leader's lease on a shared store (PostgreSQL): one row of ``rw_lease`` naming its holder,
a fencing token and an expiry, taken and renewed by one statement each on a connection of its
own, so a renewal never waits behind a long transaction of the store's.

Why a row and not a session advisory lock: an advisory lock lives as long as the session that
took it, so a pool recycling that connection (psycopg_pool's ``max_lifetime``), PgBouncer in
transaction mode handing the next statement another server connection, or a server that
dropped the session while the client still believes it holds the lock each lose it without a
word to the holder; and it carries no token a write could be fenced with. The row survives
any connection, every renewal reads back whether the lease is still ours (``RETURNING``), the
expiry is the server's clock (``clock_timestamp()``), so replicas' clocks need not agree, and
the token only ever grows: each new term (another holder, or this one after its lease lapsed)
takes the next one, and every write of a leader's jobs checks it (``postgres.Deposed``).
"""

from __future__ import annotations

from typing import Any

from watcher.store.backend import Backend

LEASE = "leader"  # the row's name: one leader per store

# Take the lease if it is free or lapsed, renew it if it is ours; a lapsed one is a new term.
_ACQUIRE = """
INSERT INTO rw_lease AS l (name, holder, token, expires)
VALUES (?, ?, 1, clock_timestamp() + make_interval(secs => ?))
ON CONFLICT (name) DO UPDATE SET
    token = CASE WHEN l.holder = excluded.holder AND l.expires > clock_timestamp()
                 THEN l.token ELSE l.token + 1 END,
    holder = excluded.holder, expires = excluded.expires
WHERE l.holder = excluded.holder OR l.expires <= clock_timestamp()
RETURNING token
"""


def leader_of(db: Backend) -> dict[str, Any] | None:
    """The lease as ``status`` shows it: holder, term, seconds left (negative once lapsed)."""
    if not db.has_table("rw_lease"):
        return None
    row = db.one("SELECT holder, token, extract(epoch FROM expires - clock_timestamp()) "
                 "FROM rw_lease WHERE name = ?", (LEASE,))
    return None if row is None else {"holder": str(row[0]), "term": int(row[1]),
                                     "seconds_left": round(float(row[2]), 1)}


class Lease:
    def __init__(self, db: Backend, holder: str, seconds: float) -> None:
        self.db = db
        self.holder = holder
        self.seconds = seconds

    def acquire(self) -> int | None:
        """Take or renew the lease for ``seconds`` from now: its token, or None while another
        replica holds it."""
        token = self.db.scalar(_ACQUIRE, (LEASE, self.holder, self.seconds))
        return None if token is None else int(token)

    def release(self) -> None:
        """Let it lapse now (a clean stop), so a standby takes over at its next try."""
        self.db.execute("UPDATE rw_lease SET expires = clock_timestamp() "
                        "WHERE name = ? AND holder = ?", (LEASE, self.holder))

    def close(self) -> None:
        self.db.close()
