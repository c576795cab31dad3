"""What several offline commands print alike: an item as the contract's JSON (``classify``,
``impact``), kept apart from the commands so each imports only what it prints."""

from __future__ import annotations

from watcher.models import ClassifiedItem


def item_json(item: ClassifiedItem) -> dict[str, object]:
    fields = {"subsystem", "kind", "text", "section", "prs", "decided_by", "confidence"}
    data = dict(item.model_dump(mode="json", include=fields | ({"group"} if item.group else set())))
    data["confidence"] = round(item.confidence, 3)
    return data
