"""The environment a codebase declares, and whether a release's requirements touch it.

``files`` tells which files declare an environment (``pyproject.toml``, ``requirements*.txt``,
``setup.py``/``setup.cfg``, ``environment.yml``, Dockerfiles); ``index`` reads their
declarations (requires-python, package pins, CUDA base images and wheel indexes) with
``declarations`` and ``images``; ``match`` says whether a minimum Python, a dropped CUDA
version, a required or renamed package touches a declaration, read with ``packaging``.
``pins`` tells the version of a package the code is on from its pins and the lock files
``locks`` reads (``uv.lock``, ``poetry.lock``, ``Pipfile.lock``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher import lazy_exports

if TYPE_CHECKING:
    from watcher.impact.environment.files import environment_kind as environment_kind
    from watcher.impact.environment.index import index_environment as index_environment
    from watcher.impact.environment.index import is_environment_file as is_environment_file
    from watcher.impact.environment.match import Installs as Installs
    from watcher.impact.environment.match import admits_below as admits_below
    from watcher.impact.environment.match import admits_only_rejected as admits_only_rejected
    from watcher.impact.environment.match import admits_rejected as admits_rejected
    from watcher.impact.environment.match import touches as touches
    from watcher.impact.environment.pins import Pin as Pin
    from watcher.impact.environment.pins import PinDecision as PinDecision
    from watcher.impact.environment.pins import current_version as current_version
    from watcher.impact.environment.pins import find_pins as find_pins

_EXPORTS = {
    "environment_kind": "files",
    "index_environment": "index",
    "is_environment_file": "index",
    "Installs": "match",
    "admits_below": "match",
    "admits_only_rejected": "match",
    "admits_rejected": "match",
    "touches": "match",
    "Pin": "pins",
    "PinDecision": "pins",
    "current_version": "pins",
    "find_pins": "pins",
}
__all__ = sorted(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
