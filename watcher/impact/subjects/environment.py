"""Environment requirements an item changes, read from its prose: a new minimum Python, a CUDA
version no longer supported, a package now needed at a version, a package renamed.

The phrasings are the ones release notes use ("Min supported Python version is now 3.10",
"No more CPython 3.8 support", "Removed CUDA 12.4 support in CI/CD", "Dropped support for
Triton < 2.2.0", "`onnxscript>=0.3.1` is required", "`pytorch-triton` is renamed to `triton`"),
written as bounded patterns: no quantifier can run past a few dozen characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from watcher.impact.model import EnvironmentSubject
from watcher.impact.subjects.names import normalise_package
from watcher.impact.subjects.text import Sentence

__all__ = ["read_environment"]

_PY = r"(?:c?python)[\s-]?v?(\d)\.(\d{1,2})\b"
_VERSIONS = r"(\d{1,2}\.\d{1,2}(?:\s{0,3}(?:,|and|&|/|or)\s{0,3}(?:cuda\s)?\d{1,2}\.\d{1,2}){0,8})"
_DROP = r"(?:drop(?:s|ped|ping)?|remov(?:e|es|ed|ing)|deprecat(?:e|es|ed|ing)|end(?:s|ed)?)"

# A Python version that is now the lowest supported one.
_PY_MINIMUM = [
    re.compile(r"\bmin(?:imum|\.)?\s+(?:supported\s+|required\s+)?(?:version\s+of\s+)?(?:c?python)"
               r"\s+(?:version\s+)?(?:[\w.]{1,30}\s+){0,6}?(?:is|to|=|:)\s+(?:now\s+)?(?:c?python\s+)?"
               r"v?(\d)\.(\d{1,2})\b", re.I),
    re.compile(r"\brequires?\s+(?:c?python)\s*(?:>=\s*)?v?(\d)\.(\d{1,2})\b", re.I),
    re.compile(r"\b(?:c?python)\s*>=\s*(\d)\.(\d{1,2})\b", re.I),
    re.compile(_PY + r"\s*(?:\+|or\s+(?:later|newer|higher|above))\s+(?:is\s+|are\s+)?(?:now\s+)?"
               r"(?:required|needed)", re.I),
]
# A Python version no longer supported: the next minor is the new minimum.
_PY_DROPPED = [
    re.compile(r"\b" + _DROP + r"\s+(?:the\s+)?(?:support\s+for\s+)?" + _PY, re.I),
    re.compile(r"\bno\s+(?:more|longer\s+supports?)\s+(?:support\s+for\s+)?" + _PY, re.I),
    re.compile(r"\b" + _PY + r"\s+(?:support\s+)?(?:is\s+|has\s+been\s+|was\s+)?(?:now\s+)?"
               r"(?:dropped|removed|deprecated|eol|end[- ]of[- ]life|no\s+longer\s+supported)\b",
               re.I),
]
_CUDA_REMOVED = [
    re.compile(r"\b" + _DROP + r"\s+(?:the\s+)?(?:support\s+for\s+)?cuda\s+" + _VERSIONS, re.I),
    re.compile(r"\bno\s+longer\s+(?:support|build|ship|publish|provide)\w{0,3}\s+(?:for\s+)?cuda\s+"
               + _VERSIONS, re.I),
    re.compile(r"(?<!\bwith\s)(?<!\bfor\s)(?<!\bon\s)(?<!\busing\s)\bcuda\s+" + _VERSIONS
               + r"\s+(?:support\s+|binaries\s+|builds\s+|wheels\s+)?(?:is\s+|are\s+|has\s+been\s+"
               r"|have\s+been\s+|was\s+|were\s+)?(?:now\s+)?(?:dropped|removed|deprecated|no\s+"
               r"longer\s+(?:built|supported|published|provided|shipped|available))\b", re.I),
]
_NAME = r"([A-Za-z][\w.-]{0,60}?)"
_VER = r"v?(\d[\w.]{0,30}?)"
_PACKAGE = [  # (pattern, operator the version takes)
    (re.compile(r"\b" + _DROP + r"\s+support\s+for\s+" + _NAME + r"\s*<\s*" + _VER + r"(?=[\s,;)]|"
                r"\.?$)", re.I), ">="),
    (re.compile(r"\b(?:upgrade|update)\s+" + _NAME + r"\s+to\s+(?:version\s+)?" + _VER
                + r"\s+or\s+(?:higher|newer|later|above)", re.I), ">="),
    (re.compile(r"\brequires?\s+" + _NAME + r"\s*(?:>=\s*)?" + _VER + r"\s*(?:\+|or\s+(?:higher|"
                r"newer|later|above))", re.I), ">="),
    (re.compile(r"(?<![\w.-])" + _NAME + r"\s*(>=|==|~=)\s*" + _VER + r"\s+(?:is|are)\s+(?:now\s+)?"
                r"(?:required|needed)", re.I), ""),
]
_RENAMED = [
    re.compile(r"(?<![\w.-])" + _NAME + r"\s+(?:package\s+|wheel\s+)?(?:is|has\s+been|was|are|"
               r"have\s+been)\s+(?:now\s+)?renamed\s+(?:to|as)\s+" + _NAME + r"(?=[\s,;)]|\.?$)",
               re.I),
    re.compile(r"\brenam(?:e|es|ed|ing)\s+(?:the\s+)?(?:package\s+)?(?:from\s+)?" + _NAME
               + r"\s+(?:package\s+|wheel\s+)?(?:to|as)\s+" + _NAME + r"(?=[\s,;)]|\.?$)", re.I),
]
# PyTorch's own conda channel ending: "Removed Anaconda support in CI/CD", "PyTorch will no
# longer publish packages on the pytorch conda channel", "conda builds are discontinued".
_CHANNEL_ENDED = [
    re.compile(r"\b" + _DROP + r"\s+(?:the\s+)?(?:support\s+for\s+)?(?:ana)?conda\b"
               r"(?!\s+(?:to|with|for|in)\b)", re.I),
    re.compile(r"\b(?:stop(?:s|ped)?|no\s+longer|discontinu\w{1,4})\s+(?:publish|build|ship|"
               r"provid|upload)\w{0,4}\s+(?:\w{1,20}\s+){0,5}?(?:on|to|for|via)?\s*(?:the\s+)?"
               r"(?:\w{1,20}\s+)?(?:ana)?conda\b", re.I),
    re.compile(r"\b(?:ana)?conda\s+(?:support|packages|binaries|builds|channel)\s+(?:is\s+|are\s+|"
               r"has\s+been\s+|have\s+been\s+)?(?:now\s+)?(?:dropped|removed|deprecated|"
               r"discontinued|no\s+longer\s+(?:supported|published|built))\b", re.I),
]
PYTORCH_CHANNEL = "pytorch"
# Wheels built with the C++11 ABI: "Use Manylinux 2.28 and CXX11_ABI=1 for future released
# Linux wheel builds", "binaries now use the new C++11 ABI" (not "support ... both 0 and 1").
_NEW_ABI = [
    re.compile(r"\b(?:_GLIBCXX_USE_)?CXX11_ABI\s*=\s*1\b", re.I),
    re.compile(r"\b(?:wheels?|binaries|builds?|packages?)\b[^.]{0,60}\b(?:use|built\s+with|"
               r"switch(?:ed)?\s+to|move[sd]?\s+to)\s+the\s+(?:new\s+)?(?:c\+\+11|cxx11)\s+abi\b",
               re.I),
]
# GPU architectures a CUDA build of torch stops running on: "Removed support for Maxwell,
# Pascal, and Volta architectures with CUDA 12.8 and 12.9 builds", "Volta (SM 7.0) GPU support
# removed from CUDA 12.8 and 12.9 binary builds".
_GPU_ARCHS = re.compile(r"\b(kepler|maxwell|pascal|volta|turing)\b", re.I)
_ARCH_DROPPED = re.compile(r"\b(?:drop\w{0,4}|remov\w{0,3}|deprecat\w{0,3}|no\s+longer\s+"
                           r"support\w{0,3})\b", re.I)
_ARCH_BUILDS = re.compile(r"\bcuda\s+" + _VERSIONS, re.I)  # the builds: "CUDA 12.8 and 12.9"
_PACKAGE_WORDS = re.compile(r"\b(?:package|wheel|pip|pypi|distribution|dependency)\b", re.I)
# Platforms and toolchains notes version-gate: not Python distributions a codebase pins.
_NOT_PACKAGES = frozenset({"cuda", "rocm", "macos", "windows", "linux", "glibc", "gcc", "clang",
                           "msvc", "xcode", "visual-studio", "vs", "ubuntu", "centos", "manylinux",
                           "cudnn", "nccl", "cmake", "ninja", "the", "a", "an", "support"})


def read_environment(sentences: Iterable[Sentence]) -> list[EnvironmentSubject]:
    """Each requirement once, in the order the text states them."""
    found: dict[EnvironmentSubject, None] = {}
    for sentence in sentences:
        for subject in _sentence_subjects(sentence.plain):
            found[subject] = None
    return list(found)


def _sentence_subjects(text: str) -> Iterator[EnvironmentSubject]:
    """The requirements one sentence states, Python, CUDA, packages, renames in turn."""
    lower = text.lower()  # each family's patterns run only where its key word is
    if "python" in lower:
        yield from _python(text)
    if "cuda" in lower:
        for pattern in _CUDA_REMOVED:
            for match in pattern.finditer(text):
                for version in re.findall(r"\d{1,2}\.\d{1,2}", match[1]):
                    yield EnvironmentSubject(kind="cuda", removed=version)
    if any(word in lower for word in ("support", "upgrade", "update", "require", "need")):
        yield from _packages(text)
    if "renam" in lower:
        yield from _renames(text)
    if "cuda" in lower and _ARCH_DROPPED.search(text):
        yield from _gpu_archs(text)
    if "conda" in lower and any(pattern.search(text) for pattern in _CHANNEL_ENDED):
        yield EnvironmentSubject(kind="channel", name=PYTORCH_CHANNEL)
    if "abi" in lower and any(pattern.search(text) for pattern in _NEW_ABI):
        yield EnvironmentSubject(kind="abi")


def _gpu_archs(text: str) -> Iterator[EnvironmentSubject]:
    """The CUDA builds a sentence says stop running on the GPU architectures it names."""
    archs = list(dict.fromkeys(match[1].capitalize() for match in _GPU_ARCHS.finditer(text)))
    if not archs:
        return
    for match in _ARCH_BUILDS.finditer(text):
        for version in re.findall(r"\d{1,2}\.\d{1,2}", match[1]):
            yield EnvironmentSubject(kind="gpu_arch", removed=version, name="/".join(archs))


def _python(text: str) -> Iterator[EnvironmentSubject]:
    for pattern in _PY_MINIMUM:
        for match in pattern.finditer(text):
            yield EnvironmentSubject(kind="python", minimum=f"{match[1]}.{match[2]}")
    for pattern in _PY_DROPPED:
        for match in pattern.finditer(text):
            yield EnvironmentSubject(kind="python", minimum=f"{match[1]}.{int(match[2]) + 1}")


def _packages(text: str) -> Iterator[EnvironmentSubject]:
    for pattern, operator in _PACKAGE:
        for match in pattern.finditer(text):
            name = match[1].rstrip(".-")
            spec = (operator or match[2]) + match[match.lastindex or 2].rstrip(".")
            subject = _package(name, spec)
            if subject is not None:
                yield subject


def _package(name: str, spec: str) -> EnvironmentSubject | None:
    """A valid PEP 440 requirement of a Python distribution (``python`` itself is the python
    kind; platforms and toolchains are none)."""
    try:
        SpecifierSet(spec)
        Version(spec.lstrip("<>=~!"))
    except (InvalidSpecifier, InvalidVersion):
        return None
    normal = normalise_package(name)
    if normal in ("python", "cpython"):
        return EnvironmentSubject(kind="python", minimum=spec.lstrip("<>=~!")) if (
            spec.startswith(">=")) else None
    if normal in _NOT_PACKAGES or "." in name:
        return None
    return EnvironmentSubject(kind="package", name=normal, specifier=spec)


def _renames(text: str) -> Iterator[EnvironmentSubject]:
    """A rename is a package's only when a name has a hyphen or the words say package: a
    renamed function or config variable is a Python subject, read elsewhere."""
    for pattern in _RENAMED:
        for match in pattern.finditer(text):
            old, new = match[1].rstrip(".-"), match[2].rstrip(".-")
            if "." in old or "." in new or old.lower() == new.lower():
                continue
            if "-" in old or "-" in new or _PACKAGE_WORDS.search(text):
                yield EnvironmentSubject(kind="renamed_package", name=normalise_package(old),
                                         new_name=normalise_package(new))
