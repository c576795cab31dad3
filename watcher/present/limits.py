"""How much a digest shows, apart from ``digest``: the notifiers' settings default to it, and
a poll that reads them (every poll builds its notifiers) need not load the digest's summary
and its wording."""

from __future__ import annotations

DIGEST_MAX_ITEMS = 200  # items a digest shows whole; the rest are counted and linked
