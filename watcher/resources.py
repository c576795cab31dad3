"""Finds the data files shipped with the package (default config, subsystem rules).

In a wheel they are inside the package (``watcher/_defaults``); in a source checkout or an
editable install they are the repository's top-level ``config/`` folder.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def defaults_dir() -> Path:
    packaged = Path(__file__).resolve().parent / "_defaults"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "config"


def default_config_path() -> Path:
    return defaults_dir() / "default.toml"


def subsystems_path() -> Path:
    return defaults_dir() / "subsystems.toml"


def kinds_path() -> Path:
    return defaults_dir() / "kinds.toml"


def apis_path() -> Path:
    return defaults_dir() / "apis.toml"


def short_names_path() -> Path:
    return defaults_dir() / "atlases" / "names.json"
