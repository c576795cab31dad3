"""The ``console`` notifier: what happened, for a terminal or a cron mail, every item whole
(``watcher.present``'s plain text)."""

from __future__ import annotations

import logging

from pydantic import Field

from handlers.base import HandlerContext, Notifier, NotifierConfig, Progress
from watcher.delivery import Digest
from watcher.models import Event
from watcher.present import format_digest, format_event, hyperlinks_for

logger = logging.getLogger(__name__)


class ConsoleConfig(NotifierConfig):
    short: bool = Field(
        default=False, description="print each event short: headline, counts, BC-breaking "
                                   "changes, deprecations, and a link to the rest "
                                   "(`poll --short` sets it)")


class ConsoleNotifier(Notifier):
    Config = ConsoleConfig

    def __init__(self, config: NotifierConfig, context: HandlerContext) -> None:
        super().__init__(config, context)
        self.reader_gone = False

    def send(self, event: Event, progress: Progress) -> None:
        short = isinstance(self.config, ConsoleConfig) and self.config.short
        self._write(format_event(event, self.config.min_confidence, short=short,
                                 hyperlinks=hyperlinks_for(self.context.stdout)))

    def send_digest(self, digest: Digest, progress: Progress) -> None:
        self._write(format_digest(digest, self.config.min_confidence,
                                  hyperlinks=hyperlinks_for(self.context.stdout)))

    def _write(self, text: str) -> None:
        """A reader that stopped reading (``release-watch poll | head``) took what it wanted:
        the rest is not a failed delivery to retry on the next run, where nobody would read
        it either, so it counts as delivered and the other notifiers go on as usual."""
        if self.reader_gone:
            return
        try:
            self.context.stdout.write(text + "\n\n")
            self.context.stdout.flush()
        except BrokenPipeError:
            self.reader_gone = True
            logger.info("%s: standard output was closed by its reader; the rest of this "
                        "run's console output is dropped", self.name)
