"""What a subscription posts, in words: "pytorch/pytorch: BC-breaking items in Distributed, as
they appear", "... in a weekly digest, Mondays at 09:00 UTC". The answers to ``/release-watch``
say exactly this, and ``list`` and ``status`` show subscriptions the same way. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from watcher.present import KIND_NAMES, subsystem_name
from watcher.store import Subscription

_DAYS = {
    "mon": "Monday",
    "tue": "Tuesday",
    "wed": "Wednesday",
    "thu": "Thursday",
    "fri": "Friday",
    "sat": "Saturday",
    "sun": "Sunday",
}
_DAY_NUMBERS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")


def joined(words: Sequence[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


def kind_words(kinds: Sequence[str]) -> str:
    """``BC-breaking and deprecation``: the kinds as readers call them."""
    names = [KIND_NAMES.get(kind, kind) for kind in kinds]
    return joined([name if name[:2].isupper() else name.lower() for name in names])


def subsystem_words(subsystems: Sequence[str]) -> str:
    """``Distributed and FSDP (distributed/fsdp)``: names, with the id where it is finer."""
    return joined([subsystem_name(sub) + (f" ({sub})" if "/" in sub else "") for sub in subsystems])


def items_words(subsystems: Sequence[str] | None, kinds: Sequence[str] | None) -> str:
    what = f"{kind_words(kinds)} items" if kinds else "every item"
    return f"{what} in {subsystem_words(subsystems)}" if subsystems else what


def repos_words(repos: Sequence[str] | None, watched: Sequence[str]) -> str:
    if repos:
        return joined(list(repos))
    if not watched:
        return "every watched repository"
    shown = list(watched[:5]) + ([f"{len(watched) - 5} more"] if len(watched) > 5 else [])
    return f"every watched repository ({', '.join(shown)})"


def _day(field: str) -> str | None:
    """A crontab weekday (``MON``, ``1``, ``7``) as a name, or None."""
    key = field.lower()[:3]
    if field.isdigit() and 0 <= int(field) <= 7:
        key = _DAY_NUMBERS[int(field)]
    return _DAYS.get(key)


def _days(field: str) -> str | None:
    """``MON`` → ``Mondays``; ``MON-FRI``/``1-5`` → ``weekdays``; ``MON,THU`` → ``Mondays and
    Thursdays``; None where the field says something more elaborate."""
    if field.lower() in ("mon-fri", "1-5"):
        return "weekdays"
    days = [_day(part) for part in field.split(",")]
    if not days or None in days:
        return None
    return joined([f"{day}s" for day in days if day])


def schedule_words(cron: str | None, zone: str = "UTC") -> str:
    """When the subscription posts: ``as they appear``, ``in a weekly digest, Mondays at
    09:00 UTC``, ``in a daily digest at 09:00 UTC``, else the cron line itself."""
    if cron is None:
        return "as they appear"
    fields = cron.split()
    if (
        len(fields) == 5
        and fields[0].isdigit()
        and fields[1].isdigit()
        and fields[2:4] == ["*", "*"]
    ):
        time = f"{int(fields[1]):02d}:{int(fields[0]):02d} {zone}"
        if fields[4] == "*":
            return f"in a daily digest at {time}"
        days = _days(fields[4])
        if days == "weekdays":
            return f"in a digest on weekdays at {time}"
        if days is not None:
            often = "weekly " if "," not in fields[4] else ""
            return f"in a {often}digest, {days} at {time}"
    return f"in a digest on the schedule `{cron}` (cron, {zone})"


def subscription_words(
    repos: Sequence[str] | None,
    subsystems: Sequence[str] | None,
    kinds: Sequence[str] | None,
    digest: str | None,
    watched: Sequence[str],
    zone: str = "UTC",
) -> str:
    """``pytorch/pytorch: BC-breaking items in Distributed, as they appear``."""
    return (
        f"{repos_words(repos, watched)}: {items_words(subsystems, kinds)}, "
        f"{schedule_words(digest, zone)}"
    )


def subscription_rows(
    subscriptions: Sequence[Subscription], watched: Sequence[str]
) -> list[dict[str, Any]]:
    """What ``status`` shows of each subscription (``--json`` as it is)."""
    return [
        {
            "notifier": sub.notifier_name,
            "channel": sub.channel,
            "channel_name": sub.channel_name,
            "repos": sub.repos,
            "subsystems": sub.subsystems,
            "kinds": sub.kinds,
            "mode": sub.mode,
            "digest_schedule": sub.digest_schedule,
            "created_at": sub.created_at,
            "created_by": sub.created_by,
            "what": subscription_words(
                sub.repos, sub.subsystems, sub.kinds, sub.digest_schedule, watched
            ),
        }
        for sub in subscriptions
    ]
