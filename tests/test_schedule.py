"""Digest schedules read as crontab reads them (APScheduler 3.x counts weekdays from Monday)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from watcher.config import cron_weekdays, digest_trigger
from watcher.errors import ConfigError

SUNDAY = datetime(2026, 11, 29, 12, 0, tzinfo=ZoneInfo("UTC"))  # a Sunday


@pytest.mark.parametrize(("field", "expected"), [
    ("*", "*"), ("MON", "MON"), ("mon-fri", "mon-fri"), ("1", "mon"), ("0", "sun"),
    ("7", "sun"), ("1-5", "mon,tue,wed,thu,fri"), ("0,6", "sun,sat"),
    ("*/2", "sun,tue,thu,sat"), ("1/3", "mon,thu"),
])
def test_crontab_weekday_numbers_become_names(field, expected):
    assert cron_weekdays(field) == expected


@pytest.mark.parametrize(("schedule", "weekday"), [
    ("0 9 * * MON", 0), ("0 9 * * 1", 0), ("0 9 * * 0", 6), ("0 9 * * 5", 4)])
def test_next_digest_falls_on_the_crontab_weekday(schedule, weekday):
    trigger = digest_trigger(schedule, "UTC")
    fire = trigger.get_next_fire_time(None, SUNDAY)
    assert fire.weekday() == weekday and fire.hour == 9


def test_timezone_is_honoured():
    trigger = digest_trigger("0 9 * * MON", "America/New_York")
    fire = trigger.get_next_fire_time(None, SUNDAY)
    assert fire.utcoffset().total_seconds() == -5 * 3600 and fire.hour == 9


@pytest.mark.parametrize(("schedule", "timezone"), [
    ("61 9 * * MON", "UTC"), ("0 9 * * 9", "UTC"), ("0 9 * *", "UTC"),
    ("0 9 * * MON", "Mars/Olympus")])
def test_bad_schedules_are_config_errors(schedule, timezone):
    with pytest.raises(ConfigError):
        digest_trigger(schedule, timezone)


@pytest.mark.parametrize(("schedule", "named"), [
    ("99 99 * * *", "minute '99'"), ("0 99 * * *", "hour '99'"), ("0 9 32 * *", "day '32'"),
    ("0 9 * 13 *", "month '13'"), ("0 9 * *", "4 fields; crontab has 5")])
def test_a_bad_schedule_names_the_field(schedule, named):
    with pytest.raises(ConfigError, match=f"is not valid cron: {named}"):
        digest_trigger(schedule, "UTC")
