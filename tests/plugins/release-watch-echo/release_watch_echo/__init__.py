"""The ``echo`` notifier: appends each event, and what it would authenticate with, to a file.

Everything a plugin needs: a ``Config`` with its keys and a secret read from the environment,
``send``, ``HandlerError`` for failures, and ``close``.
"""

from __future__ import annotations

import json
import logging

from pydantic import Field, SecretStr

from handlers.base import HandlerError, Notifier, NotifierConfig, Progress, secret_field
from watcher.models import Event

logger = logging.getLogger(__name__)


class EchoConfig(NotifierConfig):
    path: str = Field(description="file to append to; relative to the config file")
    token: SecretStr | None = secret_field(env="ECHO_TOKEN", required=True,
                                           description="the service's API token")


class EchoNotifier(Notifier):
    Config = EchoConfig

    def send(self, event: Event, progress: Progress) -> None:
        assert isinstance(self.config, EchoConfig) and self.config.token is not None
        token = self.config.token.get_secret_value()
        # A careless plugin: release-watch masks its secrets in every log line anyway.
        logger.warning("sending %s with token %s", event.id, token)
        line = json.dumps({"event": event.event, "repo": event.repo, "tag": event.tag,
                           "token": token})
        try:
            with (self.context.base_dir / self.config.path).open("a") as handle:
                handle.write(line + "\n")
        except OSError as error:
            raise HandlerError(f"echo notifier {self.name!r}: {error.strerror}",
                               notifier=self.name) from None

    def close(self) -> None:
        logger.debug("echo notifier %r closed", self.name)
