"""The generated parts of docs/configuration.md, made from the code, never typed: the built-in
defaults (``config/default.toml``, every key with its default and what it does) and each
notifier type's keys (read from its pydantic ``Config``: name, default, description, the
variable a secret comes from).

    python scripts/config_reference.py           # print them
    python scripts/config_reference.py --write   # put them into docs/configuration.md

``tests/test_docs.py`` checks that the page holds exactly what this makes.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "configuration.md"
DEFAULTS = ROOT / "config" / "default.toml"
GROUP = "release_watch.notifiers"
MARKERS = {"defaults": ("<!-- config:defaults (scripts/config_reference.py) -->",
                        "<!-- /config:defaults -->"),
           "notifiers": ("<!-- config:notifiers (scripts/config_reference.py) -->",
                         "<!-- /config:notifiers -->")}


def _default(info: Any) -> str:
    if info.default is PydanticUndefined and info.default_factory is None:
        return "required"
    value = info.default_factory() if info.default_factory is not None else info.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value!r}`"


# The two keys NotifierConfig leaves undescribed.
_UNDESCRIBED = {"name": "the notifier's name, in logs, `status` and `digest --notifier`",
                "type": "which notifier: one of those below, or a plugin's"}


def _what(name: str, info: Any) -> str:
    return (info.description or _UNDESCRIBED.get(name, "")).replace("|", "\\|")


def keys_table(model: type[BaseModel], skip: set[str]) -> str:
    rows = ["| key | default | what it does |", "|---|---|---|"]
    for name, info in model.model_fields.items():
        if name not in skip:
            rows.append(f"| `{name}` | {_default(info)} | {_what(name, info)} |")
    return "\n".join(rows)


def notifiers() -> str:
    from watcher.delivery import NotifierConfig

    common = set(NotifierConfig.model_fields)
    parts = ["Every notifier takes these keys (`name` and `type` required; the filters apply "
             "before the notifier sees an event):", "", keys_table(NotifierConfig, set())]
    for entry in sorted(entry_points(group=GROUP), key=lambda entry: entry.name):
        config = entry.load().Config
        own = keys_table(config, common)
        parts += ["", f"`type = \"{entry.name}\"` ({entry.value}) adds:", "",
                  own if own.count("\n") > 1 else "nothing more."]
    return "\n".join(parts)


def defaults() -> str:
    return "```toml\n" + DEFAULTS.read_text().rstrip("\n") + "\n```"


def made() -> dict[str, str]:
    return {"defaults": defaults(), "notifiers": notifiers()}


def filled(page: str, parts: dict[str, str]) -> str:
    """``page`` with each part put between its markers."""
    for name, text in parts.items():
        begin, end = MARKERS[name]
        head, found, rest = page.partition(begin)
        if not found or end not in rest:
            raise SystemExit(f"{PAGE} has no {begin} ... {end}")
        page = head + begin + "\n" + text + "\n" + end + rest.split(end, 1)[1]
    return page


if __name__ == "__main__":
    parts = made()
    if "--write" in sys.argv[1:]:
        PAGE.write_text(filled(PAGE.read_text(), parts))
    else:
        print("\n\n".join(parts.values()))
