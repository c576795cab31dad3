"""The store's digest ledger: per digest notifier its queue of event ids (``rw_digest_queue``),
when the last digest went out, and the digest in flight (``rw_digest``), kept until delivered
so a crash re-sends it and resumes where it was.

A part of ``Store`` (which mixes it in) over the ledger's one connection, ``self.db``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from datetime import datetime

from watcher.store.backend import Backend
from watcher.store.records import DigestDelivery


class DigestLedger:
    db: Backend

    def digest_queue(self, notifier: str, upto: int | None = None) -> list[str]:
        rows = self.db.all("SELECT event_id FROM rw_digest_queue WHERE notifier = ? AND seq <= ?"
                           " ORDER BY seq", (notifier, upto if upto is not None else 2**62))
        return [row[0] for row in rows]

    def digest_upto(self, notifier: str) -> int:
        """The last position in ``notifier``'s digest queue, 0 when it is empty."""
        return int(self.db.scalar("SELECT coalesce(max(seq), 0) FROM rw_digest_queue "
                                  "WHERE notifier = ?", (notifier,)))

    def digest_pages(self, notifier: str, upto: int, page: int = 100,
                     repos: Collection[str] | None = None) -> Iterator[list[str]]:
        """``notifier``'s queued events up to queue position ``upto``, as their JSON, ``page``
        at a time in queue order: a digest never holds its whole queue. Each page is one
        indexed range read from where the last one ended (an event whose body is gone is
        left out). ``repos``: only the events of those repositories, picked by SQLite from
        the bodies (``json_extract``), so the others are not even parsed."""
        where, names = "", tuple(sorted(repos)) if repos is not None else ()
        if repos is not None:
            if not names:
                return
            where = (f" AND {self.db.json_text('e.body', 'repo')} IN ("
                     + ", ".join("?" * len(names)) + ")")
        after = 0
        while True:
            rows = self.db.all(
                "SELECT q.seq, e.body FROM rw_digest_queue q LEFT JOIN rw_event e "
                "ON e.id = q.event_id WHERE q.notifier = ? AND q.seq > ? AND q.seq <= ?"
                f"{where} ORDER BY q.seq LIMIT ?", (notifier, after, upto, *names, page))
            if not rows:
                return
            after = rows[-1][0]
            yield [body for _, body in rows if body]

    def digest_sizes(self) -> dict[str, int]:
        """Queued events per digest notifier, including those with an empty queue."""
        sizes = {row[0]: 0 for row in self.db.all("SELECT notifier FROM rw_digest")}
        sizes |= dict(self.db.all("SELECT notifier, count(*) FROM rw_digest_queue "
                                  "GROUP BY notifier"))
        return dict(sorted(sizes.items()))

    def digest_since(self, notifier: str) -> datetime | None:
        value = self.db.scalar("SELECT since FROM rw_digest WHERE notifier = ?", (notifier,))
        return datetime.fromisoformat(value) if value else None

    def digest_delivery(self, notifier: str, *, ids: bool = True) -> DigestDelivery | None:
        """The digest in flight; ``ids=False`` leaves its ``event_ids`` empty (read its events
        with ``digest_pages`` up to its ``upto`` instead of listing the queue)."""
        value = self.db.scalar("SELECT pending FROM rw_digest WHERE notifier = ?", (notifier,))
        if not value:
            return None
        data = json.loads(value)
        queued = self.digest_queue(notifier, data.get("upto", 0)) if ids else []
        return DigestDelivery.model_validate({**data, "event_ids": queued})

    def start_digest(self, notifier: str, now: datetime, *, ids: bool = True
                     ) -> DigestDelivery:
        """The digest in flight, or a new one taking the whole queue as it is now (up to its
        last position, ``upto``); ``ids`` as for ``digest_delivery``."""
        with self.db.transaction():
            pending = self.digest_delivery(notifier, ids=ids)
            if pending is not None:
                return pending
            upto = self.digest_upto(notifier)
            digest = DigestDelivery(notifier=notifier,
                                    event_ids=self.digest_queue(notifier, upto) if ids else [],
                                    since=self.digest_since(notifier), until=now, upto=upto)
            self.put_digest_delivery(digest)
            return digest

    def put_digest_delivery(self, digest: DigestDelivery) -> None:
        self.db.execute("INSERT INTO rw_digest (notifier, pending) VALUES (?, ?) ON CONFLICT "
                        "(notifier) DO UPDATE SET pending = excluded.pending",
                        (digest.notifier, digest.model_dump_json(exclude={"event_ids"})))

    def digest_delivered(self, digest: DigestDelivery) -> None:
        """Only now do its events leave the queue; events queued meanwhile stay for the next."""
        with self.db.transaction():
            self.db.execute("DELETE FROM rw_digest_queue WHERE notifier = ? AND seq <= ?",
                            (digest.notifier, digest.upto))
            self.db.execute("INSERT INTO rw_digest (notifier, since, pending) VALUES (?, ?, NULL)"
                            " ON CONFLICT (notifier) DO UPDATE SET since = excluded.since, "
                            "pending = NULL", (digest.notifier, digest.until.isoformat()))
