"""A PostgreSQL store's URL as it may be shown: its password masked wherever it is given (the
URL's user info, or a ``password=`` parameter), so ``config check``, the logs and every error
name the database without it. A password is best kept out of the URL (``PGPASSWORD`` or
libpq's ``~/.pgpass``, which psycopg reads itself)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlsplit

SCHEMES = ("postgresql://", "postgres://")
_USERINFO = re.compile(r"^(?P<scheme>[a-z]+://)(?P<user>[^:@/]*):(?P<password>[^@/]*)@",
                       re.IGNORECASE)
_PARAMETER = re.compile(r"(?i)([?&]password=)[^&]*")


def is_postgres(url: str) -> bool:
    return url.lower().startswith(SCHEMES)


def password_of(url: str) -> str | None:
    """The password the URL carries itself, if any (decoded as libpq decodes it)."""
    found = _USERINFO.match(url)
    if found and found["password"]:
        return unquote(found["password"])
    query = dict(parse_qsl(urlsplit(url).query))
    return query.get("password") or None


def masked(url: str) -> str:
    """``url`` with its password as ``***``."""
    url = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:***@", url, count=1)
    return _PARAMETER.sub(r"\1***", url)
