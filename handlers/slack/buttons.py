"""The buttons on a release's first message (bot-token channels; a webhook's message cannot
take a click), with the contract's ``action_id``s:

- under each item that affects the code: ``rw_all_uses`` (every use of it, in its thread) and
  ``rw_not_us`` on each use shown (a second click undoes it);
- at the end: ``rw_mute`` (a menu of the release's subsystems), ``rw_unmute`` for each
  subsystem the channel muted, and ``rw_snooze`` (again to undo).

A button's ``value`` names what it acts on; one that needs the release's uses names the
notifier and the key under which its first message is remembered (``ButtonRef``), whose memory
holds every use of each item (``uses_memory``). Slack's limits: 25 elements an actions block,
75 characters a button's text, 2,000 its value, 150 an option's value, 100 options a menu
(api.slack.com/reference/block-kit/block-elements).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    Option,
    PlainTextObject,
    StaticSelectElement,
)

from handlers.slack.text import plain
from watcher.delivery import Quiet, release_ref
from watcher.impact import Suppression
from watcher.models import Affect, Event, EventItem, top_level
from watcher.present import subsystem_name, use_place

ALL_USES, MUTE, UNMUTE, SNOOZE, NOT_US = (
    "rw_all_uses", "rw_mute", "rw_unmute", "rw_snooze", "rw_not_us")
ACTION_IDS = frozenset({ALL_USES, MUTE, UNMUTE, SNOOZE, NOT_US})
CONTROLS_BLOCK = "rw-controls"  # + the ButtonRef's value
ITEM_BLOCK = "rw-item-"  # + the item's key
BUTTON_CHARS = 75
MAX_ELEMENTS = 25
MAX_OPTIONS = 100
MAX_BLOCK_ID = 255


@dataclass(frozen=True)
class ButtonRef:
    """Where a button's release is remembered: the notifier that posted its first message
    and the key of that message (``compose.thread_key``)."""

    notifier: str
    thread: str

    def fits(self) -> bool:
        """Whether it fits a block's id (255 characters) with the controls' prefix."""
        return len(CONTROLS_BLOCK + self.value()) <= MAX_BLOCK_ID

    def value(self, **more: str) -> str:
        return json.dumps({"n": self.notifier, "t": self.thread, **more},
                          separators=(",", ":"))


def item_key(item: EventItem) -> str:
    """Stable for the same item in every redraw of the message."""
    text = "\n".join([item.subsystem, item.kind, item.text])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def suppression(prs: Sequence[int], use: Affect, **extra: Any) -> Suppression:
    """The store's "Not us" entry for ``use`` of the item of PRs ``prs`` (as
    ``Suppression.of`` names it)."""
    return Suppression(item=str(prs[0]) if prs else "", api=use.api,
                       codebase=use.codebase or use.root, path=use.path, code=use.code,
                       release=use.release, **extra)


def uses_memory(items: Iterable[EventItem]) -> dict[str, Any]:
    """What the first message's memory keeps of each item with uses: its first line and
    every use (``rw_all_uses`` lists them, ``rw_not_us`` finds one by its key)."""
    return {item_key(item): {"title": item.text.split("\n", 1)[0], "prs": item.prs,
                             "suppressed": item.suppressed,
                             "uses": [use.model_dump(mode="json") for use in item.affects]}
            for item in items if item.affects}


def _label(text: str) -> PlainTextObject:
    text = plain(text)
    if len(text) > BUTTON_CHARS:
        text = text[:BUTTON_CHARS - 1] + "…"
    return PlainTextObject(text=text, emoji=False)


def item_actions(item: EventItem, shown: list[Affect], ref: ButtonRef,
                 not_us: Mapping[str, Any]) -> dict[str, Any]:
    """``All N uses`` and a ``Not us`` on each use shown (``Undo not us`` where the channel
    said so, ``not_us`` by use key)."""
    key = item_key(item)
    elements: list[ButtonElement] = [ButtonElement(
        text=_label(f"All {len(item.affects or [])} uses" if len(item.affects or []) != 1
                    else "The use"),
        action_id=ALL_USES, value=ref.value(i=key))]
    for use in shown[:MAX_ELEMENTS - 1]:
        use_id = suppression(item.prs, use).key
        done = use_id in not_us
        elements.append(ButtonElement(
            text=_label(f"{'Undo not us' if done else 'Not us'}: {use_place(use)}"),
            action_id=NOT_US, value=ref.value(i=key, u=use_id),
            style="primary" if done else None))
    block = ActionsBlock(block_id=ITEM_BLOCK + key, elements=elements)
    block.validate_json()
    return block.to_dict()


def release_memory(event: Event, items: Iterable[EventItem]) -> dict[str, Any]:
    """What the first message's memory keeps to draw its controls again after a click: the
    release and its top-level subsystems."""
    return {"release": release_ref(event.repo, event.release_id),
            "subsystems": sorted({top_level(item.subsystem) for item in items})}


def controls(ref: ButtonRef, release: str, subsystems: Iterable[str], quiet: Quiet
             ) -> dict[str, Any]:
    """Mute one of the release's subsystems here (a menu), unmute each one the channel muted,
    snooze this release (or undo). The block's id names the memory (a menu has no value of
    its own beyond the option chosen)."""
    left = sorted(set(subsystems) - quiet.muted)
    elements: list[Any] = []
    if left:
        elements.append(StaticSelectElement(
            placeholder=_label("Mute a subsystem here"), action_id=MUTE,
            options=[Option(text=_label(f"Mute {subsystem_name(name)} here"), value=name)
                     for name in left[:MAX_OPTIONS]]))
    for name in sorted(quiet.muted)[:MAX_ELEMENTS - 2]:
        elements.append(ButtonElement(text=_label(f"Unmute {subsystem_name(name)}"),
                                      action_id=UNMUTE, value=name))
    snoozed = release in quiet.snoozed
    elements.append(ButtonElement(
        text=_label("Unsnooze this release" if snoozed else "Snooze this release"),
        action_id=SNOOZE, value="off" if snoozed else "on"))
    block = ActionsBlock(block_id=CONTROLS_BLOCK + ref.value(), elements=elements)
    block.validate_json()
    return block.to_dict()


def toggled_not_us(block: dict[str, Any], value: str, done: bool) -> dict[str, Any]:
    """``block`` (an item's actions) with the "Not us" button of ``value`` showing ``done``
    (its label and style), the other buttons as they were."""
    elements = []
    for element in block.get("elements") or ():
        if element.get("action_id") == NOT_US and element.get("value") == value:
            place = str(element["text"]["text"]).split(": ", 1)[-1]
            element = {key: item for key, item in element.items() if key != "style"}
            element["text"] = _label(f"{'Undo not us' if done else 'Not us'}: {place}").to_dict()
            if done:
                element["style"] = "primary"
        elements.append(element)
    return {**block, "elements": elements}
