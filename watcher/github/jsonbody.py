"""Decodes GitHub's JSON answers: strictly and fast first, leniently where JSON allows what a
Python string cannot carry on.

JSON may escape a lone UTF-16 surrogate (``"\\udc80"``); it is valid JSON but no character,
and pydantic's parser rejects the whole body as invalid JSON. One such escape in a release
body would fail that repo on every poll, so surrogates left unpaired are replaced with U+FFFD,
the replacement character, and the rest of the answer is kept as it was.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads has joined the valid pairs


def _replaced(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replaced(item) for item in value]
    if isinstance(value, dict):
        return {_replaced(key): _replaced(item) for key, item in value.items()}
    return value


def decode(adapter: TypeAdapter[Any], content: bytes) -> Any:
    """``content`` validated by ``adapter``; raises ValidationError as pydantic would when the
    body is not JSON even to a lenient reader."""
    try:
        return adapter.validate_json(content)
    except ValidationError as error:
        if error.errors()[0]["type"] != "json_invalid":
            raise
        try:
            data = json.loads(content)
        except ValueError:
            raise error from None
        return adapter.validate_python(_replaced(data))
