"""The environment of a container or conda build: the base images of a Dockerfile (``FROM
nvidia/cuda:12.1.0-...``, ``pytorch/pytorch:2.1.0-cuda12.1-...``, ``python:3.9``) with the pip
and conda installs of its ``RUN`` lines, and the dependencies of a conda ``environment.yml``.

Read line by line, without a YAML library: a conda file's dependencies are a plain list, and
the project does not depend on one at run time.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from watcher.impact.environment.declarations import (
    COMPANIONS,
    TORCH_FAMILY,
    TORCH_NAMES,
    channel_family,
    conda_spec,
    cuda,
    cuda_in,
    exact_version,
    local_package,
    may_bring_torch,
    python,
    requirement,
    requirement_files,
    requirement_lines,
    uncommented,
    yaml_lines,
)
from watcher.impact.environment.wrappers import expand_wrappers, installer_wrappers
from watcher.impact.model import Declaration

__all__ = ["conda_environment", "dockerfile", "pinned_to", "shell_script", "torch_unseen"]

VARIABLE = re.compile(r"\$\{(\w+)(?::?[-+]([^}]*))?\}|\$(\w+)")
TORCH_IMAGE = re.compile(r"(?:^|[-_.])pytorch(?:$|[-_.])")
CPYTHON_TAG = re.compile(r"\bcp(3)(\d{1,2})(?=[-_*\s\"']|$)")
# A tag naming the torch an image holds: ``torch2.6``, ``torch-2.6.0``, ``pytorch2.1``.
TORCH_TAG = re.compile(r"(?:^|[-_.])(?:py)?torch-?v?\d+\.\d+")
TAG_CU = re.compile(r"(?:^|[-_.])cu(\d{2,3})(?:$|[-_.])")
RELEASE = re.compile(r"^(\d+)\.(\d+)")
# Each release series of torch and of its companions, with the torch series it requires,
# oldest first; the last entry stands for every later release (a bound above it bounds
# nothing known).
TORCH_RELEASES = [(series, series) for series in (
    *(f"1.{minor}" for minor in range(14)), *(f"2.{minor}" for minor in range(60)))]
COMPANION_RELEASES: dict[str, list[tuple[str, str]]] = {
    "torchvision": [*((f"0.{minor}", f"1.{minor - 1}") for minor in range(2, 15)),
                    *((f"0.{minor}", f"2.{minor - 15}") for minor in range(15, 60))],
    "torchaudio": [*((f"0.{minor}", f"1.{minor}") for minor in range(4, 14)),
                   *((f"2.{minor}", f"2.{minor}") for minor in range(0, 45))],
}
# The last torch series with wheels for a Python (PyPI's and conda's files: 1.5 dropped 3.5,
# 1.11 3.6, 2.0 3.7, 2.5 3.8, 2.9 3.9): an environment pinned to that Python, with no torch
# pin, runs that torch at most.
LAST_TORCH_FOR_PYTHON = {"==3.5.*": "1.4", "==3.6.*": "1.10", "==3.7.*": "1.13",
                         "==3.8.*": "2.4", "==3.9.*": "2.8"}
# Anaconda's own channels, which conda's default configuration lists first
ANACONDA_CHANNELS = frozenset({"defaults", "anaconda", "main", "r", "msys2"})
# A pin of one series of torch (conda's ``=1.13``, pip's ``==1.13.*``)
SERIES = re.compile(r"===?(\d+(?:\.\d+){1,2})\.\*")
# NVIDIA's NGC framework images are tagged by month (``nvcr.io/nvidia/tritonserver:23.01-py3``);
# the month fixes the Ubuntu they are built on and so their Python (NVIDIA's release notes:
# Ubuntu 18.04 and Python 3.6 through 2020, moving to 20.04 and 3.8 late that year; 20.04 and
# 3.8 from 21.01 to 23.03; 22.04 and 3.10 from 23.04; 24.04 and 3.12 from 25.01).
NGC_FRAMEWORKS = frozenset({"pytorch", "tensorflow", "tritonserver", "mxnet", "nemo", "dgl",
                            "pyg"})
NGC_TAG = re.compile(r"^(\d{2})\.(\d{2})(?=[-.]|$)")
NGC_PYTHON = ((2012, ">=3.6,<3.9"), (2303, "==3.8.*"), (2412, "==3.10.*"), (9912, "==3.12.*"))
# Installers whose packages the line does not name: a script, a lock file, an environment
# file (``conda env create -f environment.yml``), a wheel build of the project: each may
# bring torch.
OTHER_INSTALL = re.compile(
    r"\b(?:poetry|pipenv|pdm|hatch)\s+install\b|\buv\s+(?:sync|pip\s+sync)\b|\bcibuildwheel\b"
    r"|\bsetup\.py\s+(?:install|develop)\b|\b(?:conda|mamba|micromamba)\s+env\s+(?:create|update)"
    r"(?:[^;&|]*?(?:-f|--file)(?:\s+|=)(\S+))?|(?:\b(?:bash|sh|source)\s+|(?:^|[;&|])\s*\./)"
    r"([\w./\-]+\.sh)\b")
# The GPUs a build targets: ``TORCH_CUDA_ARCH_LIST="9.0 10.0"`` (ENV, ARG, export, inline).
ARCH_LIST = re.compile(r"\bTORCH_CUDA_ARCH_LIST(?:\s*=\s*|\s+)([\"']?)([0-9.;, +PTXptx]{1,80}?)\1"
                       r"(?=\s|$|[;&|])")
PIP = re.compile(r"\bpip3?(?:\.\d+)?\s+install\s+([^;&|]*)")
CONDA = re.compile(r"\b(?:conda|mamba|micromamba)\s+install\s+([^;&|]*)")
CHANNEL_OPTION = re.compile(r"(?:^|\s)(?:-c|--channel)(?:\s+|=)([\w.\-/:]{1,100})")
# The torch package of conda, by its channel or not: "pytorch", "pytorch::pytorch=2.1" (not
# "pytorch-cuda", the CUDA it wants, nor "pytorch::torchvision").
TORCH_SPEC = re.compile(r"^(?:([\w.\-]{1,60})::)?pytorch(?![\w:-])")
# The packages built with torch on its channel, each depending on that channel's torch.
COMPANION_SPEC = re.compile(rf"^(?:{'|'.join(sorted(COMPANIONS))})(?![\w:-])")
# Options of pip and conda install that take a value as the next word.
VALUED = frozenset({"-r", "-c", "-e", "-i", "-f", "-t", "-n", "-p", "--requirement",
                    "--constraint", "--editable", "--index-url", "--extra-index-url",
                    "--find-links", "--target", "--prefix", "--root", "--trusted-host",
                    "--platform", "--python-version", "--only-binary", "--no-binary",
                    "--channel", "--name", "--timeout", "--retries", "--cache-dir"})


def shell_script(lines: list[str]) -> list[Declaration]:
    """What a setup script's ``pip install`` and ``conda install`` lines name (comments
    left out), also through a function of the script that wraps one (``wrappers``)."""
    found: list[Declaration] = []
    bare = [uncommented(line) for line in lines]
    wrappers = installer_wrappers(bare)
    for number, text in instructions(bare):
        found += run_line(number, lines[number - 1], expand_wrappers(text, wrappers))
        found += wheel_builds(number, lines[number - 1], text)
        found += gpu_targets(number, lines[number - 1], text)
    return found


def gpu_targets(number: int, code: str, text: str) -> list[Declaration]:
    """The compute capabilities a ``TORCH_CUDA_ARCH_LIST`` setting builds for."""
    return [Declaration(line=number, code=code.strip()[:200], kind="gpu_targets",
                        version=match[2].strip()) for match in ARCH_LIST.finditer(text)
            if match[2].strip()]


def wheel_builds(number: int, code: str, text: str) -> list[Declaration]:
    """The CPythons a cibuildwheel build selector builds for (``CIBW_BUILD=cp39-manylinux*``,
    also as a default, ``${CIBW_BUILD:-"cp39-..."}``): each is a Python the wheels install on."""
    if "CIBW_BUILD" not in text:
        return []
    return [python(number, code, f"=={major}.{minor}.*")
            for major, minor in CPYTHON_TAG.findall(text.partition("CIBW_BUILD")[2])]


def dockerfile(lines: list[str]) -> list[Declaration]:
    """Each build stage's base image and installs; a stage built on an image that brings its
    own torch and installs no other declares nothing (``torch_pinned``)."""
    variables: dict[str, str] = {}
    found: list[Declaration] = []
    stage: list[Declaration] = []
    pinned = False
    for number, text in instructions(lines):
        word, _, rest = text.strip().partition(" ")
        word = word.upper()
        code = lines[number - 1]
        if word in ("ARG", "ENV"):
            variables.update(assignments(rest))
        elif word == "FROM":
            found += torch_unseen(torch_pinned(stage, pinned))
            image = substitute(rest, variables)
            stage, pinned = base_image(number, code, image), brings_torch(image)
        elif word == "RUN":
            stage += run_line(number, code, substitute(rest, variables))
        if word in ("ENV", "RUN"):
            stage += wheel_builds(number, code, rest)
        if word in ("ARG", "ENV", "RUN"):
            stage += gpu_targets(number, code, rest)
    return found + torch_unseen(torch_pinned(stage, pinned))


def brings_torch(rest: str) -> bool:
    """``pytorch/pytorch:2.1.0-cuda12.1``, ``nvcr.io/nvidia/pytorch:24.01-py3``,
    ``rocm/pytorch``: an image whose repository is torch's comes with a torch installed; so
    does one whose tag names the torch it was built with (``base-cu124-torch2.6-fa2.7``)."""
    words = [word for word in rest.split() if not word.startswith("--")]
    if not words:
        return False
    repository, tag = image_parts(words[0])
    return TORCH_IMAGE.search(repository.rpartition("/")[2]) is not None or \
        TORCH_TAG.search(tag) is not None


def image_parts(image: str) -> tuple[str, str]:
    """(repository, tag) of ``registry:5000/org/name:tag@sha256:...``."""
    image = image.split("@")[0]
    slash, colon = image.rfind("/"), image.rfind(":")
    return (image[:colon], image[colon + 1:]) if colon > slash else (image, "")


def torch_pinned(stage: list[Declaration], pinned: bool) -> list[Declaration]:
    """A stage's declarations, none where its base image pins torch: the stage runs that
    image's torch, with the Python, CUDA and dependencies chosen for it, until the image is
    changed, so no later release's requirement reaches what it declares. A stage that installs
    torch itself (from PyPI or a conda channel) runs that torch instead, and where it pins one
    release (``torch==2.6.0``) its declarations are of that release's environment."""
    installs_torch = any(d.kind == "channel" or (d.kind == "package" and d.name == "torch")
                         for d in stage)
    return [] if pinned and not installs_torch else pinned_to(stage)


def torch_unseen(declarations: list[Declaration]) -> list[Declaration]:
    """One environment's declarations, its Python and CUDA marked ``torch_unseen`` where it
    installs no torch by name (no torch-family package, no conda channel of torch's), with
    what may still bring torch (``installs_from``): the requirements files, local packages
    and other installers it runs, and the packages it names that require torch. A
    ``python:3.8`` image that pip installs only ``soundfile`` never gets torch, so a release
    dropping 3.8 does not reach it."""
    if any(d.kind == "channel" or (d.kind == "package" and d.name in TORCH_FAMILY)
           for d in declarations):
        return declarations
    sources = [d.name for d in declarations if d.kind == "requirements"]
    sources += [f"package {d.name}" for d in declarations
                if d.kind == "package" and may_bring_torch(d.name)]
    return [d.model_copy(update={"torch_unseen": True,
                                 "installs_from": tuple(dict.fromkeys(sources))})
            if d.kind in ("python", "cuda") else d for d in declarations]


def pinned_to(declarations: list[Declaration]) -> list[Declaration]:
    """``declarations`` marked with the one torch release they pin exactly, if they do: the
    release (its local label dropped: ``==2.6.0+cu124`` pins 2.6.0), or one series of them,
    as conda pins (``pytorch=1.13.1`` is any build of 1.13.1, ``pytorch-cpu=1.13`` any 1.13);
    else the newest series every torch requirement's upper bound admits."""
    releases = {pinned for d in declarations if d.kind == "package" and d.name in TORCH_NAMES
                and (pinned := torch_pin(d.specifier))}
    if not releases and held_below(declarations):  # ``torch>=2.1,<2.9``: 2.8 at most
        releases = {max((torch_bound(d.specifier) for d in declarations
                         if d.kind == "package" and d.name in TORCH_NAMES), key=series_key)}
    if not releases:  # a companion held below a release holds torch below its own
        releases = {bound for d in declarations if d.kind == "package"
                    and (bound := companion_bound(d.name, d.specifier))}
        releases = {min(releases, key=series_key)} if releases else set()
    if len(releases) == 1:
        release = releases.pop()
        return [d.model_copy(update={"torch": release}) for d in declarations]
    if releases:
        return declarations
    held = {last for d in declarations if d.kind == "python"
            and (last := last_torch_for(d.specifier))}
    if len(held) != 1:
        return declarations
    series = f"{held.pop()}.*"
    return [d.model_copy(update={"python_holds_torch": series}) for d in declarations]


@lru_cache(maxsize=256)
def last_torch_for(specifier: str) -> str:
    """The last torch series with wheels for the newest Python 3 a specifier admits
    (``==3.8.*``, ``>=3.6,<=3.8``, ``<3.9``: "2.4"); "" where it admits a Python torch still
    builds for, has no upper bound, or cannot be read."""
    try:
        allowed = SpecifierSet(specifier)
    except InvalidSpecifier:
        return ""
    newest = max((minor for minor in range(5, 20)
                  if any(allowed.contains(f"3.{minor}{patch}", prereleases=True)
                         for patch in ("", ".0", ".99"))), default=None)
    return "" if newest is None else LAST_TORCH_FOR_PYTHON.get(f"==3.{newest}.*", "")


def torch_pin(specifier: str) -> str:
    """The release (``2.6.0``) or series (``1.13.*``) a torch specifier pins, else ""."""
    exact = exact_version(specifier)
    if exact is not None:
        return exact.public
    series = SERIES.fullmatch(specifier.replace(" ", ""))
    return f"{series[1]}.*" if series else ""


def held_below(declarations: list[Declaration]) -> bool:
    """Whether the file requires torch and every torch requirement it makes (its extras' and
    groups' too) is bounded above: no environment it sets up gets a newer torch."""
    torch = [d for d in declarations if d.kind == "package" and d.name in TORCH_NAMES]
    return bool(torch) and all(torch_bound(d.specifier) for d in torch)


@lru_cache(maxsize=256)  # a file's extras repeat their torch requirement
def torch_bound(specifier: str) -> str:
    """The newest torch series a specifier with an upper bound admits (``>=2.1,<2.9``:
    "2.8.*"; ``<=2.5.1``: "2.5.*"); "" for none admitted, or no bound."""
    return newest_admitted(specifier, TORCH_RELEASES) if "<" in specifier else ""


def companion_bound(name: str, specifier: str) -> str:
    """The torch series a companion's upper bound holds torch to: each torchvision and
    torchaudio release requires one torch release (torchvision 0.9 is torch 1.8's, 0.15 is
    2.0's; torchaudio 0.13 is 1.13's, 2.1 is 2.1's), so ``torchvision<0.10.0`` installs torch
    1.8 at most ("1.8.*"); "" for none, or no upper bound."""
    mapping = COMPANION_RELEASES.get(name)
    return newest_admitted(specifier, mapping) if mapping is not None and specifier else ""


def newest_admitted(specifier: str, releases: list[tuple[str, str]]) -> str:
    """The torch series (``"2.8.*"``) of the newest of ``releases`` (a package's series and the
    torch series it requires) that ``specifier`` admits; "" where it admits none, or the newest
    known too (no bound)."""
    try:
        admitted = SpecifierSet(specifier)
    except InvalidSpecifier:
        return ""
    found = [torch for series, torch in releases
             if any(admitted.contains(f"{series}.{patch}", prereleases=True)
                    for patch in range(10))]
    if not found or found[-1] == releases[-1][1]:
        return ""
    return f"{found[-1]}.*"


def series_key(series: str) -> tuple[int, ...]:
    return tuple(int(part) for part in series.removesuffix(".*").split("."))


def instructions(lines: list[str]) -> list[tuple[int, str]]:
    """Each instruction with the line it starts on, ``\\`` continuations joined."""
    joined: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, text in enumerate(lines, 1):
        if not pending:
            start = number
            if text.lstrip().startswith("#"):
                continue
        if text.rstrip().endswith("\\"):
            pending += text.rstrip()[:-1] + " "
            continue
        if (pending + text).strip():
            joined.append((start, pending + text))
        pending = ""
    return joined


def assignments(rest: str) -> dict[str, str]:
    """``ARG CUDA=12.1`` / ``ENV A=1 B=2`` / ``ENV A 1``: the values given."""
    try:
        words = shlex.split(rest)
    except ValueError:
        return {}
    if len(words) == 2 and "=" not in words[0]:
        return {words[0]: words[1]}
    return dict(word.split("=", 1) for word in words if "=" in word)


def substitute(text: str, variables: dict[str, str]) -> str:
    return VARIABLE.sub(lambda m: variables.get(m.group(1) or m.group(3), m.group(2) or ""),
                        text)


def base_image(number: int, code: str, rest: str) -> list[Declaration]:
    words = [word for word in rest.split() if not word.startswith("--")]
    if not words:
        return []
    repository, tag = image_parts(words[0])
    release = RELEASE.match(tag)
    name = repository.rpartition("/")[2]
    if name == "cuda" and release:  # nvidia/cuda:12.1.0-cudnn8-runtime-ubuntu22.04
        return [cuda(number, code, *release.groups()).model_copy(update={"toolkit": True})]
    if name == "python" and release:  # python:3.9-slim
        return [python(number, code, f"=={release.group(1)}.{release.group(2)}.*")]
    month = NGC_TAG.match(tag)
    if repository.lower().startswith("nvcr.io/nvidia/") and name in NGC_FRAMEWORKS and month:
        tagged = int(month[1]) * 100 + int(month[2])
        return [python(number, code, next(spec for last, spec in NGC_PYTHON if tagged <= last))]
    found = cuda_in(number, code, tag)
    found += [cuda(number, code, digits[:-1], digits[-1]) for digits in TAG_CU.findall(tag)]
    return found[:1]


def run_line(number: int, code: str, command: str) -> list[Declaration]:
    """A ``RUN``'s wheel index URLs, and what its ``pip install`` / ``conda install`` name
    (and the conda channel torch comes from)."""
    found = cuda_in(number, code, command)
    for other in OTHER_INSTALL.finditer(command):
        written = other[1] or other[2] or other[0].strip()
        found.append(Declaration(line=number, code=code.strip()[:200], kind="requirements",
                                 name=written))
    for pattern, read in ((PIP, requirement), (CONDA, conda_spec)):
        for arguments in pattern.findall(command):
            if read is requirement:
                found += requirement_files(number, code, arguments)
                found += [local for word in install_words(arguments, paths=True)
                          for local in local_package(number, code, word)]
            words = install_words(arguments)
            for word in words:
                found += read(number, code, word)
            if read is conda_spec:
                found += torch_channel(number, code, words, channels_of(arguments))
    return found


def channels_of(arguments: str) -> list[str]:
    """The channels a ``conda install`` names (``-c pytorch``, ``--channel=pytorch``)."""
    return [match[1].lower() for match in CHANNEL_OPTION.finditer(arguments)]


def torch_channel(number: int, code: str, specs: list[str], channels: list[str]
                  ) -> list[Declaration]:
    """A conda install of torch from a named channel (``pytorch::pytorch``, or ``pytorch``
    with ``-c pytorch`` given): where it comes from is what a channel's end reaches. Without
    torch named, a companion package from the first channel given (``conda install -c pytorch
    torchaudio``) brings it as a dependency from there, pinned as the companion is."""
    for spec in specs:
        match = TORCH_SPEC.match(spec.strip().lower())
        if match is not None:
            return channel_of(number, code, spec, match[1] or first_channel(channels))
    companion = next((spec for spec in specs if COMPANION_SPEC.match(spec.strip().lower())),
                     None)
    if companion is None or not channels:
        return []  # ``pytorch::torchvision`` alone takes its torch from the default channels
    return channel_of(number, code, companion, first_channel(channels))


def first_channel(channels: list[str]) -> str:
    """The channel conda takes torch from: the first one named (strict priority), passing over
    Anaconda's own (``defaults``), which carry no torch newer than PyTorch's channel, where a
    channel of PyTorch's is named after them (``defaults, pytorch``: torch as the PyTorch
    channel builds it, with the companions it builds to match)."""
    if not channels:
        return ""
    ours = next((channel for channel in channels if channel_family(channel) == "pytorch"), None)
    if ours is not None and all(channel in ANACONDA_CHANNELS
                                for channel in channels[:channels.index(ours)]):
        return ours
    return channels[0]


def channel_of(number: int, code: str, spec: str, channel: str) -> list[Declaration]:
    if not channel:
        return []
    pinned = next((d.specifier for d in conda_spec(number, code, spec) if d.kind == "package"),
                  "")
    return [Declaration(line=number, code=code.strip()[:200], kind="channel", name=channel,
                        specifier=pinned)]


def shell_words(arguments: str) -> list[str]:
    """A command's words as a shell splits them (by whitespace where quotes do not pair)."""
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


def install_words(arguments: str, paths: bool = False) -> list[str]:
    """The package words of an install command: not options, nor their values, nor paths
    (``paths``: only the paths, ``pip install . ./libs/core``)."""
    words = shell_words(arguments)
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in VALUED
        elif not word.isdigit() and ("/" in word or word.startswith(".")) is paths:
            kept.append(word)
    return kept


def conda_environment(lines: list[str]) -> list[Declaration]:
    """The ``dependencies:`` list of a conda environment file, its ``- pip:`` list included."""
    found: list[Declaration] = []
    listing = False
    pip_indent: int | None = None
    section = ""
    channels: list[str] = []
    specs: list[tuple[int, str, str]] = []  # each conda spec, read for torch at the end
    for number, text, indent, item in yaml_lines(lines):
        if indent == 0:
            section = item.partition(":")[0].strip()
            listing, pip_indent = section == "dependencies", None
            continue
        if section == "channels" and item.startswith("-"):
            channels.append(item[1:].strip().strip("'\"").lower())
            continue
        if not listing or not item.startswith("-"):
            continue
        value = item[1:].strip().strip("'\"")
        if pip_indent is not None and indent > pip_indent:
            found += [declaration.model_copy(update={"code": text.strip()})
                      for declaration in requirement_lines([value], number)]
            continue
        pip_indent = None
        if value.replace(" ", "") == "pip:":
            pip_indent = indent
        else:
            found += conda_spec(number, text, value)
            specs.append((number, text, value))
    # Channels are listed before or after the dependencies: torch's is known at the end. It
    # is torch's line, or the first companion's that brings it.
    named = [spec for spec in specs if TORCH_SPEC.match(spec[2].strip().lower())] or [
        spec for spec in specs if COMPANION_SPEC.match(spec[2].strip().lower())][:1]
    for number, text, value in named:
        found += torch_channel(number, text, [value], channels)
    return found

