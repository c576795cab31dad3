"""Durations as the config writes them (``30s``, ``10m``, ``1h``): read as seconds, shown as
written, so ``config check`` and the logs say ``10m``, never ``600.0`` or ``0:10:00``."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, PlainSerializer

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(value: object) -> float:
    """``"30s"``, ``"10m"``, ``"1h"``, ``"2d"`` or a number of seconds → seconds."""
    if isinstance(value, bool):
        raise ValueError("a duration is written like 30s, 10m or 1h")
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a duration; write it like 30s, 10m, 1h or 7d")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"]


def format_duration(seconds: float) -> str:
    """Seconds → the way people write them in the config: ``600`` → ``"10m"``, ``90`` → ``"90s"``,
    ``0.5`` → ``"500ms"``; the largest unit that divides evenly, so ``parse_duration`` reads it
    back to the same number."""
    for unit in ("d", "h", "m", "s", "ms"):
        count = seconds / _UNIT_SECONDS[unit]
        if count >= 1 and abs(count - round(count)) < 1e-9:
            return f"{round(count)}{unit}"
    return f"{seconds:g}s"


# Read as seconds; shown (config check, logs) as written: "10m", not 600.0 or 0:10:00.
Duration = Annotated[float, BeforeValidator(parse_duration),
                     PlainSerializer(format_duration, return_type=str, when_used="json")]
