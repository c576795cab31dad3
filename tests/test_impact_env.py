"""Environment declarations (requires-python, pins, CUDA of wheel indexes and base images) read
from each kind of file, and which of them each kind of environment subject touches."""

from __future__ import annotations

import textwrap

import pytest

from watcher.impact.code import UnparsableError, scan_codebase
from watcher.impact.environment import index_environment, is_environment_file, touches
from watcher.impact.model import Declaration, EnvironmentSubject, Subjects
from watcher.impact.reach.match import find_affects


def declared(path: str, text: str) -> list[tuple[int, str, str, str]]:
    """(line, kind, name, specifier or CUDA version) of each declaration."""
    index = index_environment(path, textwrap.dedent(text))
    return [(d.line, d.kind, d.name, d.specifier or d.version) for d in index.declarations]


def test_pyproject_pep621_and_poetry():
    assert declared("pyproject.toml", """\
        [project]
        name = "trainer"
        requires-python = ">=3.9"
        dependencies = [
            "torch>=2.1",
            "onnxscript==0.2.0",
            'Pytorch_Triton',
        ]
        [project.optional-dependencies]
        gpu = ["torch==2.1.0+cu121"]

        [tool.poetry.dependencies]
        python = "^3.9"
        numpy = { version = "~1.24" }
        scipy = "1.11.2"
        """) == [
        (3, "python", "", ">=3.9"), (5, "package", "torch", ">=2.1"),
        (6, "package", "onnxscript", "==0.2.0"), (7, "package", "pytorch-triton", ""),
        (10, "package", "torch", "==2.1.0+cu121"), (10, "cuda", "", "12.1"),
        (13, "python", "", ">=3.9,<4"), (14, "package", "numpy", "<1.25,>=1.24"),
        (15, "package", "scipy", "==1.11.2")]


def test_invalid_toml_is_unparsable():
    with pytest.raises(UnparsableError):
        index_environment("pyproject.toml", "[project\n")


def test_requirements_files_skip_options_but_read_the_cuda_wheel_index_and_includes():
    assert declared("requirements/gpu.txt", """\
        # pinned for the cluster
        --extra-index-url https://download.pytorch.org/whl/cu121
        -r base.txt
        --index-url https://pypi.org/simple
        torch==2.1.0 \\
            --hash=sha256:0123
        onnxscript>=0.1  # the exporter
        numpy; python_version < "3.12"
        git+https://github.com/acme/tool
        -e ./local
        """) == [(2, "cuda", "", "12.1"), (3, "requirements", "base.txt", ""),
                 (5, "package", "torch", "==2.1.0"), (7, "package", "onnxscript", ">=0.1"),
                 (8, "package", "numpy", ""), (10, "requirements", "./local", "")]
    assert declared("constraints.txt", "Torch_Vision<0.17\n") == [
        (1, "package", "torch-vision", "<0.17")]
    assert declared("dev.in", "--find-links https://download.pytorch.org/whl/cu118\n") == [
        (1, "cuda", "", "11.8")]


def test_setup_cfg_and_setup_py():
    assert declared("setup.cfg", """\
        [metadata]
        name = trainer
        [options]
        python_requires = >=3.8
        install_requires =
            torch>=2.0
            numpy
        [flake8]
        max-line-length = 100
        """) == [(4, "python", "", ">=3.8"), (6, "package", "torch", ">=2.0"),
                 (7, "package", "numpy", "")]
    assert declared("setup.py", """\
        from setuptools import setup
        setup(
            name="trainer",
            python_requires=">=3.8,<3.12",
            install_requires=["torch", "onnxscript>=0.1"],
        )
        """) == [(4, "python", "", ">=3.8,<3.12"),
                 (5, "package", "torch", ""), (5, "package", "onnxscript", ">=0.1")]
    # dinov2's setup.py: the value through a module-level name, found where it is written.
    assert declared("setup.py", """\
        from setuptools import setup
        REQUIRES_PYTHON = ">=3.9.0"
        REQUIRED = ["torch"]
        setup(name="x", python_requires=REQUIRES_PYTHON, install_requires=REQUIRED)
        """) == [(2, "python", "", ">=3.9.0"), (3, "package", "torch", "")]
    # A floor built from literals (.format, %, f-string, +): the text it builds.
    for built in ('">={}".format(MIN)', '">=%s" % MIN', 'f">={MIN}"', '">=" + MIN',
                  '">={}.{}".format(3, 8)'):
        assert declared("setup.py", f"""\
            from setuptools import setup
            MIN = "3.8"
            setup(name="x", python_requires={built})
            """) == [(3, "python", "", ">=3.8")], built
    assert declared("setup.py", """\
        from setuptools import setup
        setup(name="x", python_requires=">={}".format(read_floor()))
        """) == []  # a value only running the script could tell
    # No python_requires: the floor the script enforces itself (fairseq's), not a warning.
    assert declared("setup.py", """\
        import sys
        from setuptools import setup
        if sys.version_info < (3, 6):
            sys.exit("Sorry, Python >= 3.6 is required.")
        if sys.version_info[:2] < (3, 8):
            print("Python 3.8 is recommended")
        setup(name="x", install_requires=["torch"])
        """) == [(7, "package", "torch", ""), (3, "python", "", ">=3.6")]
    # CrypTen's: first thing when run as a script; a check inside a function may never run.
    assert declared("setup.py", """\
        import sys
        import setuptools
        def warn():
            if sys.version_info < (3, 9):
                sys.exit("old")
        if __name__ == "__main__":
            if sys.version_info < (3, 7):
                sys.exit("Sorry, Python >=3.7 is required.")
            setuptools.setup(name="x", install_requires=["torch"])
        """) == [(9, "package", "torch", ""), (7, "python", "", ">=3.7")]
    assert declared("setup.py", """\
        import sys
        from setuptools import setup
        if sys.version_info < (3, 6):
            raise RuntimeError("too old")
        setup(name="x", python_requires=">=3.9")
        """) == [(5, "python", "", ">=3.9")]  # what it declares wins
    # ParallelWaveGAN's (ESPnet's idiom): the running Python's version string compared.
    assert declared("setup.py", """\
        import sys
        from distutils.version import LooseVersion
        from setuptools import setup
        if LooseVersion(sys.version) < LooseVersion("3.7"):
            raise RuntimeError("Python>=3.7 is required")
        if LooseVersion(pip.__version__) < LooseVersion("19"):
            raise RuntimeError("pip>=19.0.0 is required")
        setup(name="x", install_requires=["torch>=1.8"])
        """) == [(8, "package", "torch", ">=1.8"), (4, "python", "", ">=3.7")]
    # An extra installs its requirements too (AutoGPTQ's triton extra), through a name or not.
    assert sorted(declared("setup.py", """\
        from setuptools import setup
        extras_require = {"triton": ["triton==2.0.0"], "test": ["parameterized"]}
        setup(name="x", install_requires=["torch>=1.13.0"], extras_require=extras_require)
        setup(name="y", extras_require={"onnx": ["onnxscript>=0.1"]})
        """)) == [(2, "package", "parameterized", ""), (2, "package", "triton", "==2.0.0"),
                  (3, "package", "torch", ">=1.13.0"), (4, "package", "onnxscript", ">=0.1")]


def test_dockerfiles_base_images_and_installs():
    assert declared("docker/Dockerfile.gpu", """\
        ARG CUDA=12.1.0
        FROM nvidia/cuda:${CUDA}-cudnn8-runtime-ubuntu22.04 AS base
        FROM --platform=linux/amd64 pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime
        FROM python:3.9-slim
        FROM ubuntu:22.04
        # RUN pip install torch==1.0
        RUN pip install --no-cache-dir torch==2.1.0 \\
            --index-url https://download.pytorch.org/whl/cu118 && \\
            conda install -y -c pytorch pytorch-cuda=12.1
        """) == [(2, "cuda", "", "12.1"), (4, "python", "", "==3.9.*"),
                 (7, "cuda", "", "11.8"), (7, "package", "torch", "==2.1.0"),
                 (7, "cuda", "", "12.1")]  # pytorch-cuda is the CUDA it wants, not torch
    # (line 3's stage runs the torch of its pytorch/pytorch image: see the next test)
    assert declared("gpu.dockerfile", "FROM nvcr.io/nvidia/cuda:11.8.0-base\n") == [
        (1, "cuda", "", "11.8")]


def test_a_stage_on_an_image_that_brings_torch_declares_nothing_unless_it_installs_torch():
    """Megatron-LM's examples/mamba/Dockerfile: its triton==2.1.0 goes with the torch of the
    nvcr.io PyTorch image it starts from. That torch stays until the image is changed, so no
    later release's requirement reaches the stage; a stage that installs torch runs its own."""
    assert declared("examples/mamba/Dockerfile", """\
        FROM nvcr.io/nvidia/pytorch:24.01-py3
        RUN pip uninstall -y triton && \\
            pip install triton==2.1.0 sentencepiece==0.1.99
        FROM pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime AS upgraded
        RUN pip install torch==2.4.0 triton==2.1.0
        FROM python:3.9-slim
        RUN pip install triton==2.1.0
        """) == [(4, "cuda", "", "12.1"), (5, "package", "torch", "==2.4.0"),
                 (5, "package", "triton", "==2.1.0"), (6, "python", "", "==3.9.*"),
                 (7, "package", "triton", "==2.1.0")]


def test_conda_build_recipes_declare_what_the_package_needs():
    # torchdrug's recipe: host and run lists; the build list's tools, Jinja-rendered specs and
    # selectors are not declarations of what the package runs with.
    assert declared("conda/torchdrug/meta.yaml", """\
        {% set version = "0.2.1" %}
        package:
          name: torchdrug
          version: {{ version }}
        requirements:
          build:
            - {{ compiler('cxx') }}
            - cmake >=3.18
          host:
            - python >=3.7,<3.11
            - python {{ python }}
          run:
            - python >=3.7,<3.11  # [linux]
            - pytorch >=1.8.0
        test:
          requires:
            - pytest >=7
        """) == [(10, "python", "", ">=3.7,<3.11"), (13, "python", "", ">=3.7,<3.11"),
                 (14, "package", "pytorch", ">=1.8.0")]


def test_conda_environment_files():
    for name in ("env.yml", "ci/env-gpu.yaml", "conda_cpu.yml", "environment-dev.yaml",
                 "plugins/clip/extra_environment.yml"):
        assert declared(name, "dependencies:\n  - python>=3.7\n") == [
            (2, "python", "", ">=3.7")], name
    assert declared("envoy.yml", "dependencies:\n  - python>=3.7\n") == []
    assert declared("environment.yml", """\
        name: trainer
        channels:
          - pytorch
        dependencies:
          - python=3.9
          - cudatoolkit=11.8
          - pytorch::pytorch=2.1.0=py3.9_cuda12.1_cudnn8_0
          - pytorch-cuda=12.1  # the GPU build
          - numpy >=1.24
          - pip
          - pip:
            - --extra-index-url https://download.pytorch.org/whl/cu121
            - onnxscript==0.2.0
        variables:
          - python=2.7
        """) == [(5, "python", "", "==3.9.*"), (6, "cuda", "", "11.8"),
                 (7, "package", "pytorch", "==2.1.0.*"), (7, "cuda", "", "12.1"),
                 (8, "cuda", "", "12.1"), (9, "package", "numpy", ">=1.24"),
                 (10, "package", "pip", ""), (12, "cuda", "", "12.1"),
                 (13, "package", "onnxscript", "==0.2.0"),
                 # torch from the channel named, pinned to a build it keeps
                 (7, "channel", "pytorch", "==2.1.0.*")]


def test_setup_scripts_and_the_channel_torch_comes_from():
    assert declared("scripts/setup.sh", """\
        #!/bin/bash
        conda install -y pytorch torchvision pytorch-cuda=12.1 -c pytorch -c nvidia
        pip install torch==1.13.1 \\
            numpy
        conda install -c conda-forge pytorch  # conda-forge keeps building it
        """) == [(2, "package", "pytorch", ""), (2, "package", "torchvision", ""),
                 (2, "cuda", "", "12.1"), (2, "channel", "pytorch", ""),
                 (3, "package", "torch", "==1.13.1"), (3, "package", "numpy", ""),
                 (5, "package", "pytorch", ""), (5, "channel", "conda-forge", "")]
    # conda-forge first: torch comes from there, the pytorch channel is a fallback.
    assert ("channel", "conda-forge") in {(kind, name) for _, kind, name, _ in declared(
        "environment.yml", "channels:\n  - conda-forge\n  - pytorch\ndependencies:\n"
        "  - pytorch\n")}
    # Anaconda's own channel first, then PyTorch's (allenact's environment-11.1.yml, TorchServe's
    # wav2vec2 example): torch as the PyTorch channel builds it, with its companions.
    for channels in (["defaults", "pytorch", "nvidia"], ["anaconda", "pytorch-nightly"]):
        listed = "".join(f"  - {channel}\n" for channel in channels)
        assert ("channel", channels[1]) in {(kind, name) for _, kind, name, _ in declared(
            "environment.yml", f"channels:\n{listed}dependencies:\n  - pytorch>=1.6\n")}


def test_a_companion_package_brings_torch_from_its_channel():
    # torchaudio from the pytorch channel depends on that channel's pytorch.
    channels = [(line, name, pin) for line, kind, name, pin in declared("install.sh", """\
        pip install -e .
        conda install -c pytorch torchaudio
        conda install -c pytorch torchvision=0.14.1
        conda install pytorch::torchaudio
        conda install -c conda-forge librosa
        """) if kind == "channel"]
    assert channels == [(2, "pytorch", ""), (3, "pytorch", "==0.14.1.*")]
    # An environment file names torch's channel once: on torch's line, else the first
    # companion's.
    assert [(line, kind, name) for line, kind, name, _ in declared(
        "environment.yml", "channels:\n  - pytorch\ndependencies:\n  - torchvision\n"
        "  - torchaudio\n") if kind == "channel"] == [(4, "channel", "pytorch")]
    assert [(line, kind, name) for line, kind, name, _ in declared(
        "environment.yml", "channels:\n  - pytorch\ndependencies:\n  - torchvision\n"
        "  - pytorch\n") if kind == "channel"] == [(5, "channel", "pytorch")]


@pytest.mark.parametrize(("declaration", "touched"), [
    (Declaration(line=1, code="", kind="channel", name="pytorch"), True),
    (Declaration(line=1, code="", kind="channel", name="pytorch", specifier=">=2.3"), True),
    (Declaration(line=1, code="", kind="channel", name="pytorch", specifier="==2.1.0.*"), False),
    (Declaration(line=1, code="", kind="channel", name="conda-forge"), False),
    # torchrec's nvt Dockerfile: PyTorch's nightly and test channels ended with the main one
    (Declaration(line=1, code="", kind="channel", name="pytorch-nightly"), True),
    (Declaration(line=1, code="", kind="channel",
                 name="https://conda.anaconda.org/pytorch-test/"), True),
    (Declaration(line=1, code="", kind="channel", name="pytorch-lts-fork"), False),
    (Declaration(line=1, code="", kind="package", name="pytorch"), False)])
def test_the_end_of_the_pytorch_channel_touches_what_installs_new_torch_from_it(declaration,
                                                                               touched):
    subject = EnvironmentSubject(kind="channel", name="pytorch")
    assert touches(subject, declaration) is touched


@pytest.mark.parametrize(("path", "kind"), [
    ("pyproject.toml", True), ("a/requirements-dev.txt", True), ("constraints.txt", True),
    ("docker/serve-requirements.txt", True), ("test_requirements.txt", True),
    ("requirements/base.txt", True), ("deps/test.in", True), ("MANIFEST.in", False),
    ("Dockerfile", True), ("docker/Dockerfile.cpu", True), ("x.dockerfile", True),
    ("environment.yml", True), ("environment-gpu.yaml", True), ("setup.cfg", True),
    ("conda.yaml", True), ("conda-extras.yaml", True), ("env.yml", True),
    ("conda/pkg/meta.yaml", True), ("envoy.yml", False),
    ("setup.py", True), ("scripts/install.sh", True), ("notes.txt", False),
    ("config.yml", False), ("tox.ini", False)])
def test_which_files_are_environment_files(path, kind):
    assert is_environment_file(path) is kind


def python_decl(specifier: str) -> Declaration:
    return Declaration(line=1, code="", kind="python", specifier=specifier)


@pytest.mark.parametrize(("specifier", "touched"), [
    (">=3.9", True), (">=3.10", False), ("<3.12,>=3.8", True), ("==3.9.*", True),
    (">3.9", True), ("~=3.11", False), (">=3.11,<4", False), ("", True), ("nonsense", False)])
def test_python_minimum_touches_a_requires_python_that_admits_an_older_one(specifier, touched):
    subject = EnvironmentSubject(kind="python", minimum="3.10")
    assert touches(subject, python_decl(specifier)) is touched


@pytest.mark.parametrize(("path", "specifier", "touched"), [
    # What a package says it supports: any older Python it admits is a claim the release breaks.
    ("pyproject.toml", ">=3.8", True), ("pkg/setup.py", ">=3.6", True),
    ("conda/pkg/meta.yaml", ">=3.7,<3.11", True),
    # A conda environment file's floor is what its users are told to install at (CrypTen's and
    # graphium's env.yml, as their judges read them).
    ("environment.yml", ">=3.8", True), ("env.yml", ">=3.10", False),
    # What installs or runs one: it gets the newest Python it admits, unless pinned below.
    ("docker/Dockerfile", "==3.*", False),
    ("docker/Dockerfile", "==3.9.*", True), (".github/workflows/ci.yml", "==3.8", True)])
def test_an_installer_is_touched_only_where_it_cannot_get_a_newer_python(path, specifier,
                                                                         touched):
    subject = EnvironmentSubject(kind="python", minimum="3.10")
    assert touches(subject, python_decl(specifier), path) is touched


@pytest.mark.parametrize(("version", "touched"), [
    ("12.1", True), ("12.1.1", True), ("12.4", False), ("12.10", False), ("11.8", False)])
def test_a_removed_cuda_touches_that_version(version, touched):
    subject = EnvironmentSubject(kind="cuda", removed="12.1")
    assert touches(subject, Declaration(line=1, code="", kind="cuda", version=version)) is touched


@pytest.mark.parametrize(("specifier", "touched"), [
    ("==0.2.0", True), (">=0.1", True), ("<0.3", True), ("~=0.3", True), ("==0.3.1", False),
    (">=0.4", False), (">=0.3.1,<0.5", False), ("", False), ("===weird", False)])
def test_a_package_requirement_touches_pins_that_admit_an_older_version(specifier, touched):
    subject = EnvironmentSubject(kind="package", name="onnxscript", specifier=">=0.3.1")
    pin = Declaration(line=1, code="", kind="package", name="onnxscript", specifier=specifier)
    assert touches(subject, pin) is touched
    other = pin.model_copy(update={"name": "onnx"})
    assert not touches(subject, other)


def test_a_renamed_package_touches_any_pin_of_the_old_name():
    subject = EnvironmentSubject(kind="renamed_package", name="pytorch-triton",
                                 new_name="triton")
    for specifier in ("", "==3.0.0", ">=99"):
        pin = Declaration(line=1, code="", kind="package", name="pytorch-triton",
                          specifier=specifier)
        assert touches(subject, pin)
    assert not touches(subject, Declaration(line=1, code="", kind="package", name="triton"))


def test_environment_affects_name_the_subject_label(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nrequires-python = ">=3.9"\ndependencies = ["onnxscript>=0.4",'
        ' "pytorch-triton==3.0"]\n')
    (tmp_path / "Dockerfile").write_text(
        "FROM python:3.11\n"
        "RUN pip install torch --index-url https://download.pytorch.org/whl/cu121\n")
    (tmp_path / "requirements.txt").write_text("onnxscript==0.2.0\n")
    index = scan_codebase(str(tmp_path), {})
    subjects = Subjects(environment=(
        EnvironmentSubject(kind="python", minimum="3.10"),
        EnvironmentSubject(kind="cuda", removed="12.1"),
        EnvironmentSubject(kind="package", name="onnxscript", specifier=">=0.3.1"),
        EnvironmentSubject(kind="renamed_package", name="pytorch-triton", new_name="triton")))
    affects = find_affects(subjects, index, "team")
    assert [(a.path, a.line, a.api, a.code) for a in affects] == [
        ("Dockerfile", 2, "cuda 12.1",
         "RUN pip install torch --index-url https://download.pytorch.org/whl/cu121"),
        ("pyproject.toml", 2, "python>=3.10", 'requires-python = ">=3.9"'),
        ("pyproject.toml", 3, "pytorch-triton (now triton)",
         'dependencies = ["onnxscript>=0.4", "pytorch-triton==3.0"]'),
        ("requirements.txt", 1, "onnxscript>=0.3.1", "onnxscript==0.2.0")]


def test_c_plus_plus_builds_that_force_the_old_abi():
    """torchrec's CMakeLists: ``add_definitions("-D_GLIBCXX_USE_CXX11_ABI=0")`` builds against
    the pip libtorch, which uses the C++11 ABI from 2.7; an ``if``/``else`` shows its ``=0``."""
    assert declared("CMakeLists.txt", """\
        find_package(Torch REQUIRED)
        # add_definitions("-D_GLIBCXX_USE_CXX11_ABI=0") was needed for conda's libtorch
        if (TDE_WITH_CXX11_ABI)
            add_definitions("-D_GLIBCXX_USE_CXX11_ABI=1")
        else()
            add_definitions("-D_GLIBCXX_USE_CXX11_ABI=0")
        endif()
        """) == [(6, "abi", "", "0")]
    assert declared("cmake/torch.cmake", "set(FLAGS -D_GLIBCXX_USE_CXX11_ABI 0)\n") == [
        (1, "abi", "", "0")]
    assert declared("setup.py", """\
        from setuptools import setup
        setup(name="ext", python_requires=">=3.10",
              extra_compile_args=["-O3", "-D_GLIBCXX_USE_CXX11_ABI=0"])
        """) == [(2, "python", "", ">=3.10"), (3, "abi", "", "0")]
    assert declared("build.sh", "export CXXFLAGS=-D_GLIBCXX_USE_CXX11_ABI=1\n") == []
    subject = EnvironmentSubject(kind="abi")
    assert subject.label == "the C++11 ABI"
    assert touches(subject, Declaration(line=1, code="", kind="abi", version="0"))
    assert not touches(subject, Declaration(line=1, code="", kind="cuda", version="0"))


def test_the_2_7_abi_item_touches_the_build_that_forces_the_old_one(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text('add_definitions("-D_GLIBCXX_USE_CXX11_ABI=0")\n')
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "CMakeLists.txt").write_text("find_package(Torch REQUIRED)\n")
    index = scan_codebase(str(tmp_path), {})
    affects = find_affects(Subjects(environment=(EnvironmentSubject(kind="abi"),)), index, "t")
    assert [(a.path, a.line, a.api, a.why) for a in affects] == [
        ("CMakeLists.txt", 1, "the C++11 ABI", "compiles C++ with _GLIBCXX_USE_CXX11_ABI=0 "
         "against wheels built with the C++11 ABI")]


def test_cibuildwheel_build_selectors_name_the_pythons_the_wheels_are_for():
    """torchrec's contrib build_wheels.sh builds for CPython 3.9 unless told otherwise."""
    assert declared("tools/build_wheels.sh", """\
        # Use env CIBW_BUILD="cp*-manylinux_x86_64" to build all kinds of CPython.
        export CIBW_BUILD=${CIBW_BUILD:-"cp39-manylinux_x86_64"}
        CIBW_BUILD="cp310-* cp311-*" cibuildwheel --platform linux
        export CIBW_BUILD="cp*-manylinux_x86_64"
        pip download torch-2.1.0-cp39-cp39-linux_x86_64.whl
        """) == [(2, "python", "", "==3.9.*"), (3, "requirements", "cibuildwheel", ""),
                 (3, "python", "", "==3.10.*"), (3, "python", "", "==3.11.*")]
    assert declared("Dockerfile", "FROM ubuntu:22.04\nENV CIBW_BUILD=cp38-*\n") == [
        (2, "python", "", "==3.8.*")]


def test_an_environment_pinned_to_an_older_torch_asks_nothing_of_a_later_release():
    """verl's docker/verl0.4-cu124-torch2.6: the CUDA 12.4 build ``torch==2.6.0``, which
    still has CUDA 12.4 wheels; 2.7 drops 12.4, but the stage runs 2.6 until its pin is changed.
    A stage pinned to the release itself (or one with no exact pin) is still reached."""
    removed = EnvironmentSubject(kind="cuda", removed="12.4")
    index = "--index-url https://download.pytorch.org/whl/cu124"
    stages = index_environment("docker/Dockerfile.base", textwrap.dedent(f"""\
        FROM nvcr.io/nvidia/cuda:12.4.1-devel-ubuntu22.04 AS pinned
        RUN pip install --no-cache-dir torch==2.6.0 torchvision==0.21.0 {index}
        FROM nvcr.io/nvidia/cuda:12.4.1-devel-ubuntu22.04 AS current
        RUN pip install torch==2.7.0 {index}
        FROM nvcr.io/nvidia/cuda:12.4.1-devel-ubuntu22.04 AS ranged
        RUN pip install "torch>=2.6" {index}
        """)).declarations
    builds = [d for d in stages if d.kind == "cuda" and not d.toolkit]
    assert [d.torch for d in builds] == ["2.6.0", "2.7.0", ""]
    assert [touches(removed, d, "docker/Dockerfile.base", "v2.7.0")
            for d in builds] == [False, True, True]
    # Without the release's tag nothing is assumed
    assert touches(removed, builds[0], "docker/Dockerfile.base") is True
    requirements = index_environment("requirements-cu124.txt", textwrap.dedent("""\
        --extra-index-url https://download.pytorch.org/whl/cu124
        torch==2.6.0+cu124
        """)).declarations
    assert {d.torch for d in requirements} == {"2.6.0"}
    assert not any(touches(removed, d, "requirements-cu124.txt", "v2.7.0")
                   for d in requirements)


def test_a_conda_environment_pinned_to_an_older_torch_series_asks_nothing_of_the_release():
    """ColBERT's conda_env.yml: ``python=3.8`` with ``pytorch=1.13.1`` from the pytorch channel
    (conda's ``=`` pins a series: any build of 1.13.1), and conda_env_cpu.yml's
    ``pytorch-cpu=1.13``: both run a 1.13 torch, which 2.5's end of Python 3.8 never reaches.
    A series pin of the release itself (``torch==2.7.*``) still runs it, patch releases too."""
    from watcher.impact.environment.match import older

    dropped = EnvironmentSubject(kind="python", minimum="3.9")
    for text in ("channels:\n  - pytorch\ndependencies:\n  - python=3.8\n  - pytorch=1.13.1\n",
                 "dependencies:\n  - python=3.8\n  - pytorch-cpu=1.13\n"):
        declarations = index_environment("conda_env.yml", text).declarations
        python = next(d for d in declarations if d.kind == "python")
        assert python.torch.endswith(".*") and not python.torch_unseen
        assert not touches(dropped, python, "conda_env.yml", "v2.5.0")
    assert [older("1.13.*", "v2.5.0"), older("2.7.*", "v2.7.0"), older("2.7.*", "v2.7.1"),
            older("2.6.*", "v2.7.1"), older("2.6.0", "v2.7.0")] == [
        True, False, False, True, True]


def after_defaults(path: str, *dependencies: str) -> list[Declaration]:
    """The declarations of a conda environment file listing Anaconda's channel, then
    PyTorch's, with ``dependencies``."""
    listed = "".join(f"  - {dependency}\n" for dependency in dependencies)
    return list(index_environment(path, "channels:\n  - defaults\n  - pytorch\n"
                                        f"dependencies:\n{listed}").declarations)


def test_a_companion_held_below_a_release_holds_torch_below_it():
    """allenact's conda/environment-10.2.yml takes an open ``pytorch>=1.6.0,!=1.8.0`` from the
    pytorch channel beside ``torchvision>=0.7.0,<0.10.0``: every torchvision requires one
    torch (0.9 is 1.8's), so the environment runs torch 1.8 at most, and 2.7's end of the
    channel does not reach it. An open torchvision bounds nothing."""
    from watcher.impact.environment.images import companion_bound

    channel = EnvironmentSubject(kind="channel", name="pytorch")
    held = after_defaults("conda/environment-10.2.yml", "cudatoolkit=10.2",
                          "pytorch>=1.6.0,!=1.8.0", "torchvision>=0.7.0,<0.10.0")
    found = next(d for d in held if d.kind == "channel")
    assert (found.name, found.torch) == ("pytorch", "1.8.*")
    assert not touches(channel, found, "conda/environment-10.2.yml", "v2.7.0")
    assert [companion_bound(name, specifier) for name, specifier in (
        ("torchvision", "<0.10.0"), ("torchvision", "==0.15.2"), ("torchvision", "<=0.16.2"),
        ("torchaudio", "==0.13.1"), ("torchaudio", "<2.2"), ("torchvision", ">=0.7.0"),
        ("numpy", "<2"))] == ["1.8.*", "2.0.*", "2.1.*", "1.13.*", "2.1.*", "", ""]


def test_an_environment_pinned_to_a_dropped_python_runs_the_last_torch_for_it():
    """allenact's conda/environment-base.yml pins ``python=3.8`` and takes an open
    ``pytorch::pytorch``: 2.5 dropped 3.8, so it runs torch 2.4 at most, and 2.7's end of the
    pytorch channel changes nothing there. The Python floors are about that very Python and
    still reach it (2.5's 3.8 items, 2.9's 3.10 minimum)."""
    declarations = after_defaults("conda/environment-base.yml", "python=3.8",
                                  "pytorch::pytorch>=1.6.0,!=1.8.0")
    python = next(d for d in declarations if d.kind == "python")
    channel = next(d for d in declarations if d.kind == "channel")
    assert channel.python_holds_torch == "2.4.*" and not channel.torch
    assert not touches(EnvironmentSubject(kind="channel", name="pytorch"), channel,
                       "conda/environment-base.yml", "v2.7.0")
    assert touches(EnvironmentSubject(kind="python", minimum="3.10"), python,
                   "conda/environment-base.yml", "v2.9.0")


@pytest.mark.parametrize(("python", "held"), [
    ("python>=3.6,<=3.8", "2.4.*"), ("python<3.9", "2.4.*"), ("python>=3.6,<3.10", "2.8.*"),
    ("python>=3.8", ""), ("python=3.10", "")])
def test_a_python_range_ending_at_a_dropped_python_runs_the_last_torch_for_it(python, held):
    """tky823's tutorial environments cap ``python>=3.6,<=3.8`` beside an open ``pytorch``
    from the pytorch channel: the newest Python they admit is 3.8, so torch 2.4 at most, and
    2.7's end of the channel changes nothing there. A range reaching a Python torch still
    builds for, or with no upper bound, holds nothing."""
    declarations = after_defaults("environment-cpu.yaml", python, "pytorch>=1.8.0")
    channel = next(d for d in declarations if d.kind == "channel")
    assert channel.python_holds_torch == held
    assert touches(EnvironmentSubject(kind="channel", name="pytorch"), channel,
                   "environment-cpu.yaml", "v2.7.0") == (not held or held == "2.8.*")


def test_a_cuda_toolkit_image_is_no_build_of_torch():
    """text-generation-inference builds on ``nvidia/cuda:12.4.1-devel`` and pip installs
    ``torch==2.7`` from PyPI: the wheel brings its own CUDA 12.6 libraries, and the image's
    12.4 toolkit only compiles the kernels (same major version). 2.7's end of CUDA 12.4 builds
    touches a torch installed from the cu124 index, not the image."""
    removed = EnvironmentSubject(kind="cuda", removed="12.4")
    declarations = index_environment("Dockerfile", textwrap.dedent("""\
        FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS builder
        RUN pip install torch==2.7
        FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS indexed
        RUN pip install torch --index-url https://download.pytorch.org/whl/cu124
        """)).declarations
    assert [(d.line, d.toolkit, touches(removed, d, "Dockerfile", "v2.7.0"))
            for d in declarations if d.kind == "cuda"] == [
        (1, True, False), (3, True, False), (4, False, True)]


def test_an_image_tagged_with_its_torch_brings_it():
    """``FROM verlai/verl:base-verl0.4-cu124-cudnn9.8-torch2.6-fa2.7.4``: an image built with
    torch 2.6 (its tag says so) runs that torch; the stage installs none, so it declares
    nothing, its cu124 included."""
    assert declared("docker/Dockerfile.app", """\
        FROM verlai/verl:base-verl0.4-cu124-cudnn9.8-torch2.6-fa2.7.4
        RUN pip install vllm==0.8.5
        FROM verlai/verl:base-verl0.4-cu124-cudnn9.8-fa2.7.4
        """) == [(3, "cuda", "", "12.4")]


def unseen(path: str, text: str) -> list[tuple[int, str, bool]]:
    """(line, kind, torch_unseen) of each Python and CUDA declaration."""
    index = index_environment(path, textwrap.dedent(text))
    return [(d.line, d.kind, d.torch_unseen) for d in index.declarations
            if d.kind in ("python", "cuda")]


def test_an_installer_that_names_no_torch_marks_its_python_and_cuda_unseen():
    """TorchServe's kserve transformer image: ``FROM python:3.8.18-slim`` that pip installs
    only kserve. Whether torch ever lands there depends on kserve's dependencies, which the
    file does not say; a stage installing torch or a torch-family package (torchvision
    requires one torch) gets the release's wheels for its Python."""
    assert unseen("kserve/transformer.Dockerfile", """\
        FROM python:3.8.18-slim
        RUN pip install --upgrade pip
        RUN pip install -e ./kserve/python/kserve
        FROM python:3.8-slim AS vision
        RUN pip install torchvision
        FROM nvidia/cuda:11.8.0-base
        RUN pip install -r requirements.txt
        """) == [(1, "python", True), (4, "python", False), (6, "cuda", True)]
    assert unseen("environment.yml", """\
        dependencies:
          - python=3.8
          - pip:
            - -r requirements.txt
        """) == [(2, "python", True)]
    assert unseen("conda.yaml", """\
        channels:
          - pytorch
        dependencies:
          - python=3.8
          - pytorch
        """) == [(4, "python", False)]
    assert unseen("scripts/setup.sh", "conda install -y python=3.8\npip install torch\n") == [
        (1, "python", False)]
    assert unseen("scripts/setup.sh", "conda install -y python=3.8\npip install .\n") == [
        (1, "python", True)]
    # package metadata declares what it supports, not an environment that installs it
    assert unseen("setup.cfg", "[options]\npython_requires = >=3.8\n") == [
        (2, "python", False)]


def environment_uses(root, subject: EnvironmentSubject, release: str | None = None) -> list:
    """The uses one environment requirement finds in the codebase at ``root``."""
    return find_affects(Subjects(environment=(subject,)), scan_codebase(str(root), {}), "team",
                        release=release)


def test_a_python_is_breaks_where_torch_is_named_check_where_it_may_come_nothing_else(tmp_path):
    """wenet's Triton client image installs only soundfile: it never gets torch, so a release
    dropping its Python 3.8 does not reach it. An image that installs a service cloned during
    the build, a lock file or a package requiring torch may get one (``check``)."""
    (tmp_path / "Dockerfile").write_text("FROM python:3.8-slim\nRUN pip install soundfile\n")
    (tmp_path / "torch.Dockerfile").write_text("FROM python:3.8-slim\nRUN pip install torch\n")
    (tmp_path / "cloned.Dockerfile").write_text(
        "FROM python:3.8-slim\nRUN git clone https://x/kserve && pip install -e ./kserve/python\n")
    (tmp_path / "poetry.Dockerfile").write_text(
        "FROM python:3.8-slim\nCOPY . .\nRUN pip install poetry && poetry install\n")
    (tmp_path / "lightning.Dockerfile").write_text(
        "FROM python:3.8-slim\nRUN pip install lightning==2.4.0\n")
    (tmp_path / "setup.py").write_text("from setuptools import setup\n"
                                       "setup(python_requires='>=3.8')\n")
    affects = environment_uses(tmp_path, EnvironmentSubject(kind="python", minimum="3.9"))
    assert [(a.path, a.tier) for a in affects] == [
        ("setup.py", "breaks"), ("torch.Dockerfile", "breaks"), ("cloned.Dockerfile", "check"),
        ("lightning.Dockerfile", "check"), ("poetry.Dockerfile", "check")]
    assert affects[2].why.endswith("if it gets torch (./kserve/python may bring it)")
    assert affects[3].why.endswith("if it gets torch (package lightning may bring it)")


def test_torch_named_in_a_requirements_file_the_environment_installs_is_breaks(tmp_path):
    """asteroid's environment.yml pins python=3.8 and pip-installs ``-r requirements.txt``,
    which names torch: that environment gets the release's wheels after all. The file is
    found beside the declaring one or from the root (a Docker build context), an absolute
    path inside the image by its name."""
    (tmp_path / "requirements.txt").write_text("torch>=2.0.0\n")
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "environment.yml").write_text(
        "dependencies:\n  - python=3.8\n  - pip:\n    - -r ../requirements.txt\n")
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "Dockerfile").write_text(
        "FROM python:3.8-slim\nCOPY requirements.txt /app/\n"
        "RUN pip install --no-cache-dir -r /app/requirements.txt\n")
    (tmp_path / "docker" / "serve.Dockerfile").write_text(
        "FROM python:3.8-slim\nRUN pip install -r docker/serve-requirements.txt\n")
    (tmp_path / "docker" / "serve-requirements.txt").write_text("flask\n")
    affects = environment_uses(tmp_path, EnvironmentSubject(kind="python", minimum="3.9"))
    # serve-requirements.txt is the codebase's and names no torch: that image never gets it
    assert [(a.path, a.tier) for a in affects] == [
        ("docker/Dockerfile", "breaks"), ("envs/environment.yml", "breaks")]
    assert declared("envs/environment.yml", "dependencies:\n  - pip:\n    - -r base.txt\n") == [
        (3, "requirements", "base.txt", "")]


def test_an_include_of_an_include_and_the_local_package_install_torch(tmp_path):
    """asteroid: ``-r file:requirements.txt`` includes ``requirements/install.txt``, which
    includes ``./torchhub.txt`` (read beside the including file, as pip does), which names
    torch; ``pip install -e .`` installs the package whose setup.py requires torch. A folder
    or file the codebase does not hold (cloned during the build) proves nothing."""
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements.txt").write_text("-r requirements/install.txt\n")
    (tmp_path / "requirements" / "install.txt").write_text("-r ./torchhub.txt\nPyYAML\n")
    (tmp_path / "requirements" / "torchhub.txt").write_text("torch>=2.0.0\n")
    (tmp_path / "environment.yml").write_text(
        "dependencies:\n  - python=3.8\n  - pip:\n    - -r file:requirements.txt\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "setup.py").write_text(
        "from setuptools import setup\nsetup(install_requires=['torchvision'])\n")
    (tmp_path / "Dockerfile").write_text("FROM python:3.8\nCOPY . .\nRUN pip install -e ./pkg\n")
    (tmp_path / "cloned.Dockerfile").write_text(
        "FROM python:3.8\nRUN git clone https://x/y && pip install -e ./y/python\n")
    affects = environment_uses(tmp_path, EnvironmentSubject(kind="python", minimum="3.9"))
    assert [(a.path, a.tier) for a in affects] == [
        ("Dockerfile", "breaks"), ("environment.yml", "breaks"), ("cloned.Dockerfile", "check")]


def test_an_ngc_framework_image_declares_the_python_its_month_ships():
    """wenet's Triton server image, ``nvcr.io/nvidia/tritonserver:23.01-py3``, runs Python 3.8
    (Ubuntu 20.04) although no tag spells it; it pip installs torch, so a release dropping 3.8
    leaves it on the last torch that had a wheel for it. NVIDIA's CUDA images are tagged by
    CUDA version, not month, and are read as such."""
    assert declared("Dockerfile.server", """\
        FROM nvcr.io/nvidia/tritonserver:23.01-py3
        RUN pip3 install torch torchaudio
        FROM nvcr.io/nvidia/tensorflow:23.04-tf2-py3
        FROM nvcr.io/nvidia/tritonserver:25.02-py3-sdk
        FROM nvcr.io/nvidia/tritonserver:20.03-py3
        FROM nvcr.io/nvidia/cuda:12.1.0-runtime-ubuntu22.04
        FROM nvcr.io/nvidia/tritonserver:latest
        """) == [(1, "python", "", "==3.8.*"), (2, "package", "torch", ""),
                 (2, "package", "torchaudio", ""), (3, "python", "", "==3.10.*"),
                 (4, "python", "", "==3.12.*"), (5, "python", "", ">=3.6,<3.9"),
                 (6, "cuda", "", "12.1")]


def test_installers_whose_packages_a_line_does_not_name_are_recorded():
    """A lock file, an environment file or a script may bring torch: each is kept as what the
    environment installs from, resolved against the codebase when the file is there."""
    assert [(line, name) for line, kind, name, _ in declared("Dockerfile", """\
        FROM python:3.8
        RUN pip install poetry && poetry install --no-root
        RUN conda env create -f envs/gpu.yml && bash scripts/setup.sh
        RUN ./install.sh && python setup.py develop
        RUN echo ./not-run.sh
        RUN CIBW_BUILD=cp39-manylinux_x86_64 cibuildwheel --platform linux
        """) if kind == "requirements"] == [
        (2, "poetry install"), (3, "envs/gpu.yml"), (3, "scripts/setup.sh"),
        (4, "install.sh"), (4, "setup.py develop"), (6, "cibuildwheel")]


@pytest.mark.parametrize(("specifier", "only"), [
    ("==0.2.0", True), ("<0.3", True), (">=0.1,<0.3.1", True), ("~=0.2.0", True),
    (">=0.2.4,<0.6.1", False), (">=0.1", False), ("==0.3.1", False), ("", False)])
def test_a_pin_breaks_only_where_it_admits_no_version_the_release_accepts(specifier, only):
    """Olive's test requirements pin ``onnxscript>=0.2.4,<0.6.1``: it admits versions 2.8
    rejects, but pip picks the newest it admits, 0.6.0, which is accepted: a floor to raise
    (``check``), not a break. ``==0.2.0`` or ``<0.3`` can only install rejected ones."""
    from watcher.impact.environment import admits_only_rejected

    assert admits_only_rejected(specifier, ">=0.3.1") is only


def test_a_range_that_also_admits_accepted_versions_is_check(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch\nonnxscript>=0.2.4,<0.6.1\n")
    (tmp_path / "requirements-pinned.txt").write_text("torch\nonnxscript==0.2.0\n")
    affects = environment_uses(
        tmp_path, EnvironmentSubject(kind="package", name="onnxscript", specifier=">=0.3.1"))
    assert [(a.path, a.tier) for a in affects] == [
        ("requirements-pinned.txt", "breaks"), ("requirements.txt", "check")]
    assert affects[1].why.endswith("(it also admits newer ones, which pip may pick)")


def cu128_drops_old_gpus(root) -> list:
    """The uses 2.8's removal of Maxwell, Pascal and Volta from the CUDA 12.8 build finds."""
    return environment_uses(root, EnvironmentSubject(kind="gpu_arch", removed="12.8",
                                                     name="Maxwell/Pascal/Volta"), "v2.8.0")


def test_a_cuda_build_that_drops_gpus_is_check_where_torch_of_that_build_is_installed(tmp_path):
    """GPT-SoVITS's install.sh installs an unpinned torch from the cu128 index: 2.8 drops
    Maxwell, Pascal and Volta from that build, which matters only on those GPUs (``check``);
    a script pinned to an older torch runs that one."""
    (tmp_path / "install.sh").write_text(
        "pip install torch torchaudio --index-url https://download.pytorch.org/whl/cu128\n")
    (tmp_path / "old.sh").write_text(
        "pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu128\n")
    (tmp_path / "cu126.sh").write_text(
        "pip install torch --index-url https://download.pytorch.org/whl/cu126\n")
    affects = cu128_drops_old_gpus(tmp_path)
    assert [(a.path, a.tier, a.api) for a in affects] == [
        ("install.sh", "check", "CUDA 12.8 builds on Maxwell/Pascal/Volta GPUs")]
    assert affects[0].why == ("installs the CUDA 12.8 build, which no longer runs on "
                              "Maxwell/Pascal/Volta GPUs (check the GPUs it runs on)")


def test_a_build_that_targets_only_other_gpus_is_not_touched_by_their_removal(tmp_path):
    """OLMo-core's image installs the cu128 build but builds for Hopper and Blackwell only
    (``TORCH_CUDA_ARCH_LIST="9.0 10.0"``): dropping Maxwell, Pascal and Volta from that build
    cannot reach it; a list naming 7.0 can. A PowerShell installer is read as a script."""
    (tmp_path / "Dockerfile").write_text(
        'FROM nvidia/cuda:12.8.1-devel-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST="9.0 10.0"\n'
        "RUN pip install torch --index-url https://download.pytorch.org/whl/cu128\n")
    (tmp_path / "volta.Dockerfile").write_text(
        "FROM nvidia/cuda:12.8.1-devel-ubuntu22.04\nARG TORCH_CUDA_ARCH_LIST=7.0;8.0+PTX\n"
        "RUN pip install torch --index-url https://download.pytorch.org/whl/cu128\n")
    (tmp_path / "install.ps1").write_text(
        "pip install torch --index-url https://download.pytorch.org/whl/cu128\n")
    affects = cu128_drops_old_gpus(tmp_path)
    assert sorted({a.path for a in affects}) == ["install.ps1", "volta.Dockerfile"]
    assert declared("Dockerfile", 'ENV TORCH_CUDA_ARCH_LIST="9.0 10.0"\n') == [
        (1, "gpu_targets", "", "9.0 10.0")]


def test_a_script_function_wrapping_pip_install_is_read_as_pip_at_each_call(tmp_path):
    """GPT-SoVITS installs torch through functions of its own scripts: bash's
    ``run_pip_quiet() { ... pip install "$@" ... }`` and PowerShell's ``function Invoke-Pip {
    & pip install @Args }``. Each call is the pip install it wraps, with the call's arguments; a
    function installing a fixed list is no wrapper, and its name elsewhere installs nothing."""
    (tmp_path / "install.sh").write_text(textwrap.dedent("""\
        run_pip_quiet() {
            local output
            output=$(pip install "$@" 2>&1) || { echo "$output"; exit 1; }
        }
        setup_tools() {
            pip install ninja
        }
        if [ "$USE_CUDA" = true ]; then
            run_pip_quiet torch torchcodec --index-url "https://download.pytorch.org/whl/cu128"
        fi
        echo run_pip_quiet done; setup_tools torch
        """))
    (tmp_path / "install.ps1").write_text(textwrap.dedent("""\
        function Invoke-Pip {
            $output = & pip install @Args 2>&1
        }
        invoke-pip torch --index-url "https://download.pytorch.org/whl/cu128"
        """))
    assert [(a.path, a.line) for a in cu128_drops_old_gpus(tmp_path)] == [
        ("install.ps1", 4), ("install.sh", 9)]
    names = [(line, name) for line, kind, name, _ in declared(
        "install.sh", (tmp_path / "install.sh").read_text()) if kind == "package"]
    assert names == [(6, "ninja"), (9, "torch"), (9, "torchcodec")]


def test_uv_takes_torch_from_the_pytorch_index_its_sources_name():
    """torch-uncertainty's pyproject: ``[tool.uv.sources]`` sends torch to an explicit
    ``pytorch-cu128`` index for the ``gpu`` extra: that index's CUDA is the build it installs.
    An explicit index no torch-family source names (``other-cu126``) brings no torch; one
    that is not explicit serves every package."""
    assert declared("pyproject.toml", """\
        [project]
        name = "uq"
        dependencies = ["torch>=2.1"]

        [tool.uv.sources]
        torch = [
          { index = "pytorch-cpu", extra = "cpu" },
          { index = "pytorch-cu128", extra = "gpu" },
        ]
        numpy = { index = "other-cu126" }

        [[tool.uv.index]]
        name = "pytorch-cpu"
        url = "https://download.pytorch.org/whl/cpu"
        explicit = true

        [[tool.uv.index]]
        name = "pytorch-cu128"
        url = "https://download.pytorch.org/whl/cu128"
        explicit = true

        [[tool.uv.index]]
        name = "other-cu126"
        url = "https://download.pytorch.org/whl/cu126"
        explicit = true

        [[tool.uv.index]]
        name = "everything"
        url = "https://download.pytorch.org/whl/cu124"
        """) == [(3, "package", "torch", ">=2.1"), (19, "cuda", "", "12.8"),
                 (29, "cuda", "", "12.4")]


def test_pixi_features_install_torch_from_the_index_each_names():
    """graph_weather's pyproject: pixi's ``cuda`` feature takes torch from the cu128 index
    and pins ``cuda-version``; its conda dependencies hold Python. A ``pixi.toml`` is the
    same manifest at the top level, its conda torch from the channel it names."""
    assert declared("pyproject.toml", """\
        [project]
        name = "weather"

        [tool.pixi.project]
        channels = ["conda-forge"]

        [tool.pixi.feature.cuda.target.linux-64.dependencies]
        cuda-version = "==12.8"

        [tool.pixi.dependencies]
        python = "3.12.*"
        pandas = "*"

        [tool.pixi.feature.cuda.pypi-dependencies]
        torch = { version = ">=2.7.0", index = "https://download.pytorch.org/whl/cu128" }

        [tool.pixi.feature.cpu.pypi-dependencies]
        torch = { version = ">=2.7.0", index = "https://download.pytorch.org/whl/cpu" }
        """) == [(11, "python", "", "==3.12.*"), (12, "package", "pandas", ""),
                 (15, "package", "torch", ">=2.7.0"), (15, "cuda", "", "12.8"),
                 (8, "cuda", "", "12.8"), (18, "package", "torch", ">=2.7.0")]
    manifest = declared("pixi.toml", """\
        [workspace]
        channels = ["pytorch", "conda-forge"]
        platforms = ["linux-64"]

        [dependencies]
        python = ">=3.9"
        pytorch = "2.4.*"

        [pypi-options]
        extra-index-urls = ["https://download.pytorch.org/whl/cu121"]
        """)
    assert manifest == [(6, "python", "", ">=3.9"), (7, "package", "pytorch", "==2.4.*"),
                        (7, "channel", "pytorch", "==2.4.*"), (10, "cuda", "", "12.1")]
    assert is_environment_file("envs/pixi.toml")


def test_a_package_requiring_torch_below_a_release_never_runs_it():
    """torch-uncertainty requires ``torch>=2.1,<2.9`` in its dependencies and both extras, and
    takes the gpu extra's torch from the cu128 index: 2.8's end of Maxwell/Pascal/Volta in
    cu128 builds reaches it, 2.11's Volta change in the same builds never can (2.8 at most).
    One torch requirement left open (another extra) may install any release."""
    from watcher.impact.environment.images import torch_bound

    volta = EnvironmentSubject(kind="gpu_arch", name="Volta", removed="12.8")
    capped = textwrap.dedent("""\
        [project]
        name = "uq"
        dependencies = ["torch>=2.1,<2.9"]
        [project.optional-dependencies]
        gpu = ["torch>=2.1.0,<2.9"]
        [[tool.uv.index]]
        url = "https://download.pytorch.org/whl/cu128"
        """)
    build = next(d for d in index_environment("pyproject.toml", capped).declarations
                 if d.kind == "cuda")
    assert build.torch == "2.8.*"
    assert touches(volta, build, "pyproject.toml", "v2.8.0")
    assert not touches(volta, build, "pyproject.toml", "v2.11.0")
    opened = capped.replace('gpu = ["torch>=2.1.0,<2.9"]', 'gpu = ["torch>=2.1.0"]')
    build = next(d for d in index_environment("pyproject.toml", opened).declarations
                 if d.kind == "cuda")
    assert not build.torch and touches(volta, build, "pyproject.toml", "v2.11.0")
    assert [torch_bound(specifier) for specifier in (
        ">=2.1,<2.9", "<=2.5.1", "<2.8.2", "<3", ">=2.0", "==2.5.*")] == [
        "2.8.*", "2.5.*", "2.8.*", "", "", ""]
