"""The C++ ABI a build forces: ``-D_GLIBCXX_USE_CXX11_ABI=0`` in a CMake file, a ``setup.py``'s
compile arguments, a build script or a Dockerfile. An extension compiled with the old ABI
against torch wheels built with the C++11 one (from 2.7) links, then fails on every
``std::string`` it passes across.

Read as text, line by line, comments left out: the flag is written the same way in all of
them, and the line that forces it is where a reader fixes it (a CMake ``if``/``else`` choosing
between ``=1`` and ``=0`` shows both lines; the ``=0`` one is the build's default).
"""

from __future__ import annotations

import re

from watcher.impact.model import Declaration

__all__ = ["abi_flags"]

OLD_ABI = re.compile(r"_GLIBCXX_USE_CXX11_ABI\s*(?:=|\s)\s*[\"']?(?:0|OFF|FALSE)\b", re.I)
COMMENT = re.compile(r"^\s*(?:#|//)")


def abi_flags(lines: list[str]) -> list[Declaration]:
    return [Declaration(line=number, code=line.strip()[:200], kind="abi", version="0")
            for number, line in enumerate(lines, 1)
            if "CXX11_ABI" in line and not COMMENT.match(line) and OLD_ABI.search(line)]
