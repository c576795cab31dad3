"""The version a codebase is on, from its own pins and lock files (``upgrade``): which pin
decided, the lowest release a range admits, and a disagreement refused in one line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from packaging.version import Version

from watcher.errors import ConfigError
from watcher.impact import CodeRoot, ImpactAnalyzer
from watcher.impact.environment import current_version, find_pins

RELEASES = [Version(v) for v in ("2.4.0", "2.4.1", "2.5.0", "2.5.1", "2.6.0", "2.7.0",
                                 "2.8.0", "2.9.0", "2.10.0")]
UV_LOCK = textwrap.dedent("""\
    version = 1
    requires-python = ">=3.10"

    [[package]]
    name = "numpy"
    version = "2.1.0"

    [[package]]
    name = "torch"
    version = "2.5.1"
    source = { registry = "https://pypi.org/simple" }
    """)
PIPFILE_LOCK = json.dumps({"_meta": {"hash": {"sha256": "x"}},
                           "default": {"torch": {"version": "==2.5.1"}},
                           "develop": {}}, indent=4)


def pins_of(root: Path, package: str = "torch"):
    analyzer = ImpactAnalyzer([CodeRoot("code", root)], cached=False)
    [(_, index)] = analyzer.indexes()
    return find_pins("code", root, index.declarations, package)


def decide(root: Path, package: str = "torch"):
    return current_version(pins_of(root, package), RELEASES, package)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.parametrize(("files", "version", "decided_at"), [
    ({"requirements.txt": "numpy\ntorch==2.5.1+cu121\n"}, "2.5.1", "code/requirements.txt:2"),
    ({"pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch==2.5.0"]\n'}, "2.5.0",
     "code/pyproject.toml:3"),
    ({"pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch>=2.5,<2.8"]\n',
      "uv.lock": UV_LOCK}, "2.5.1", "code/uv.lock:9"),
    ({"poetry.lock": UV_LOCK.replace("version = 1\n", "")}, "2.5.1", "code/poetry.lock:8"),
    ({"Pipfile.lock": PIPFILE_LOCK}, "2.5.1", "code/Pipfile.lock:8"),
    ({"setup.py": "from setuptools import setup\nsetup(extras_require={'gpu': "
                  "['torch==2.5.1']})\n"}, "2.5.1", "code/setup.py:2"),
    ({"setup.cfg": "[options]\ninstall_requires =\n    torch==2.5.0\n"}, "2.5.0",
     "code/setup.cfg:3"),
    ({"environment.yml": "channels:\n  - pytorch\ndependencies:\n  - pytorch=2.5\n"}, "2.5.0",
     "code/environment.yml:4"),
], ids=["requirements-local-version", "pyproject", "uv-lock-over-range", "poetry-lock",
        "pipfile-lock", "setup-py-extras", "setup-cfg", "conda-pytorch"])
def test_the_pin_that_decides(tmp_path, files, version, decided_at):
    decision = decide(write(tmp_path, files))
    assert decision.version == Version(version)
    assert decided_at in decision.how


def test_a_range_is_the_lowest_release_it_admits_and_says_so(tmp_path):
    write(tmp_path, {"requirements.txt": "torch>=2.5,<2.8\n",
                     "sub/requirements-dev.txt": "torch>=2.4.1\n"})
    decision = decide(tmp_path)
    assert decision.version == Version("2.5.0")
    assert decision.how == ("torch 2.5.0, the lowest release admitted by torch>=2.5,<2.8 at "
                            "code/requirements.txt:1; torch>=2.4.1 at "
                            "code/sub/requirements-dev.txt:1")
    assert len(decision.pins) == 2


@pytest.mark.parametrize(("files", "named"), [
    ({"requirements.txt": "torch==2.5.1\n", "docker/requirements.txt": "torch==2.7.0\n"},
     ["torch==2.7.0 at code/docker/requirements.txt:1",
      "torch==2.5.1 at code/requirements.txt:1"]),
    ({"requirements.txt": "torch==2.5.1\n", "pyproject.toml":
      '[project]\nname = "x"\ndependencies = ["torch>=2.6"]\n'},
     ['"torch>=2.6"] at code/pyproject.toml:3']),
    ({"requirements.txt": "torch>=2.9\n", "constraints.txt": "torch<2.6\ntorch>=2.4\n"},
     ["no release satisfies them all"]),
], ids=["two-exact", "exact-outside-a-range", "ranges-with-no-common-release"])
def test_pins_that_disagree_are_refused_in_one_line_naming_them(tmp_path, files, named):
    write(tmp_path, files)
    with pytest.raises(ConfigError) as refused:
        decide(tmp_path)
    message = str(refused.value)
    assert "\n" not in message and "pass --from VERSION" in message
    assert all(part in message for part in named), message


def test_no_pin_with_a_version_is_refused(tmp_path):
    write(tmp_path, {"requirements.txt": "torch\nnumpy==2.0\n", "model.py": "import torch\n"})
    with pytest.raises(ConfigError, match=r"no pin of torch with a version .*1 without a lower"):
        decide(tmp_path)


def test_pypi_pytorch_is_not_torch_but_conda_pytorch_is(tmp_path):
    write(tmp_path, {"requirements.txt": "pytorch==1.0.2\ntorch==2.6.0\n"})
    assert decide(tmp_path).version == Version("2.6.0")


def test_the_package_follows_the_repo_torch_xla(tmp_path):
    write(tmp_path, {"requirements.txt": "torch==2.6.0\ntorch_xla[tpu]==2.5.1\n"})
    pins = pins_of(tmp_path, "torch_xla")
    assert [(pin.path, pin.specifier) for pin in pins] == [("requirements.txt", "==2.5.1")]
    assert current_version(pins, RELEASES, "torch_xla").version == Version("2.5.1")


def test_a_lock_file_that_does_not_read_is_skipped(tmp_path):
    write(tmp_path, {"uv.lock": "[[package]\nname=", "requirements.txt": "torch==2.6.0\n"})
    assert decide(tmp_path).version == Version("2.6.0")
