"""Sizes as the config writes them (``10KB``, ``512MB``, ``1.5GB``): read as bytes (decimal
units, as disks and package indexes count; ``KiB``/``MiB``/``GiB`` binary ones), shown as
written, so ``config check`` says ``512MB``, never ``512000000``."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, PlainSerializer

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*$", re.IGNORECASE)
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_size(value: object) -> int:
    """``"512MB"``, ``"1.5GB"``, ``"64KiB"`` or a number of bytes → bytes."""
    if isinstance(value, bool):
        raise ValueError("a size is written like 10KB, 512MB or 1.5GB")
    if isinstance(value, int | float):
        return int(value)
    match = _SIZE.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a size; write it like 10KB, 512MB or 1.5GB")
    return int(float(match.group(1)) * _UNITS[(match.group(2) or "B").lower()])


def format_size(size: int) -> str:
    """Bytes → the largest unit that divides them evenly: ``512000000`` → ``512MB``,
    ``1073741824`` → ``1GiB``."""
    for unit in ("TB", "TiB", "GB", "GiB", "MB", "MiB", "KB", "KiB"):
        count = size / _UNITS[unit.lower()]
        if count >= 1 and count == int(count):
            return f"{int(count)}{unit}"
    return f"{size}B"


Size = Annotated[int, BeforeValidator(parse_size),
                 PlainSerializer(format_size, return_type=str, when_used="json")]
