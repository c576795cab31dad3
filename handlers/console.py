"""The ``console`` notifier: what happened, for a terminal or a cron mail, every item whole
(``watcher.present``'s plain text)."""

from __future__ import annotations

from handlers.base import Notifier, Progress
from watcher.delivery import Digest
from watcher.models import Event
from watcher.present import format_digest, format_event


class ConsoleNotifier(Notifier):
    def send(self, event: Event, progress: Progress) -> None:
        self.context.stdout.write(format_event(event, self.config.min_confidence) + "\n\n")
        self.context.stdout.flush()

    def send_digest(self, digest: Digest, progress: Progress) -> None:
        self.context.stdout.write(format_digest(digest, self.config.min_confidence) + "\n\n")
        self.context.stdout.flush()
