"""A settable clock: tests (and the scripts that drive the CLI against the fakes) move time
instead of sleeping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["Clock"]


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
        self.slept: list[float] = []

    def __call__(self) -> datetime:
        return self.now

    def epoch(self) -> float:
        return self.now.timestamp()

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += timedelta(seconds=seconds)
