"""What a command reads from the operator: a file named on the command line, or standard
input for ``-``; one clear error line when it cannot."""

from __future__ import annotations

import sys
from pathlib import Path

from watcher.errors import ConfigError


def read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text") from None
