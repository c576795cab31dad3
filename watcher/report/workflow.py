"""The report as GitHub Actions workflow commands: one annotation a use,
``::error file=PATH,line=N,title=TITLE::WHY`` for ``breaks``, ``::warning`` for ``check``,
``::notice`` for a mention (with ``--all``). GitHub shows each on the pull request's diff and
in the run's summary.

Escaped as GitHub's toolkit does (``@actions/core``, ``command.ts``): in the message ``%``,
``\\r`` and ``\\n`` become ``%25``, ``%0D`` and ``%0A``; in a property ``:`` and ``,`` too
(``%3A``, ``%2C``). ``file`` is the path as GitHub resolves it: relative to the repository's
checkout (``$GITHUB_WORKSPACE``, else the working directory), whatever ``--code`` was given.
"""

from __future__ import annotations

import os
from pathlib import Path

from watcher.models import Affect, Tier
from watcher.present import KIND_NAMES
from watcher.report.found import Found, Scope, shown_uses

__all__ = ["escape_data", "escape_property", "workflow_commands"]

COMMANDS: dict[Tier, str] = {"breaks": "error", "check": "warning", "mentions": "notice"}
TITLE_LIMIT = 120  # characters of an item's first line a title keeps


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_commands(found: list[Found], scope: Scope, workspace: Path | None = None
                      ) -> list[str]:
    """One command a use (suppressed ones have none: they are accepted), in report order."""
    base = (workspace or Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())).resolve()
    lines = []
    for entry in found:
        first = entry.item.text.split("\n", 1)[0].strip()
        kind = KIND_NAMES.get(entry.item.kind, entry.item.kind)
        when = f" in {entry.release}" if entry.release else ""
        title = f"{kind}{when}: {first}"
        if len(title) > TITLE_LIMIT:
            title = title[:TITLE_LIMIT - 1] + "…"
        for use in shown_uses(entry, scope.show_all):
            lines.append(f"::{COMMANDS[use.tier]} file={escape_property(_file(use, scope, base))}"
                         f",line={use.line},title={escape_property(title)}::"
                         f"{escape_data(_message(use))}")
    return lines


def _message(use: Affect) -> str:
    why = use.why or f"uses {use.api}, which this change touches"
    return f"{why}\n{use.code.strip()}"


def _file(use: Affect, scope: Scope, base: Path) -> str:
    """The use's path from the checkout's root ("/"-separated); relative to its codebase when
    that lies outside the checkout (GitHub then shows the annotation in the run alone)."""
    root = scope.root_of(use)
    if root is None:
        return use.path
    path = root.path.resolve() / use.path
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return use.path
