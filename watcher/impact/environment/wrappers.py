"""Install commands a script wraps in a function of its own: ``run_pip_quiet() { pip install
"$@"; }`` (bash) or ``function Invoke-Pip { pip install @Args }`` (PowerShell), then
``run_pip_quiet torch --index-url .../cu128``. A call of such a function is the install it
wraps, so it is read as that command with the call's arguments.

Only a function that hands all its arguments on (``"$@"``, ``$*``, ``@Args``, ``$args``) is a
wrapper: one that installs a fixed list is read where its body is, as any other line.
"""

from __future__ import annotations

import re

__all__ = ["expand_wrappers", "installer_wrappers"]

# ``name() {``, ``function name {``, ``function name() {``, PowerShell ``function Verb-Noun {``
# and ``function Name($a) {``: the name a script calls the function by.
DEFINITION = re.compile(r"^\s*(?:function\s+([A-Za-z_][\w-]{0,60})\s*(?:\([^)]*\))?"
                        r"|([A-Za-z_][\w-]{0,60})\s*\(\s*\))\s*(?:\{|$)", re.IGNORECASE)
INSTALL = re.compile(r"\b(pip3?(?:\.\d+)?\s+install|(?:conda|mamba|micromamba)\s+install)\b"
                     r"[^;&|\n]*?(\"?\$[@*]\"?|@args\b|\$args\b)", re.IGNORECASE)
# Where a word is a command: a line's start, or after a separator or a shell keyword.
COMMAND_START = r"(^|[;&|({]\s*|\b(?:then|do|else)\s+)\s*"
BODY_LIMIT = 200  # lines read for one function's body; a longer one is not a small wrapper


def installer_wrappers(lines: list[str]) -> dict[str, str]:
    """Each wrapping function's name (lower-cased) -> the install command it runs."""
    wrappers: dict[str, str] = {}
    for start, text in enumerate(lines):
        definition = DEFINITION.match(text)
        if definition is None:
            continue
        name = definition[1] or definition[2]
        for line in body(lines, start):
            install = INSTALL.search(line)
            if install is not None:
                wrappers[name.lower()] = " ".join(install[1].split())
                break
    return wrappers


def body(lines: list[str], start: int) -> list[str]:
    """The lines of the function defined at ``start``, up to its closing brace."""
    depth, opened, found = 0, False, []
    for text in lines[start:start + BODY_LIMIT]:
        found.append(text)
        depth += text.count("{") - text.count("}")
        opened = opened or "{" in text
        if opened and depth <= 0:
            break
    return found


def expand_wrappers(text: str, wrappers: dict[str, str]) -> str:
    """``text`` with each call of a wrapper written as the install it wraps."""
    if not wrappers:
        return text
    names = "|".join(re.escape(name) for name in sorted(wrappers, key=len, reverse=True))
    pattern = re.compile(COMMAND_START + r"(" + names + r")(?=\s)", re.IGNORECASE)
    return pattern.sub(lambda m: m[1] + wrappers[m[2].lower()], text)
