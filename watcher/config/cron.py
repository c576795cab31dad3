"""Digest schedules: a crontab line and a timezone read into APScheduler 3's own CronTrigger.

``config check`` and ``run`` both build their triggers here, so what one accepts the other runs.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.cron import CronTrigger

from watcher.errors import ConfigError

_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _weekday_part(part: str) -> str:
    """One comma-separated part of a crontab weekday field, numbers spelled out as names."""
    base, _, step = part.partition("/")
    if base == "*" and not step:
        return part
    if base == "*":
        first, last = 0, 6
    elif "-" in base and base.replace("-", "").isdigit():
        first, last = (int(n) for n in base.split("-", 1))
    elif base.isdigit():
        first = last = int(base)
        if step:
            last = 6
    else:
        return part  # names ("mon-fri") mean the same to both
    if not 0 <= first <= 7 or not 0 <= last <= 7:
        raise ValueError(f"weekday {part!r} is out of range 0-7")
    days = range(first, last + 1, int(step or 1))
    return ",".join(dict.fromkeys(_WEEKDAYS[day] for day in days))


def cron_weekdays(field: str) -> str:
    """Crontab counts weekdays from Sunday = 0 (and 7); APScheduler 3.x from Monday = 0. Names
    mean the same to both, so numbers are rewritten as names before APScheduler reads them."""
    return ",".join(_weekday_part(part) for part in field.split(","))


def digest_zone(timezone: str) -> ZoneInfo:
    """An IANA zone name (``Europe/Berlin``, ``UTC``) from the system's or tzdata's database."""
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"digest_timezone {timezone!r} is not a known timezone (an IANA name "
                          "such as Europe/Berlin or UTC)") from None


_FIELDS = ("minute", "hour", "day", "month", "day_of_week")


def _cron_fields(schedule: str) -> dict[str, str]:
    parts = schedule.split()
    if len(parts) != len(_FIELDS):
        raise ValueError(f"{len(parts)} fields; crontab has 5: minute hour day month weekday")
    fields = dict(zip(_FIELDS, parts, strict=True))
    fields["day_of_week"] = cron_weekdays(fields["day_of_week"])
    return fields


def _why(fields: dict[str, str], zone: ZoneInfo, error: ValueError) -> str:
    """The first field APScheduler refuses on its own, named (its errors name only the value)."""
    for name, value in fields.items():
        try:
            CronTrigger(**{name: value}, timezone=zone)
        except ValueError as field_error:
            label = "weekday" if name == "day_of_week" else name  # crontab's word
            return f"{label} {value!r}: {field_error}"
    return str(error)


def digest_trigger(schedule: str, timezone: str) -> CronTrigger:
    """The trigger ``run`` schedules a digest with; a ConfigError names what is wrong."""
    zone = digest_zone(timezone)
    try:
        fields = _cron_fields(schedule)
    except ValueError as error:
        raise ConfigError(f"digest_schedule {schedule!r} is not valid cron: {error}") from None
    try:
        return CronTrigger(**fields, timezone=zone)
    except ValueError as error:
        raise ConfigError(f"digest_schedule {schedule!r} is not valid cron: "
                          f"{_why(fields, zone, error)}") from None
