"""A delivery claimed before it is sent: the claim names the term (the leader's fencing token)
that started it, taken row by row with ``SELECT … FOR UPDATE SKIP LOCKED``, so two claimers never
wait on one another and never both take a row, and a claim left by an earlier term (its leader
was killed in the middle of a send) is taken over and said so: at most that one message in
flight is sent again, as after a kill -9 of a single daemon.

A part of ``Store`` (which mixes it in). The embedded store has one daemon (its
``daemon.lock``) and one writer at a time (its ``writer.lock``): every claim succeeds there.
"""

from __future__ import annotations

import logging

from watcher.store.backend import Backend
from watcher.store.records import Delivery

logger = logging.getLogger(__name__)

_CLAIM = """
WITH taken AS (SELECT id, claim FROM rw_delivery WHERE id = ? FOR UPDATE SKIP LOCKED)
UPDATE rw_delivery SET claim = ? FROM taken WHERE rw_delivery.id = taken.id
RETURNING taken.claim
"""


class DeliveryClaims:
    db: Backend

    def claim(self, delivery: Delivery) -> bool:
        """Whether this process may send ``delivery`` now: False when another holds the row
        this instant, or it is gone (sent meanwhile). Under a fence, only the current
        leader claims (``postgres.Deposed`` otherwise)."""
        if not self.db.has_claims:
            return True
        term = (self.db.fence() if self.db.fence is not None else None) or 0
        with self.db.transaction():
            row = self.db.one(_CLAIM, (delivery.id, term))
        if row is None:
            return False
        if row[0] is not None and 0 < int(row[0]) < term:
            logger.warning("%s: the delivery of %s was claimed by an earlier leader (term %d); "
                           "sending it from its last saved progress (were that leader killed "
                           "mid-send, its one message in flight is sent again)",
                           delivery.notifier, delivery.event_id, int(row[0]))
        return True
