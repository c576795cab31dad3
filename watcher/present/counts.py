"""A count in words (``1 item``, ``3 classes``): the wording the offline commands share with the
notifiers, apart from ``words`` so that a command printing counts loads no event model."""

from __future__ import annotations


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    return f"{count} {singular if count == 1 else plural_form or singular + 's'}"
