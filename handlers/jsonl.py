"""The ``jsonl`` notifier: one event per line, exactly the contract's JSON shape."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import Field

from handlers.base import Notifier, NotifierConfig, Progress
from watcher.errors import HandlerError
from watcher.models import Event


class JsonlConfig(NotifierConfig):
    path: str = Field(description="file to append to; relative paths start at the config file")
    fsync: bool = Field(default=True,
                        description="flush each line to disk before it counts as sent")


class JsonlNotifier(Notifier):
    Config = JsonlConfig

    @property
    def path(self) -> Path:
        assert isinstance(self.config, JsonlConfig)
        path = Path(os.path.expandvars(self.config.path)).expanduser()
        return path if path.is_absolute() else self.context.base_dir / path

    def send(self, event: Event, progress: Progress) -> None:
        assert isinstance(self.config, JsonlConfig)
        line = json.dumps(event.to_json_dict(), ensure_ascii=False, separators=(",", ":"))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One write of one whole line in append mode: readers never see half an event.
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
                handle.flush()
                if self.config.fsync:
                    os.fsync(handle.fileno())
        except OSError as error:
            raise HandlerError(f"cannot append to {self.path}: {error.strerror}",
                               notifier=self.name) from None
