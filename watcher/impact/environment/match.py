"""Whether an environment requirement of a release touches one declaration of a codebase:
a ``requires-python`` that still admits a dropped Python, a pin or base image of a dropped
CUDA, a pin that admits a version the release no longer works with, a pin of a renamed
package, torch installed from a conda channel that gets no more builds. Specifiers are
evaluated with ``packaging``; what does not parse touches nothing."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from watcher.impact.environment.declarations import TORCH_FAMILY, channel_family
from watcher.impact.environment.files import environment_kind
from watcher.impact.model import Declaration, EnvironmentSubject

__all__ = ["Installs", "admits_only_rejected", "touches"]


# Files that declare which Python a package supports; any other file that names a Python
# version installs or runs one (a Dockerfile, a conda environment, a CI matrix, a script).
METADATA = frozenset({"pyproject.toml", "setup.py", "setup.cfg", "meta.yaml", "meta.yml"})
RELEASE_TAG = re.compile(r"v?(\d+(?:\.\d+)*)")
PACKAGE_FILES = ("pyproject.toml", "setup.py", "setup.cfg")  # what ``pip install DIR`` reads


def touches(subject: EnvironmentSubject, declaration: Declaration, path: str = "",
            release: str | None = None) -> bool:
    """``path``: the declaring file, relative; an installer there is touched only where it
    cannot get a newer Python (``conda install python=3`` installs the newest 3.x).
    ``release``: the tag of the release requiring it; an environment pinned to an older torch
    runs that torch, with what it declares beside it, and asks nothing of the release."""
    if declaration.torch and release and older(declaration.torch, release):
        return False
    if subject.kind != "python" and declaration.python_holds_torch and release and \
            older(declaration.python_holds_torch, release):
        return False
    if subject.kind == "python" and path and not declares_support(path) and \
            declaration.kind == "python" and admits_supported(declaration.specifier,
                                                              subject.minimum):
        return False
    if subject.kind == "abi":
        return declaration.kind == "abi" and declaration.version == "0"
    if subject.kind in ("cuda", "gpu_arch"):
        # A build of torch is dropped: a CUDA toolkit image is no build of torch (the wheel
        # installed on it, from the index its install names, is declared on its own).
        removed = subject.removed
        return declaration.kind == "cuda" and not declaration.toolkit and bool(removed) and (
            declaration.version == removed or declaration.version.startswith(removed + "."))
    if subject.kind == "python":
        return declaration.kind == "python" and admits_below(declaration.specifier,
                                                             subject.minimum)
    if subject.kind == "channel":
        # A pin of a release the channel still has asks for nothing new from it.
        return declaration.kind == "channel" and channel_family(declaration.name) == \
            channel_family(subject.name) and (
            not declaration.specifier or admits_newest(declaration.specifier))
    if declaration.kind != "package" or canonicalize_name(subject.name) != declaration.name:
        return False
    if subject.kind == "renamed_package":
        return True
    # An unpinned dependency resolves to the newest release, which meets the requirement.
    return bool(declaration.specifier) and admits_rejected(declaration.specifier,
                                                          subject.specifier)


Reach = Literal["sure", "maybe", "none"]


@dataclass(frozen=True)
class Installs:
    """What a codebase's environment files install, read once for every declaration an
    item touches: whether the environment of each gets torch, and the GPUs each builds for."""

    named: frozenset[str]  # the files that install torch (``torch_files``)
    known: frozenset[str]  # the files that declare anything
    targets: dict[str, tuple[str, ...]]  # each file's ``TORCH_CUDA_ARCH_LIST`` values
    torch_code: frozenset[str] = frozenset()  # the Python files that use torch

    @classmethod
    def of(cls, declarations: list[tuple[str, Declaration]],
           torch_code: Iterable[str] = ()) -> Installs:
        targets: dict[str, tuple[str, ...]] = {}
        for path, declaration in declarations:
            if declaration.kind == "gpu_targets":
                targets[path] = (*targets.get(path, ()), declaration.version)
        return cls(named=torch_files(declarations),
                   known=frozenset(path for path, _ in declarations), targets=targets,
                   torch_code=frozenset(torch_code))

    def package_without_torch(self, path: str) -> bool:
        """Whether ``path`` is the metadata of a package in a folder of its own (a client
        beside the server: ``clients/python/pyproject.toml``) that neither requires torch nor
        holds code using it: whatever Python it admits, torch's floor is not its."""
        folder, _, name = path.rpartition("/")
        return bool(folder) and name in PACKAGE_FILES and path not in self.named and not any(
            code.startswith(folder + "/") for code in self.torch_code)

    def torch_reach(self, declaration: Declaration, path: str) -> Reach:
        """Whether the environment declaring ``declaration`` (in ``path``) gets torch:
        ``sure`` by name or through a file that names it; ``maybe`` through what the codebase
        does not show (a requirements file or package it does not hold, a lock file, a
        package requiring torch); ``none`` where everything it installs is known and torch is
        not among it."""
        if not declaration.torch_unseen:
            return "sure"
        reach: Reach = "none"
        for written in declaration.installs_from:
            if installs(path, written, self.named):
                return "sure"
            if not installs(path, written, self.known):
                reach = "maybe"
        return reach

    def builds_only_for_others(self, path: str, archs: str) -> bool:
        """Whether ``path`` sets a ``TORCH_CUDA_ARCH_LIST`` and none of its values names a
        capability of ``archs`` ("Maxwell/Pascal/Volta" against "9.0 10.0": yes)."""
        listed = self.targets.get(path)
        return listed is not None and not any(builds_for(archs, value) for value in listed)


def torch_files(declarations: list[tuple[str, Declaration]]) -> frozenset[str]:
    """The files that install torch: naming it or a torch-family package, or including
    (``-r``) a file that does, read beside the including file as pip reads it."""
    named = {path for path, declaration in declarations
             if declaration.kind == "package" and declaration.name in TORCH_FAMILY}
    includes: dict[str, list[str]] = {}
    for path, declaration in declarations:
        if declaration.kind == "requirements":
            includes.setdefault(path, []).append(declaration.name)
    grown = True
    while grown:  # an include of an include: until no file is added
        grown = False
        for path, written in includes.items():
            if path not in named and any(installs(path, each, named) for each in written):
                named.add(path)
                grown = True
    return frozenset(named)


# The compute capabilities of each GPU architecture the notes name.
ARCH_CAPABILITIES = {"Kepler": ("3.",), "Maxwell": ("5.",), "Pascal": ("6.",),
                     "Volta": ("7.0", "7.2"), "Turing": ("7.5",)}


def builds_for(archs: str, listed: str) -> bool:
    """Whether a ``TORCH_CUDA_ARCH_LIST`` value names a capability of one of ``archs``
    ("Maxwell/Pascal/Volta" against "6.0;7.0+PTX": yes; against "9.0 10.0": no)."""
    capabilities = re.findall(r"\d{1,2}\.\d", listed)
    prefixes = [prefix for arch in archs.split("/") for prefix in ARCH_CAPABILITIES.get(arch, ())]
    return any(capability.startswith(prefix) for capability in capabilities
               for prefix in prefixes)


def installs(path: str, written: str, named: Iterable[str]) -> bool:
    """Whether the requirements file or package folder ``written`` in ``path`` is one of
    ``named`` (a folder by its ``pyproject.toml``, ``setup.py`` or ``setup.cfg``): looked for
    beside ``path`` and from the codebase's root, where a Docker build usually starts; an
    absolute path inside an image (``/app/requirements.txt``) by its last part."""
    relative = posixpath.basename(written.rstrip("/")) if written.startswith("/") else written
    for base in (posixpath.dirname(path), ""):
        target = posixpath.normpath(posixpath.join(base, relative))
        if any(candidate in named for candidate in (target, *(
                posixpath.normpath(posixpath.join(target, name)) for name in PACKAGE_FILES))):
            return True
    return False


def declares_support(path: str) -> bool:
    """A file whose Python says which ones the code supports: package metadata, and a conda
    environment file (``python>=3.7`` there is the floor its users are told to install at, as
    the judges of CrypTen's and graphium's ``env.yml`` read it); not an installer that takes
    the newest Python it admits (``FROM python:3``, ``conda install python=3``)."""
    return path.rpartition("/")[2] in METADATA or environment_kind(path) == "conda"


def older(pinned: str, release: str) -> bool:
    """Whether torch ``pinned`` ("2.6.0", or a series, "1.13.*") comes before the release
    tagged ``release`` ("v2.7.0", "v2.6.0-torch-load"): every release of a series does where
    the series is below the release's own (1.13 below 2.5; 2.7 is not below 2.7.1). False
    where either is no version."""
    found = RELEASE_TAG.match(release)
    series = pinned.endswith(".*")
    before = version(pinned.removesuffix(".*"))
    after = version(found.group(1)) if found else None
    if before is None or after is None:
        return False
    if series:
        return before.release < after.release[:len(before.release)]
    return before < after


def admits_newest(specifier: str) -> bool:
    """Whether ``specifier`` admits releases yet to come (">=2.3": yes; "==2.1.*", "<2.6": no)."""
    allowed = specifier_set(specifier)
    return allowed is not None and allowed.contains(Version("999"), prereleases=True)


def admits_supported(specifier: str, minimum: str) -> bool:
    """Whether ``specifier`` admits a Python at or above ``minimum`` ("==3.*" for 3.10: yes;
    "==3.9.*": no), so what installs by it can get one the release supports."""
    allowed, floor = specifier_set(specifier), version(minimum)
    if allowed is None or floor is None or len(floor.release) < 2:
        return False
    major, minor = floor.release[0], floor.release[1]
    return any(allowed.contains(Version(f"{major}.{minor + step}{patch}"), prereleases=True)
               for step in range(40) for patch in ("", ".99"))


def admits_below(specifier: str, minimum: str) -> bool:
    """Whether ``specifier`` admits a Python older than ``minimum`` (">=3.9" for 3.10: yes)."""
    allowed, floor = specifier_set(specifier), version(minimum)
    if allowed is None or floor is None or not floor.release:
        return False
    major = floor.release[0]
    minors = range(floor.release[1] if len(floor.release) > 1 else 0)
    older = [Version(f"{major}.{minor}{patch}") for minor in minors for patch in ("", ".99")]
    return any(allowed.contains(candidate, prereleases=True) for candidate in older)


def admits_rejected(pinned: str, required: str) -> bool:
    """Whether ``pinned`` admits a version that ``required`` rejects ("==0.2.0" or ">=0.1"
    against ">=0.3.1": yes; ">=0.4": no). Tried on the versions both name and their
    neighbours, which is where two specifier sets can differ."""
    allowed, needed = specifier_set(pinned), specifier_set(required)
    if allowed is None or needed is None:
        return False
    candidates = {Version("0")}
    for spec in (*allowed, *needed):
        base = version(spec.version.removesuffix(".*"))
        if base is not None:
            candidates |= neighbours(base)
    return any(allowed.contains(candidate, prereleases=False)
               and not needed.contains(candidate, prereleases=False)
               for candidate in candidates)


def admits_only_rejected(pinned: str, required: str) -> bool:
    """Whether every version ``pinned`` admits is one ``required`` rejects ("==0.2.0" or
    "<0.3" against ">=0.3.1": yes; ">=0.2.4,<0.6.1": no, pip picks a newer one it admits).
    Tried on the versions both name, their neighbours and one past them all."""
    allowed, needed = specifier_set(pinned), specifier_set(required)
    if allowed is None or needed is None:
        return False
    candidates = {Version("0"), Version("999")}
    for spec in (*allowed, *needed):
        base = version(spec.version.removesuffix(".*"))
        if base is not None:
            candidates |= neighbours(base) | {Version(f"{base}.1"), Version(f"{base}.99")}
    return not any(allowed.contains(candidate, prereleases=False)
                   and needed.contains(candidate, prereleases=False)
                   for candidate in candidates)


def neighbours(base: Version) -> set[Version]:
    """The version, and one step up and down at each position: 0.3.1 -> 0.3.1, 1, 0.4, 0.2,
    0.3.2, 0.3.0."""
    found = {base}
    release = base.release
    for position, part in enumerate(release):
        for step in (-1, 1):
            if part + step >= 0:
                found.add(Version(".".join(map(str, (*release[:position], part + step)))))
    return found


def specifier_set(text: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


def version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None
