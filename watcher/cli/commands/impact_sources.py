"""Where the offline ``impact`` finds what it needs beyond the notes: whose release the notes
are (pytorch/pytorch or pytorch/xla, read from the notes themselves), and the atlases the
configured store keeps, read without writing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from watcher.config import Config

if TYPE_CHECKING:
    from watcher.impact.atlas import Shelf

__all__ = ["DEFAULT_REPO", "XLA_REPO", "first_heading", "repo_of", "stored_atlases"]

DEFAULT_REPO = "pytorch/pytorch"
XLA_REPO = "pytorch/xla"
OPENING = 2_000  # characters of prose before the first heading read for whose notes they are
XLA_HEADING = re.compile(r"pytorch\s*/\s*xla|torch[_-]xla", re.IGNORECASE)
HEADING = re.compile(r"^#{1,6}\s+(.*)$", re.MULTILINE)


def first_heading(body: str) -> str:
    match = HEADING.search(body)
    return match.group(1) if match else ""


def repo_of(body: str) -> str:
    """Whose notes these are: pytorch/xla where the first heading names PyTorch/XLA (or
    torch_xla), or where there is none naming PyTorch and the opening prose does ("Cloud TPUs
    now support the PyTorch 2.0 release, via PyTorch/XLA integration"); else pytorch/pytorch."""
    heading = first_heading(body)
    if XLA_HEADING.search(heading):
        return XLA_REPO
    first = HEADING.search(body)
    opening = body[:first.start()] if first is not None else body
    if "pytorch" not in heading.lower() and XLA_HEADING.search(opening[:OPENING]):
        return XLA_REPO
    return DEFAULT_REPO


@contextmanager
def stored_atlases(config: Config) -> Iterator[Shelf | None]:
    """The atlases the store keeps (a poll's, an ``atlas build``'s), read only; None where
    there is no store yet."""
    from watcher.store import atlases_read_only

    with atlases_read_only(config.store_path(), config.store_url()) as shelf:
        yield shelf
