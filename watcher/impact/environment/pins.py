"""The version of a package a codebase is on, read from its own pins: the requirements,
``pyproject.toml``, ``setup.py``/``setup.cfg``, conda and Docker files the impact scan reads,
and the lock files beside them (``uv.lock``, ``poetry.lock``, ``Pipfile.lock``).

The rules, as a reader of those files would apply them:
  * an exact pin (``torch==2.5.1``, a lock file's entry) is the version; two exact pins that
    differ are a disagreement;
  * otherwise every range must hold at once (``torch>=2.5,<2.8`` in one file, ``torch>=2.4``
    in another): the version is the lowest release all of them admit (the oldest the code
    must still run on), and the decision says so;
  * a range that does not admit the exact version, or ranges no release satisfies together,
    are a disagreement too; a requirement with no lower bound (``torch``, ``torch<3``) says
    nothing of where the code is and is left out.
A disagreement is a ``ConfigError`` naming each pin: the caller's ``--from`` settles it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from watcher.errors import ConfigError
from watcher.impact.environment.declarations import exact_version
from watcher.impact.environment.files import environment_kind
from watcher.impact.environment.locks import LOCK_FILES, read_lock
from watcher.impact.model import Declaration, UnparsableError

__all__ = ["Pin", "PinDecision", "current_version", "find_pins"]

# conda names torch "pytorch"; on PyPI that name is an unrelated placeholder.
CONDA_NAMES = {"torch": "pytorch"}
_LOWER = frozenset({">=", ">", "==", "~=", "==="})
_SHOWN = 4  # pins named in a disagreement before "and N more"
_CODE_SHOWN = 60  # characters of a pin's line named


class Pin(NamedTuple):
    """A declaration of the package: where (``root``, the ``--code`` directory as written;
    ``path`` relative to it; ``line``) and what it admits (``specifier``)."""

    root: str
    path: str
    line: int
    code: str
    specifier: str

    @property
    def place(self) -> str:
        return f"{self.root.rstrip('/')}/{self.path}:{self.line}"

    @property
    def exact(self) -> Version | None:
        """The version of an exact pin (``==2.5.1``, not ``==2.5.*``)."""
        return exact_version(self.specifier)


class PinDecision(NamedTuple):
    version: Version
    pins: tuple[Pin, ...]  # the pins that decided (the exact ones, else every range)
    how: str  # one line: which pin decided and how


def find_pins(root: str, path: Path, declarations: Iterable[tuple[str, Declaration]],
              package: str) -> list[Pin]:
    """The pins of ``package`` among a codebase's scanned declarations (``CodeIndex.
    declarations``), and in the lock files at its root or beside a scanned environment file;
    a lock file that does not read is skipped (the pins beside it still count)."""
    wanted = canonicalize_name(package)
    conda = CONDA_NAMES.get(package)
    pins: list[Pin] = []
    folders = {""}
    for relative, declaration in declarations:
        folders.add(relative.rpartition("/")[0])
        name = declaration.name
        if declaration.kind == "package" and (name == wanted or (
                conda is not None and name == conda
                and environment_kind(relative) in ("conda", "conda-recipe", "shell",
                                                   "dockerfile"))):
            pins.append(Pin(root, relative, declaration.line, declaration.code,
                            declaration.specifier))
    for folder in sorted(folders):
        for lock in _locks_in(path / folder if folder else path):
            relative = f"{folder}/{lock.name}" if folder else lock.name
            try:
                found = read_lock(relative, lock.read_text(encoding="utf-8", errors="replace"))
            except (OSError, UnparsableError):
                continue
            pins += [Pin(root, relative, entry.line, entry.code, entry.specifier)
                     for entry in found if entry.name == wanted]
    return pins


def _locks_in(folder: Path) -> list[Path]:
    try:
        return sorted(entry for entry in folder.iterdir()
                      if entry.name.lower() in LOCK_FILES and entry.is_file())
    except OSError:
        return []


def current_version(pins: Sequence[Pin], releases: Sequence[Version], package: str
                    ) -> PinDecision:
    """The version the pins put the code on (see the module's rules); ``releases``: the
    package's known releases, for the lowest one a range admits."""
    if not any(_has_lower_bound(pin.specifier) for pin in pins):
        found = f" ({len(pins)} without a lower bound)" if pins else ""
        raise ConfigError(f"no pin of {package} with a version found in the code{found}; "
                          "pass --from VERSION (the version it is on)")
    limiting = [pin for pin in pins if pin.specifier]  # an upper bound alone still limits
    exact = [pin for pin in limiting if pin.exact is not None]
    versions = {pin.exact.public for pin in exact if pin.exact is not None}
    if len(versions) > 1:
        raise _disagreement(package, exact)
    if exact:
        version = Version(versions.pop())
        against = [pin for pin in limiting if pin.exact is None
                   and not _admits(pin.specifier, version)]
        if against:
            raise _disagreement(package, [exact[0], *against])
        more = f" ({len(exact) - 1} more agree)" if len(exact) > 1 else ""
        return PinDecision(version, tuple(exact),
                           f"{package} {version}, pinned at {exact[0].place}{more}")
    return _lowest_admitted(limiting, releases, package)


def _lowest_admitted(pins: list[Pin], releases: Sequence[Version], package: str
                     ) -> PinDecision:
    admitted = sorted(version for version in releases if not version.is_prerelease
                      and all(_admits(pin.specifier, version) for pin in pins))
    if not admitted:
        raise _disagreement(package, pins, "no release satisfies them all")
    version = admitted[0]
    ranges = "; ".join(_named(pin) for pin in pins[:_SHOWN])
    more = f" and {len(pins) - _SHOWN} more" if len(pins) > _SHOWN else ""
    return PinDecision(version, tuple(pins),
                       f"{package} {version}, the lowest release admitted by {ranges}{more}")


def _disagreement(package: str, pins: list[Pin], why: str = "they disagree") -> ConfigError:
    named = ", ".join(_named(pin) for pin in pins[:_SHOWN])
    more = f" and {len(pins) - _SHOWN} more" if len(pins) > _SHOWN else ""
    return ConfigError(f"the code pins {package} in several ways ({named}{more}): {why}; "
                       "pass --from VERSION (the version it is on)")


def _named(pin: Pin) -> str:
    """``torch>=2.5,<2.8 at code/requirements.txt:3``: the pin as written, where."""
    code = pin.code if len(pin.code) <= _CODE_SHOWN else pin.code[:_CODE_SHOWN - 1] + "…"
    return f"{code} at {pin.place}"


def _specifiers(text: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


def _has_lower_bound(text: str) -> bool:
    found = _specifiers(text)
    return found is not None and any(spec.operator in _LOWER for spec in found)


def _admits(text: str, version: Version) -> bool:
    found = _specifiers(text)
    return found is None or found.contains(version, prereleases=True)
