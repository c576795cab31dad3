"""Whether a codebase writes a word anywhere: in its code, its strings, its configs, its docs.

Asked of an option the code itself never passes by name: a ``**kwargs`` forward can only carry
it where something spells it, a dict key, a YAML key, a command-line flag. A plain byte search
over every text file, read only when asked; a file too big to be hand-written is not read.
"""

from __future__ import annotations

import re

from watcher.impact.code.tree import MAX_BYTES, walk

__all__ = ["spelled_in_tree"]

# Files a person writes options in: code, configs, notebooks, scripts, docs.
TEXT_SUFFIXES = (".py", ".pyi", ".ipynb", ".yaml", ".yml", ".json", ".jsonnet", ".toml",
                 ".cfg", ".ini", ".conf", ".txt", ".md", ".rst", ".sh", ".gin", ".env")


def spelled_in_tree(root: str, word: str) -> bool:
    """Whether a text file under ``root`` holds ``word`` between non-word characters; True
    when ``root`` cannot be listed (nothing is known, so anything may be written)."""
    pattern = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(word.encode()) + rb"(?![A-Za-z0-9_])")
    needle = word.encode()
    try:
        for _, entry in walk(root, [], keep=lambda path: path.endswith(TEXT_SUFFIXES)):
            try:
                if entry.stat().st_size > MAX_BYTES:
                    continue
                with open(entry.path, "rb") as handle:
                    content = handle.read()
            except OSError:
                continue
            if needle in content and pattern.search(content):
                return True
    except OSError:
        return True
    return False
