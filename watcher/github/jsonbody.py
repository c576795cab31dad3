"""Decodes GitHub's JSON answers: strictly and fast first, leniently where JSON allows what a
Python string cannot carry on.

JSON may escape a lone UTF-16 surrogate (``"\\udc80"``); it is valid JSON but no character,
and pydantic's parser rejects the whole body as invalid JSON. A body may also hold bytes that
are not UTF-8 at all (a release body pasted from a Latin-1 file). Either, in one release body,
would fail that repo on every poll, so such text is replaced with U+FFFD, the replacement
character, and the rest of the answer is kept as it was; the caller learns that something
was replaced, to say so.

A body nested deeper than any parser here will follow (``[[[[…]]]]`` 100,000 deep) stays
invalid JSON: pydantic refuses it past its own limit, and the lenient reader's recursion
limit is caught rather than left to end the poll with a traceback.
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


def decode(adapter: TypeAdapter[Any], content: bytes) -> tuple[Any, bool]:
    """``content`` validated by ``adapter``, and whether text had to be replaced on the way;
    raises ValidationError as pydantic would when the body is not JSON even to a lenient
    reader."""
    try:
        return adapter.validate_json(content), False
    except ValidationError as error:
        if error.errors()[0]["type"] != "json_invalid":
            raise
        try:
            data = _replaced(json.loads(content.decode("utf-8-sig", errors="replace")))
        except (ValueError, RecursionError):
            raise error from None
        return adapter.validate_python(data), True
