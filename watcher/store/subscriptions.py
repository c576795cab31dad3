"""The store's Slack subscriptions (``rw_subscription``): what a team asked for with
``/release-watch subscribe`` in its channel, kept across restarts and routed like a configured
Slack notifier named ``subscription-ID``.

A part of ``Store`` (which mixes it in) over the ledger's one connection, ``self.db``. The table
came after schema 3 (``schema.ADDITIONS``): a read-only store written before it simply has no
subscription.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from watcher.store.backend import Backend

NOTIFIER_PREFIX = "subscription-"


class Subscription(BaseModel):
    """One channel's subscription. ``None`` filters mean "all" (every watched repo, every
    subsystem, every kind); ``digest_schedule`` None means each event as it is found."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    id: int = 0  # 0 until stored
    channel: str  # Slack's channel id (C…, G…): where the notifier posts
    channel_name: str = ""  # as Slack named it when the command was typed, without "#"
    team: str | None = None
    repos: list[str] | None = None
    subsystems: list[str] | None = None
    kinds: list[str] | None = None
    digest_schedule: str | None = None
    created_at: datetime
    created_by: str = ""  # the Slack user id of whoever subscribed

    @property
    def notifier_name(self) -> str:
        return f"{NOTIFIER_PREFIX}{self.id}"

    @property
    def mode(self) -> str:
        return "immediate" if self.digest_schedule is None else "digest"

    def same_filters(self, other: Subscription) -> bool:
        """Whether both ask for the same items (in any order of the words)."""

        def key(sub: Subscription) -> tuple[object, ...]:
            return tuple(
                None if values is None else frozenset(v.lower() for v in values)
                for values in (sub.repos, sub.subsystems, sub.kinds)
            )

        return key(self) == key(other)


class SubscriptionLedger:
    db: Backend

    def subscriptions(self, channel: str | None = None) -> list[Subscription]:
        """Every subscription (or one channel's), oldest first."""
        if not self._has_subscriptions():
            return []
        rows = (
            self.db.all("SELECT id, record FROM rw_subscription ORDER BY id")
            if channel is None
            else self.db.all(
                "SELECT id, record FROM rw_subscription WHERE channel = ? ORDER BY id", (channel,)
            )
        )
        return [
            Subscription.model_validate_json(record).model_copy(update={"id": sub_id})
            for sub_id, record in rows
        ]

    def add_subscription(self, subscription: Subscription) -> Subscription:
        """Store it; the stored copy carries its id (and so its notifier's name)."""
        with self.db.transaction():
            new_id = self.db.scalar(
                "INSERT INTO rw_subscription (channel, record) VALUES (?, ?) RETURNING id",
                (subscription.channel, subscription.model_dump_json(exclude={"id"})),
            )
        return subscription.model_copy(update={"id": int(new_id)})

    def remove_subscriptions(self, ids: list[int]) -> list[Subscription]:
        """Remove them, with what their notifiers still had queued (deliveries, a digest
        queue, a digest in flight): an unsubscribed channel gets nothing more. Returns what
        was removed."""
        wanted = set(ids)
        with self.db.transaction():
            removed = [sub for sub in self.subscriptions() if sub.id in wanted]
            for sub in removed:
                name = sub.notifier_name
                self.db.execute("DELETE FROM rw_subscription WHERE id = ?", (sub.id,))
                self.db.execute("DELETE FROM rw_delivery WHERE notifier = ?", (name,))
                self.db.execute("DELETE FROM rw_digest_queue WHERE notifier = ?", (name,))
                self.db.execute("DELETE FROM rw_digest WHERE notifier = ?", (name,))
        return removed

    def _has_subscriptions(self) -> bool:
        """False only in a store opened read-only that was written before the table."""
        return self.db.has_table("rw_subscription")
