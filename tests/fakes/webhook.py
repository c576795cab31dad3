"""A plain HTTP endpoint on loopback that records what is POSTed to it: the receiving end of
apprise's ``json://`` URLs (and of any webhook-style notifier). ``answer`` scripts failures."""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

from fakes.loopback import Answer, Served


@dataclass(frozen=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class FakeWebhook(Served):
    latency = 0.0

    def __init__(self) -> None:
        self.received: list[Received] = []
        self._answers: deque[int] = deque()
        self._lock = threading.Lock()

    def answer(self, *statuses: int) -> None:
        """Answer the next requests with these HTTP statuses (then 200 again)."""
        with self._lock:
            self._answers.extend(statuses)

    def _handle(self, method: str, path: str, query: dict[str, str], headers: dict[str, str],
                body: bytes) -> Answer:
        with self._lock:
            status = self._answers.popleft() if self._answers else 200
            if status == 200:
                self.received.append(Received(method, path, headers, body))
        return Answer(status, {"content-type": "application/json"},
                      b'{"ok": true}' if status == 200 else b'{"error": "scripted"}')
