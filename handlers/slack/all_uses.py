"""``rw_all_uses``: every use of one item, as replies in its release's thread, per tier
(breaks, check, then the mentions), each with its place (linked as the channel's uses are) and
why; split over as many messages as Slack's limits need (``layout.pack``), never cut: the
parent message shows at most three uses an item, and "+45 more" is here, all of them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.slack.blocks import Piece, Titled, context, section
from handlers.slack.items import Style, use_line
from handlers.slack.layout import SlackMessage, pack
from handlers.slack.text import Line, escape, to_mrkdwn
from watcher.models import Affect
from watcher.present import plural, tier_title

TIERS = ("breaks", "check", "mentions")


def all_uses_messages(entry: Mapping[str, Any], style: Style, max_chars: int
                      ) -> list[SlackMessage]:
    """The replies listing every use ``entry`` (an item of the first message's memory,
    ``buttons.uses_memory``) holds."""
    uses = [Affect.model_validate(use) for use in entry.get("uses") or ()]
    named = len({use.codebase or use.root for use in uses}) > 1
    title = to_mrkdwn(str(entry.get("title") or ""), style.repo, limit=300)
    pieces: list[Piece] = [section(f"*All {plural(len(uses), 'use')} of* {title}")]
    for tier in TIERS:
        mine = [use for use in uses if use.tier == tier]
        if mine:
            files = len({(use.root, use.path) for use in mine})
            pieces.append(Titled(escape(tier_title(tier, len(mine), files)),
                                 [[Line(use_line(use, style, named=named))] for use in mine]))
    suppressed = int(entry.get("suppressed") or 0)
    if suppressed:
        pieces.append(context(f"_{plural(suppressed, 'more use')} marked not us (suppressed)_"))
    fallback = f"All {plural(len(uses), 'use')} of an item"
    return pack(pieces, max_chars, in_thread=True, fallback=fallback)
