"""What the runtime comparison (``tests/test_atlas_runtime.py``) found the atlas reading
wrong, each on a small wheel: class-body attributes, enum members, generated constructors,
``__new__``, overloads beside their implementation, a stub's and ``TYPE_CHECKING``'s imports,
``del``, ``__main__`` blocks, a package's binding over its submodule, aliases no reading
follows, messages held in constants, deprecation wrappers; and the diff's flags."""

from __future__ import annotations

import time
from pathlib import Path

from atlas_support import V1, write_wheel

from watcher.impact.atlas import Atlas, Param, build_atlas, diff, dumps, loads
from watcher.impact.atlas.compare import ApiChange, internal


def _atlas(tmp_path: Path, version: str = "2.6.0", **files: str) -> Atlas:
    folder = tmp_path / version
    folder.mkdir(exist_ok=True)
    return build_atlas(write_wheel(folder, version, {**V1, **files}))


def _params(atlas: Atlas, name: str) -> list[tuple[str, str, str | None]]:
    canonical = atlas.resolve(name)
    assert canonical is not None, name
    return [(p.name, p.kind, p.default) for p in atlas.signature(canonical) or ()]


FUNCTION_V1 = """
from torch import _C
class Function:
    @classmethod
    def apply(cls, *args):
        return None
"""
FUNCTION_V2 = """
from torch import _C
class Function:
    apply = _C._FunctionBase.__dict__["apply"]
"""


def test_a_class_body_assignment_is_a_member_not_a_removal(tmp_path: Path) -> None:
    old = _atlas(tmp_path, "2.6.0", **{"torch/autograd/__init__.py": FUNCTION_V1})
    new = _atlas(tmp_path, "2.7.0", **{"torch/autograd/__init__.py": FUNCTION_V2})
    assert new.resolve("torch.autograd.Function.apply") is not None
    assert not [c for c in diff(old, new) if c.api.endswith("apply")]


ENUMS = """
import enum
class Reduction(enum.Enum):
    MEAN = "mean"
    SUM = "sum"
    _hidden = 0
FORWARD = Reduction.MEAN
"""


def test_enum_members_are_read_and_their_removal_is_one(tmp_path: Path) -> None:
    old = _atlas(tmp_path, "2.6.0", **{"torch/losses.py": ENUMS})
    assert old.kind(old.resolve("torch.losses.Reduction.SUM") or "") == "data"
    assert old.resolve("torch.losses.Reduction._hidden") is None
    # A module name bound to a member (``F = _ComputationType.FORWARD``) is one it has.
    assert old.spells("torch.losses.FORWARD")
    new = _atlas(tmp_path, "2.7.0", **{"torch/losses.py": ENUMS.replace('    SUM = "sum"\n', "")})
    assert ApiChange("torch.losses.Reduction.SUM", "removed") in diff(old, new)


DATACLASSES = """
import dataclasses
from dataclasses import KW_ONLY, dataclass, field
from typing import ClassVar, NamedTuple

@dataclass
class Base:
    size: int
    scale: float = 0.5

@dataclasses.dataclass(frozen=True)
class Config(Base):
    name: str = "x"
    count: ClassVar[int] = 0
    tags: list = field(default_factory=list)
    hidden: int = field(default=1, init=False)
    _: KW_ONLY
    strict: bool = True

@dataclass(init=False)
class Manual:
    size: int

class Pair(NamedTuple):
    left: int
    right: int = 0

class Cached:
    def __new__(cls, key, *, fresh=False):
        return object.__new__(cls)
    def __init__(self, *args, **kwargs):
        pass
"""


def test_generated_constructors_and_new_are_read_as_inspect_reads_them(tmp_path: Path) -> None:
    atlas = _atlas(tmp_path, **{"torch/configs.py": DATACLASSES})
    assert _params(atlas, "torch.configs.Config") == [
        ("size", "positional_or_keyword", None), ("scale", "positional_or_keyword", "0.5"),
        ("name", "positional_or_keyword", "'x'"), ("tags", "positional_or_keyword", "..."),
        ("strict", "keyword_only", "True")]
    assert atlas.signature("torch.configs.Manual") is None  # init=False: no constructor made
    assert _params(atlas, "torch.configs.Pair") == [
        ("left", "positional_or_keyword", None), ("right", "positional_or_keyword", "0")]
    assert _params(atlas, "torch.configs.Cached") == [
        ("key", "positional_or_keyword", None), ("fresh", "keyword_only", "False")]


OVERLOADED = """
from typing import overload
class PackedSequence:
    @overload
    def to(self, dtype, non_blocking=False): ...
    @overload
    def to(self, device=None, dtype=None, non_blocking=False): ...
    def to(self, *args, **kwargs):
        return self
"""


def test_an_implementation_after_its_overloads_is_what_a_call_meets(tmp_path: Path) -> None:
    old = _atlas(tmp_path, "2.6.0", **{"torch/rnn.py": OVERLOADED})
    assert old.signature("torch.rnn.PackedSequence.to") == (
        Param("args", "var_positional"), Param("kwargs", "var_keyword"))
    changed = OVERLOADED.replace("device=None, dtype=None", "dtype=None")
    new = _atlas(tmp_path, "2.7.0", **{"torch/rnn.py": changed})
    assert diff(old, new) == []  # a change of the stubs alone is no removed parameter


def test_a_stubs_imports_and_type_variables_are_no_attributes(tmp_path: Path) -> None:
    stub = """
from typing import TypeVar
from torch.fx import Node as FxNode
from torch.types import Device as Device
T = TypeVar("T")
class GreenContext: ...
"""
    atlas = _atlas(tmp_path, **{
        "torch/_C/__init__.pyi": stub, "torch/fx.py": "class Node:\n    pass\n",
        "torch/types.py": "class Device:\n    pass\n",
        "torch/__init__.py": V1["torch/__init__.py"] + "from torch._C import *\n"})
    assert atlas.resolve("torch.GreenContext") is not None
    assert atlas.resolve("torch.Device") is not None  # ``as Device``: re-exported (PEP 484)
    assert atlas.resolve("torch.FxNode") is None
    assert atlas.resolve("torch.T") is None


MODULE_SHAPES = """
from typing import TYPE_CHECKING
from torch._base import _Base

if TYPE_CHECKING:
    from torch.types import Device
    from torch.shapes import *

class Derived(_Base):
    pass

del _Base

def helper():
    return 1

helper_alias = helper
del helper

if __name__ == "__main__":
    parser = object()
"""


def test_type_checking_imports_del_and_main_blocks(tmp_path: Path) -> None:
    atlas = _atlas(tmp_path, **{
        "torch/shapes_api.py": MODULE_SHAPES,
        "torch/_base.py": "class _Base:\n    def size(self):\n        return 0\n",
        "torch/types.py": "Device = str\n", "torch/shapes.py": "def square(x):\n    return x\n"})
    assert atlas.resolve("torch.shapes_api.Device") is None  # for annotations only
    assert atlas.resolve("torch.shapes_api.square") is not None  # a star import stays
    assert atlas.resolve("torch.shapes_api.helper") is None  # deleted
    assert atlas.spells("torch.shapes_api.helper_alias")
    # A base deleted once the class derives from it still is its base.
    assert atlas.resolve("torch.shapes_api.Derived.size") == "torch._base._Base.size"
    assert atlas.resolve("torch.shapes_api.parser") is None  # never runs on import


def test_a_packages_binding_wins_over_its_submodule_of_that_name(tmp_path: Path) -> None:
    atlas = _atlas(tmp_path, **{
        "torch/_hops/__init__.py": "from torch._hops.cond import cond\n",
        "torch/_hops/cond.py": "def cond(pred, true_fn, false_fn, operands=()):\n    pass\n",
        "torch/__init__.py": V1["torch/__init__.py"] + "from torch._hops import cond as cond\n"})
    assert atlas.resolve("torch.cond") == "torch._hops.cond.cond"
    assert atlas.kind("torch._hops.cond.cond") == "function"


def test_a_packages_binding_wins_over_its_public_submodule_of_that_name(tmp_path: Path) -> None:
    """``torch.quantization`` imports the function ``fuse_modules`` from its public submodule of
    that name (and ``torch.nn.utils`` does ``weight_norm``): at run time the attribute is the
    function, so a call ``torch.quantization.fuse_modules(...)`` is the function's, before and
    after the atlas is written to disk and read back; the submodule's own names stay."""
    atlas = _atlas(tmp_path, **{
        "torch/quantization/__init__.py": "from .fuse_modules import fuse_modules\n",
        "torch/quantization/fuse_modules.py": "def fuse_modules(model, names):\n    pass\n"
                                              "def fuse_known_modules(mods):\n    pass\n"})
    for read in (atlas, loads(dumps(atlas))):
        assert read.resolve("torch.quantization.fuse_modules") == \
            "torch.quantization.fuse_modules.fuse_modules"
        assert read.kind("torch.quantization.fuse_modules.fuse_modules") == "function"
        assert read.resolve("torch.quantization.fuse_modules.fuse_known_modules") == \
            "torch.quantization.fuse_modules.fuse_known_modules"


def test_an_alias_no_reading_follows_is_still_a_name(tmp_path: Path) -> None:
    atlas = _atlas(tmp_path, **{
        "torch/_ops.py": "class _Ops:\n    pass\nops = _Ops()\n",
        "torch/quantized.py": "from torch._ops import ops\nquantized_lstm = "
                              "ops.aten.quantized_lstm\nelsewhere = numpy.float32\n"})
    assert atlas.spells("torch.quantized.quantized_lstm")
    assert not atlas.spells("torch.quantized.elsewhere")  # outside the package


def test_a_message_held_in_a_module_constant_is_its_text(tmp_path: Path) -> None:
    source = """
import warnings
_CONTEXT_STACK_DEPRECATION = (
    "The context stack is deprecated; " "use torch.compiler instead."
)
def push_context():
    warnings.warn(_CONTEXT_STACK_DEPRECATION, FutureWarning)
"""
    atlas = _atlas(tmp_path, **{"torch/contexts.py": source})
    assert atlas.deprecated("torch.contexts.push_context") == \
        "The context stack is deprecated; use torch.compiler instead."


def test_a_message_held_in_an_imported_constant_or_a_local_is_its_text(tmp_path: Path) -> None:
    atlas = _atlas(tmp_path, **{
        "torch/ao/utils.py": 'DEPRECATION_WARNING = "torch.ao is deprecated; use torchao."\n',
        "torch/ao/quantize.py": "import typing_extensions\n"
                                "from torch.ao.utils import DEPRECATION_WARNING\n"
                                "@typing_extensions.deprecated(DEPRECATION_WARNING)\n"
                                "def prepare(model):\n    return model\n",
        "torch/graph.py": "import warnings\ndef traverse(dp):\n    msg = 'use traverse_dps'\n"
                          "    warnings.warn(msg, FutureWarning)\n"})
    assert atlas.deprecated("torch.ao.quantize.prepare") == "torch.ao is deprecated; use torchao."
    assert atlas.deprecated("torch.graph.traverse") == "use traverse_dps"


HELPER = """
import functools
import logging

def deprecated(module, new, old_name=None, extra_msg=None):
    @functools.wraps(new)
    def wrapped(*args, **kwargs):
        logging.warning(f"{module.__name__}.{old_name} is deprecated. Use {new.__name__}.")
        return new(*args, **kwargs)
    return wrapped

def registered(module, new):
    return new
"""
MODEL = """
import torch.runtime
from torch.helpers import deprecated, registered
from . import model as this_module

world_size = deprecated(this_module, torch.runtime.world_size,
                        "world_size() will be removed in release 2.7.")
ordinal = registered(this_module, torch.runtime.world_size)
"""


def test_a_deprecation_wrapper_is_read_by_what_its_helper_does(tmp_path: Path) -> None:
    atlas = _atlas(tmp_path, **{
        "torch/helpers.py": HELPER, "torch/model.py": MODEL,
        "torch/runtime.py": "def world_size(group=None):\n    return 1\n"})
    assert atlas.deprecated("torch.model.world_size") == \
        "world_size() will be removed in release 2.7."
    assert _params(atlas, "torch.model.world_size") == [
        ("group", "positional_or_keyword", "None")]
    assert atlas.deprecated("torch.model.ordinal") is None  # its helper warns of nothing
    # Named "deprecated" but warning of nothing: no marker (the shape, not the name).
    quiet = _atlas(tmp_path, "2.7.0", **{
        "torch/helpers.py": "def deprecated(module, new, msg=None):\n    return new\n",
        "torch/model.py": MODEL, "torch/runtime.py": "def world_size(group=None):\n    pass\n"})
    assert quiet.deprecated("torch.model.world_size") is None


def test_a_function_left_only_to_raise_is_flagged_in_the_diff(tmp_path: Path) -> None:
    from atlas_support import V2

    old = build_atlas(write_wheel(tmp_path, "2.6.0"))
    new = build_atlas(write_wheel(tmp_path, "2.7.0", V2))
    found = next(c for c in diff(old, new) if c.api == "torch.cholesky")
    assert found.change == "removed" and found.raises
    assert found.to_json_dict()["raises"] is True
    assert ApiChange.from_json_dict(found.to_json_dict()) == found
    assert not any(c.raises for c in diff(old, new) if c.api != "torch.cholesky")


def test_internal_kernels_are_named_as_such() -> None:
    assert internal("torch_xla.experimental.pallas_kernels.ragged_paged_attention_v2.ceil_div")
    assert internal("torch_xla.kernels.flash.run")
    assert not internal("torch_xla.experimental.custom_kernel.flash_attention")
    assert not internal("torch_xla.runtime.xla_device")


def test_a_circle_of_aliases_links_in_linear_time(tmp_path: Path) -> None:
    """Each module aliases the next one's name, the last the first's: the look-up ends at
    its depth limit; looking an unfollowed alias's head up twice made it 2**40 steps."""
    files = {f"torch/ring{i}.py": f"import torch.ring{(i + 1) % 50} as after\n"
                                  f"value = after.value\nother = after.value.attr\n"
             for i in range(50)}
    started = time.perf_counter()
    atlas = _atlas(tmp_path, **files)
    assert time.perf_counter() - started < 10
    assert atlas.resolve("torch.ring0") == "torch.ring0"
