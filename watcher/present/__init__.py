"""How events read to people, the same in every notifier.

``plan`` is the first stage of every message: what an event tells a reader, in order (its
headline, what affects the configured code, the counts, the called-out kinds, every item per
subsystem and kind), decided once for every notifier; ``affects`` is its part that says what
touches the configured code (breaks, then check, mentions counted); ``digest`` is what a digest
is (its counts per repository and subsystem and its most important items: ``watcher.delivery``
folds a queue into one, ``digest_text`` words it as plain text); ``words`` holds the
shared wording (names not ids, plurals, a release's title as people say it, guesses marked as
guesses, the order of kinds), ``counts`` its one piece that needs no event (a count in words,
for the offline commands too); ``plain`` renders whole events and digests as plain text, for the
console, ``--dry-run`` previews and services that take a title and a body; ``html`` renders an
event as HTML, for feeds. Notifiers with a richer format (Slack) render the plan with ``words``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.present.affects import LISTED_TIERS as LISTED_TIERS
    from watcher.present.affects import AffectsPlan as AffectsPlan
    from watcher.present.affects import AffectsTally as AffectsTally
    from watcher.present.affects import TierEntry as TierEntry
    from watcher.present.affects import TierGroup as TierGroup
    from watcher.present.affects import UseTally as UseTally
    from watcher.present.affects import affects_of as affects_of
    from watcher.present.counts import plural as plural
    from watcher.present.digest import Digest as Digest
    from watcher.present.digest import DigestItem as DigestItem
    from watcher.present.digest import QueuedEvents as QueuedEvents
    from watcher.present.digest import ReleaseRef as ReleaseRef
    from watcher.present.digest import RepoDigest as RepoDigest
    from watcher.present.digest import SubsystemDigest as SubsystemDigest
    from watcher.present.digest import by_repo as by_repo
    from watcher.present.digest_text import format_digest as format_digest
    from watcher.present.html import event_html as event_html
    from watcher.present.limits import DIGEST_MAX_ITEMS as DIGEST_MAX_ITEMS
    from watcher.present.links import hyperlinks_for as hyperlinks_for
    from watcher.present.links import show_links as show_links
    from watcher.present.plain import format_event as format_event
    from watcher.present.plan import KIND_RANK as KIND_RANK
    from watcher.present.plan import EventPlan as EventPlan
    from watcher.present.plan import Group as Group
    from watcher.present.plan import Section as Section
    from watcher.present.plan import by_kind as by_kind
    from watcher.present.plan import plan_event as plan_event
    from watcher.present.plan import ranked as ranked
    from watcher.present.plan import release_now as release_now
    from watcher.present.plan import sections_of as sections_of
    from watcher.present.words import AFFECTS_TITLE as AFFECTS_TITLE
    from watcher.present.words import CALLED_OUT as CALLED_OUT
    from watcher.present.words import CHANGE_SIGNS as CHANGE_SIGNS
    from watcher.present.words import KIND_COUNTS as KIND_COUNTS
    from watcher.present.words import KIND_NAMES as KIND_NAMES
    from watcher.present.words import KIND_ORDER as KIND_ORDER
    from watcher.present.words import MENTIONS_ARE as MENTIONS_ARE
    from watcher.present.words import TIER_COUNTS as TIER_COUNTS
    from watcher.present.words import TIER_TITLES as TIER_TITLES
    from watcher.present.words import UNSURE_BELOW as UNSURE_BELOW
    from watcher.present.words import USES_SHOWN as USES_SHOWN
    from watcher.present.words import Tally as Tally
    from watcher.present.words import affects_title as affects_title
    from watcher.present.words import breaking as breaking
    from watcher.present.words import by_change as by_change
    from watcher.present.words import by_name_note as by_name_note
    from watcher.present.words import by_top_subsystem as by_top_subsystem
    from watcher.present.words import changes_in_words as changes_in_words
    from watcher.present.words import count_line as count_line
    from watcher.present.words import happened as happened
    from watcher.present.words import headline as headline
    from watcher.present.words import kind_count as kind_count
    from watcher.present.words import kinds_in_words as kinds_in_words
    from watcher.present.words import mentions_line as mentions_line
    from watcher.present.words import period_counts as period_counts
    from watcher.present.words import release_title as release_title
    from watcher.present.words import renamed as renamed
    from watcher.present.words import subsystem_name as subsystem_name
    from watcher.present.words import subsystem_tag as subsystem_tag
    from watcher.present.words import tally as tally
    from watcher.present.words import tally_line as tally_line
    from watcher.present.words import tier_title as tier_title
    from watcher.present.words import unparsable_note as unparsable_note
    from watcher.present.words import use_place as use_place
    from watcher.present.words import uses_in_files as uses_in_files

_EXPORTS = {
    "AFFECTS_TITLE": "words",
    "affects_of": "affects",
    "affects_title": "words",
    "AffectsPlan": "affects",
    "AffectsTally": "affects",
    "breaking": "words",
    "by_change": "words",
    "by_kind": "plan",
    "by_name_note": "words",
    "by_top_subsystem": "words",
    "CALLED_OUT": "words",
    "CHANGE_SIGNS": "words",
    "changes_in_words": "words",
    "count_line": "words",
    "event_html": "html",
    "EventPlan": "plan",
    "Group": "plan",
    "format_digest": "digest_text",
    "Digest": "digest",
    "DIGEST_MAX_ITEMS": "limits",
    "DigestItem": "digest",
    "QueuedEvents": "digest",
    "ReleaseRef": "digest",
    "RepoDigest": "digest",
    "SubsystemDigest": "digest",
    "by_repo": "digest",
    "format_event": "plain",
    "happened": "words",
    "headline": "words",
    "hyperlinks_for": "links",
    "show_links": "links",
    "KIND_COUNTS": "words",
    "kind_count": "words",
    "KIND_NAMES": "words",
    "kinds_in_words": "words",
    "KIND_ORDER": "words",
    "KIND_RANK": "plan",
    "LISTED_TIERS": "affects",
    "MENTIONS_ARE": "words",
    "mentions_line": "words",
    "period_counts": "words",
    "plan_event": "plan",
    "plural": "counts",
    "ranked": "plan",
    "release_now": "plan",
    "release_title": "words",
    "renamed": "words",
    "Section": "plan",
    "sections_of": "plan",
    "subsystem_name": "words",
    "subsystem_tag": "words",
    "Tally": "words",
    "TIER_COUNTS": "words",
    "tier_title": "words",
    "TIER_TITLES": "words",
    "TierEntry": "affects",
    "TierGroup": "affects",
    "tally": "words",
    "tally_line": "words",
    "unparsable_note": "words",
    "UNSURE_BELOW": "words",
    "use_place": "words",
    "UseTally": "affects",
    "USES_SHOWN": "words",
    "uses_in_files": "words",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
