"""The declarations environment files share, each read from one string: a PEP 508 requirement,
a conda match spec, a PyTorch wheel index URL (``.../whl/cu121``), a CUDA version in a tag."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from watcher.impact.model import Declaration

__all__ = [
    "COMPANIONS",
    "TORCH_FAMILY",
    "TORCH_NAMES",
    "channel_family",
    "conda_spec",
    "cuda",
    "cuda_in",
    "exact_version",
    "local_package",
    "python",
    "requirement",
    "requirement_files",
    "requirement_lines",
    "uncommented",
    "yaml_lines",
]

CODE_LIMIT = 200
# A ``#`` comment to the end of the line (not ``a#b``: a URL fragment, a conda build string).
COMMENT = re.compile(r"(^|\s)#.*$")
# download.pytorch.org/whl/cu121 (also .../whl/nightly/cu121) and torch==2.1.0+cu121.
WHEEL_CUDA = re.compile(r"(?:download\.pytorch\.org/whl/(?:nightly/|test/)?|\+)cu(\d{2,3})\b")
TAG_CUDA = re.compile(r"cuda[-_]?(\d{1,2})\.(\d)")
CONDA_CUDA = frozenset({"cudatoolkit", "pytorch-cuda", "cuda-version", "cuda-toolkit",
                        "cuda-runtime", "cuda"})
CONDA_SPEC = re.compile(r"^(?:[\w.\-/]+::)?([A-Za-z0-9_.\-]+)\s*(.*)$")
# ``-r FILE`` / ``--requirement=FILE`` of pip, in a command or a requirements line, and the
# local package of ``-e PATH`` / ``--editable=PATH``.
REQUIREMENT_FILE = re.compile(
    r"(?:^|\s)(?:-r|--requirement|-e|--editable)(?:\s+|=)([^\s;&|]{1,300})")
# torch's names as pip and conda install it (conda-forge's ``pytorch-cpu``/``pytorch-gpu``
# meta-packages, the pytorch channel's old ``pytorch-cpu``), and the packages built with it,
# each of whose releases requires one torch release: together, what brings torch with it.
TORCH_NAMES = frozenset({"torch", "pytorch", "pytorch-cpu", "pytorch-gpu"})
COMPANIONS = frozenset({"torchvision", "torchaudio", "torchtext"})
TORCH_FAMILY = TORCH_NAMES | COMPANIONS
# Packages that require some torch without pinning one: installing them may bring it.
TORCH_DEPENDENTS = frozenset({"lightning", "timm", "accelerate", "peft", "deepspeed", "xformers",
                              "sentence-transformers", "ultralytics", "vllm", "fairseq",
                              "nemo-toolkit", "open-clip-torch", "kornia", "monai"})


def may_bring_torch(name: str) -> bool:
    """A package that requires torch: the family, ``torch*``/``pytorch*`` (torchmetrics,
    pytorch-lightning, torch-geometric) and the known dependents."""
    return name in TORCH_FAMILY or name in TORCH_DEPENDENTS or name.startswith(("torch", "pytorch"))


def declaration(line: int, code: str, **fields: str) -> Declaration:
    return Declaration(line=line, code=code.strip()[:CODE_LIMIT], **fields)  # type: ignore[arg-type]


def cuda(line: int, code: str, major: str, minor: str) -> Declaration:
    return declaration(line, code, kind="cuda", version=f"{int(major)}.{int(minor)}")


def python(line: int, code: str, specifier: str) -> Declaration:
    return declaration(line, code, kind="python", specifier=specifier)


def cuda_in(line: int, code: str, text: str) -> list[Declaration]:
    """CUDA versions a wheel index URL, a ``+cu121`` local version or a ``cuda12.1`` tag name."""
    found = [cuda(line, code, digits[:-1], digits[-1]) for digits in WHEEL_CUDA.findall(text)]
    found += [cuda(line, code, major, minor) for major, minor in TAG_CUDA.findall(text)]
    return found


def requirement(line: int, code: str, text: str) -> list[Declaration]:
    """A PEP 508 requirement as a package declaration (and the CUDA of a ``+cu121`` pin);
    nothing for what is not one (a URL, a path, an option)."""
    try:
        parsed = Requirement(text.strip())
    except InvalidRequirement:
        return []
    found = [declaration(line, code, kind="package", name=canonicalize_name(parsed.name),
                         specifier=str(parsed.specifier))]
    return found + cuda_in(line, code, str(parsed.specifier))


def exact_version(specifier: str) -> Version | None:
    """The version of an exact pin (``==2.5.1``, ``===2.5.1``, ``==2.6.0+cu124``); None for a
    range or a wildcard (``==2.5.*``), which a newer release may meet."""
    if not specifier.startswith("==") or "," in specifier or specifier.endswith(".*"):
        return None
    try:
        return Version(specifier.lstrip("="))
    except InvalidVersion:
        return None


def requirement_files(line: int, code: str, text: str) -> list[Declaration]:
    """The requirements files and local packages a pip command or requirements line installs
    from (``-r requirements.txt``, ``-e .``; conda's ``file:`` prefix dropped); not a URL."""
    found = []
    for match in REQUIREMENT_FILE.findall(text):
        written = match.strip("'\"").removeprefix("file:")
        if "://" not in written and "$" not in written:
            found.append(declaration(line, code, kind="requirements", name=written))
    return found


def local_package(line: int, code: str, word: str) -> list[Declaration]:
    """A folder a pip command installs as a package (``pip install .``, ``./libs/core``)."""
    if word.startswith((".", "/")) and "://" not in word and "$" not in word \
            and not word.endswith((".whl", ".tar.gz", ".zip")):
        return [declaration(line, code, kind="requirements", name=word)]
    return []


def uncommented(line: str) -> str:
    """A line of a requirements, shell or YAML file without its ``#`` comment."""
    return COMMENT.sub("", line)


def yaml_lines(lines: list[str]) -> Iterator[tuple[int, str, int, str]]:
    """The lines of a plain YAML file that say something: (number, the line as written, its
    indent, its content without comment or surrounding blanks). Conda's files are read this
    way, without a YAML library: their lists are plain, and a recipe is Jinja before YAML."""
    for number, text in enumerate(lines, 1):
        content = uncommented(text).rstrip()
        if content.strip():
            yield number, text, len(content) - len(content.lstrip()), content.strip()


def requirement_lines(lines: list[str], first: int = 1) -> list[Declaration]:
    """A requirements file (or the pip section of a conda file): one requirement a line, with
    comments, ``\\`` continuations and options; only index URLs among the options matter."""
    found: list[Declaration] = []
    pending, start = "", first
    for number, raw in enumerate(lines, first):
        if not pending:
            start = number
        text = uncommented(raw).strip()
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        text, pending = (pending + text).strip(), ""
        code = lines[start - first]
        if text.startswith("-"):  # -r, -c, -e, --index-url ...: a CUDA wheel index counts
            found += cuda_in(start, code, text) + requirement_files(start, code, text)
        elif text:
            found += requirement(start, code, text.split(" --", 1)[0])
    return found


def conda_spec(line: int, code: str, spec: str) -> list[Declaration]:
    """A conda match spec: ``python=3.9``, ``cudatoolkit=11.8``, ``pytorch::pytorch=2.1=
    py3.9_cuda12.1_0``, ``numpy >=1.24``. conda's ``=3.9`` means 3.9.*."""
    match = CONDA_SPEC.match(spec.strip())
    if match is None:
        return []
    name, rest = match.group(1).lower(), match.group(2).strip()
    build = ""
    if rest.startswith("=="):
        version, _, build = rest[2:].partition("=")
        specifier = "==" + version
    elif rest.startswith("="):
        version, _, build = rest[1:].partition("=")
        specifier = "==" + version.removesuffix(".*") + ".*"
    elif rest[:1].isdigit():  # "3.9.*", or "2.1.0 py3.9_cuda12.1_0" with a build
        version, _, build = rest.partition(" ")
        specifier = "==" + version
    else:  # ">=1.24", ">=3.8,<3.11", or nothing
        specifier = rest.replace(" ", "")
    if name in CONDA_CUDA:
        digits = re.search(r"(\d+)\.(\d+)", specifier)
        return [cuda(line, code, *digits.groups())] if digits else []
    if name == "python":
        return [python(line, code, specifier)] if specifier else []
    package = declaration(line, code, kind="package", name=canonicalize_name(name),
                          specifier=specifier)
    return [package, *cuda_in(line, code, build)]


PYTORCH_CHANNELS = frozenset({"pytorch", "pytorch-nightly", "pytorch-test"})


def channel_family(channel: str) -> str:
    """The project a conda channel publishes for: PyTorch's nightly and test channels
    (``pytorch-nightly``, ``https://conda.anaconda.org/pytorch-test``) ended with its main one."""
    name = channel.lower().rstrip("/").rpartition("/")[2]
    return "pytorch" if name in PYTORCH_CHANNELS else name
