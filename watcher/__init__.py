"""release-watch: what changed in PyTorch and PyTorch/XLA releases, by subsystem.

The package tree is the architecture: ``github`` fetches, ``plan`` decides what a listing means,
``notes`` parses, diffs and classifies, ``impact`` finds what a change touches in a codebase,
``delivery`` builds events, routes and delivers them, ``store`` remembers, ``daemon`` schedules,
``present`` words things for people and ``cli`` is the command line. Each package's
``__init__`` names what the rest of the code may import from it.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

__version__ = "0.1.0"


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], object]:
    """A package's module ``__getattr__`` (PEP 562) for its public names, ``{name: module}``.

    Each name is imported from its module on first use, so importing a package costs nothing
    until a name is used: ``status --check`` and ``--help`` stay light, and a console-only poll
    never imports slack_sdk because ``handlers.slack`` exists.
    """

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{module}"), name)

    return __getattr__
