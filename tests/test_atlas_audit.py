"""What the mutation audit of the atlas (issue 31) found no test for: a warning that is no
deprecation, a warning raised by a nested function, a stub beside its source, ``__all__``
grown with ``+=`` and honoured by a star import; in the diff, a stub's unknown default, a
signature made explicit from ``*args, **kwargs``, and a keyword-only parameter made
positional-only."""

from __future__ import annotations

from pathlib import Path

from atlas_support import V1, write_wheel

from watcher.impact.atlas import Atlas, Param, build_atlas, diff

WARNINGS = """
import importlib
import warnings

def quiet_import(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = importlib.import_module(name)
    warnings.warn(f"{name} is slow to import", UserWarning)
    return module

def always_warn(message):
    warnings.simplefilter("always", DeprecationWarning)
    warnings.warn(message)

def deprecate_alias(old, new):
    def wrapper(*args, **kwargs):
        warnings.warn(f"{old} is deprecated, use {new}", FutureWarning)
        return new(*args, **kwargs)
    return wrapper

def old_way(x):
    warnings.warn("old_way is deprecated", category=DeprecationWarning)
    return x
"""

# The stub is the authority for the signature; the source adds the warning it raises and
# the body that only raises.
FUNCTIONAL_PY = """
import warnings

def stft(*args, **kwargs):
    warnings.warn("stft without return_complex is deprecated", FutureWarning)
    return None

def istft(*args, **kwargs):
    raise RuntimeError("istft was removed, use torch.fft.istft")
"""
FUNCTIONAL_PYI = """
def stft(input, n_fft, hop_length=None, *, return_complex=None): ...
def istft(input, n_fft, window=None): ...
"""

HELPERS = """
__all__ = ["exported"]
__all__ += ["added"]

def exported():
    return 1

def added():
    return 2

def not_exported():
    return 3
"""


def _atlas(tmp_path: Path, version: str = "2.6.0", **files: str) -> Atlas:
    return build_atlas(write_wheel(tmp_path, version, {**V1, **files}))


def test_only_a_future_or_deprecation_warning_deprecates(tmp_path: Path) -> None:
    atlas = _atlas(tmp_path, **{"torch/hub.py": WARNINGS})
    assert atlas.deprecated("torch.hub.quiet_import") is None  # a UserWarning
    assert atlas.deprecated("torch.hub.always_warn") is None  # no category: a UserWarning
    # The warning is the wrapper's, raised when the alias is called, not when it is made.
    assert atlas.deprecated("torch.hub.deprecate_alias") is None
    assert atlas.deprecated("torch.hub.old_way") == "old_way is deprecated"


def test_a_stub_gives_the_signature_and_the_source_its_warnings(tmp_path: Path) -> None:
    atlas = _atlas(tmp_path, **{"torch/functional.py": FUNCTIONAL_PY,
                                "torch/functional.pyi": FUNCTIONAL_PYI})
    assert atlas.signature("torch.functional.stft") == (
        Param("input"), Param("n_fft"), Param("hop_length", default="None"),
        Param("return_complex", "keyword_only", "None"))
    assert atlas.deprecated("torch.functional.stft") == (
        "stft without return_complex is deprecated")
    assert atlas.signature("torch.functional.istft") == (
        Param("input"), Param("n_fft"), Param("window", default="None"))
    assert atlas.raises("torch.functional.istft") == "istft was removed, use torch.fft.istft"


def test_a_star_import_binds_what_all_lists_grown_with_plus_equals(tmp_path: Path) -> None:
    init = V1["torch/__init__.py"] + "from torch._helpers import *\n"
    atlas = _atlas(tmp_path, **{"torch/__init__.py": init, "torch/_helpers.py": HELPERS})
    assert atlas.resolve("torch.exported") == "torch._helpers.exported"
    assert atlas.resolve("torch.added") == "torch._helpers.added"
    assert atlas.resolve("torch.not_exported") is None  # defined there, outside __all__


def _changes(before: Atlas, after: Atlas) -> set[tuple[str, str, str | None]]:
    return {(c.api, c.change, c.parameter) for c in diff(before, after)}


def test_a_stubs_unknown_default_is_no_changed_default(tmp_path: Path) -> None:
    before = _atlas(tmp_path, **{"torch/special.pyi": "def erf(input, *, out=...): ...\n"})
    after = _atlas(tmp_path, "2.7.0", **{"torch/special.py": (
        "def erf(input, *, out=None):\n    return input\n")})
    assert before.signature("torch.special.erf") == (Param("input"),
                                                     Param("out", "keyword_only", "..."))
    assert _changes(before, after) == set()


def test_a_signature_made_explicit_from_args_and_kwargs_adds_no_required_parameter(
        tmp_path: Path) -> None:
    before = _atlas(tmp_path, **{"torch/nn/functional.py": (
        "def pad(*args, **kwargs):\n    return None\n"
        "def norm(input, p='fro'):\n    return input\n")})
    after = _atlas(tmp_path, "2.7.0")  # V1's pad(input, pad, mode="constant", value=None)
    assert _changes(before, after) == set()


def test_a_keyword_only_parameter_made_positional_only_is_reported(tmp_path: Path) -> None:
    before = _atlas(tmp_path, **{"torch/nn/functional.py": (
        "def pad(input, *, pad, mode='constant'):\n    return input\n"
        "def norm(input, p='fro'):\n    return input\n")})
    after = _atlas(tmp_path, "2.7.0", **{"torch/nn/functional.py": (
        "def pad(input, pad, /, mode='constant'):\n    return input\n"
        "def norm(input, p='fro'):\n    return input\n")})
    # ``pad(x, pad=[1])`` worked and no longer does; ``input`` became positional-only too.
    assert _changes(before, after) == {("torch.nn.functional.pad", "positional_only", "pad"),
                                       ("torch.nn.functional.pad", "positional_only", "input")}


def test_a_default_written_differently_but_the_same_value_is_no_change(tmp_path: Path) -> None:
    before = _atlas(tmp_path, **{"torch/nn/functional.py": (
        "def pad(input, pad, mode='constant', value=( 0, 1 )):\n    return input\n"
        "def norm(input, p='fro'):\n    return input\n")})
    after = _atlas(tmp_path, "2.7.0", **{"torch/nn/functional.py": (
        'def pad(input, pad, mode="constant", value=(0,\n                                 1)):\n'
        "    return input\n"
        "def norm(input, p='fro'):\n    return input\n")})
    assert after.signature("torch.nn.functional.pad")[-1] == Param(  # type: ignore[index]
        "value", default="(0, 1)")
    assert _changes(before, after) == set()


def test_a_public_looking_module_inside_a_private_package_is_not_public(tmp_path: Path) -> None:
    atlas = _atlas(tmp_path, **{"torch/_internal/helpers.py": "def util(x):\n    return x\n"})
    assert not any(name.startswith("torch._internal") for name in atlas.names)
    assert atlas.resolve("torch._internal.helpers.util") is None


def test_the_release_before_a_major_is_the_newest_of_the_major_before(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from watcher.impact.atlas import AtlasSource, dumps
    from watcher.store import Store

    store = Store.open(tmp_path / "store")
    try:
        atlas = dumps(_atlas(tmp_path))
        for version in ("2.13.0", "2.14.1", "3.0.0"):
            store.put_atlas("torch", version, atlas)
        source = AtlasSource(store=store, index=None, clock=lambda: datetime.now(UTC),
                             bundled=tmp_path / "none")
        assert source.before("torch", "3.0.0") is not None
        assert ("torch", "2.14.1") in source.origin and ("torch", "3.0.0") not in source.origin
    finally:
        store.close()
