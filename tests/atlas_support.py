"""Small wheels of a package shaped like torch, written by the tests that need one: re-exports
from private modules, ``__all__``, stubs with overloads beside C extensions, a scheduler base
class with subclasses (one through a private intermediate class), and, between the two
versions, a removed parameter, changed defaults, a parameter made keyword-only, names removed
(one left as a stub that raises), and new deprecation markers of every kind."""

from __future__ import annotations

import zipfile
from pathlib import Path

COMMON = {
    "torch/_C/__init__.pyi": """
from typing import overload
class TensorBase:
    def add(self, other, *, alpha=1): ...
    @overload
    def view(self, dtype): ...
    @overload
    def view(self, *size): ...
    @property
    def shape(self): ...
""",
    "torch/_tensor.py": """
import torch
class Tensor(torch._C.TensorBase):
    def numpy(self, *, force=False):
        return None
""",
    "torch/optim/__init__.py": """
from torch.optim import lr_scheduler as lr_scheduler
from .sgd import SGD
""",
    "torch/optim/sgd.py": """
__all__ = ["SGD"]
from torch.optim.optimizer import Optimizer
class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0):
        super().__init__(params, {})
""",
    "torch/optim/optimizer.py": """
class Optimizer:
    def __init__(self, params, defaults):
        self.params = params
    def step(self, closure=None):
        raise NotImplementedError
""",
    "torch/nn/__init__.py": """
from torch.nn.modules import *
from . import functional as functional
""",
    "torch/nn/modules/__init__.py": """
from .linear import Linear
__all__ = ["Linear"]
""",
    "torch/nn/modules/linear.py": """
from torch.nn.modules.module import Module
class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
""",
    "torch/nn/modules/module.py": """
class Module:
    def __init__(self, *args, **kwargs):
        pass
    def forward(self, *input):
        raise NotImplementedError
""",
    "torch-{version}.dist-info/METADATA": "Metadata-Version: 2.1\nName: torch\n"
                                          "Version: {version}\n\n",
}

V1 = {
    "torch/__init__.py": """
'''The package.'''
from typing import TYPE_CHECKING
__all__ = ["Tensor", "load", "old_fn", "set_flag"]
from torch._tensor import Tensor
from .serialization import load
from torch import nn as nn, optim as optim, onnx as onnx
if TYPE_CHECKING:
    from torch._C._VariableFunctions import *
def old_fn(x, y=2):
    return x
def set_flag(value, legacy=None):
    return value
""",
    "torch/_C/_VariableFunctions.pyi": """
from typing import overload
@overload
def cholesky(input, upper=False): ...
@overload
def cholesky(input, upper=False, *, out=None): ...
def qr(input, some=True): ...
def _private_op(x): ...
""",
    "torch/serialization.py": """
__all__ = ["load", "save"]
def load(f, map_location=None, *, weights_only=False, **pickle_load_args):
    return None
def save(obj, f):
    return None
""",
    "torch/optim/lr_scheduler.py": """
import warnings
__all__ = ["LRScheduler", "StepLR", "ExponentialLR", "ReduceLROnPlateau"]
class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1, verbose="deprecated"):
        self.optimizer = optimizer
    def step(self, epoch=None):
        return None
    def print_lr(self, is_verbose, group, lr, epoch=None):
        return None
class StepLR(LRScheduler):
    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose="deprecated"):
        super().__init__(optimizer, last_epoch, verbose)
class _Smooth(LRScheduler):
    pass
class ExponentialLR(_Smooth):
    pass
class ReduceLROnPlateau(LRScheduler):
    def __init__(self, optimizer, mode="min", factor=0.1, verbose="deprecated"):
        self.mode = mode
""",
    "torch/onnx/__init__.py": """
__all__ = ["export", "dynamo_export"]
def export(model, args=(), f=None, *, dynamo=False, optimize=False):
    return None
def dynamo_export(model, *model_args, export_options=None, **model_kwargs):
    return None
""",
    "torch/nn/functional.py": """
def pad(input, pad, mode="constant", value=None):
    return input
def norm(input, p="fro"):
    return input
""",
    "torch/contrib.py": """
def helper():
    return 1
""",
}

V2 = {
    "torch/__init__.py": """
'''The package.'''
from typing import TYPE_CHECKING
__all__ = ["Tensor", "load", "set_flag"]
from torch._tensor import Tensor
from torch._serialization_impl import load
from torch import nn as nn, optim as optim, onnx as onnx
if TYPE_CHECKING:
    from torch._C._VariableFunctions import *
from torch._linalg_utils import cholesky
import warnings
def set_flag(value, legacy=None):
    if legacy is not None:
        warnings.warn("legacy= is deprecated and ignored", DeprecationWarning, stacklevel=2)
    return value
""",
    "torch/_C/_VariableFunctions.pyi": """
def qr(input, some=True): ...
def _private_op(x): ...
""",
    "torch/_linalg_utils.py": """
def cholesky(input, upper=False, *, out=None):
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. "
        "Use torch.linalg.cholesky."
    )
""",
    "torch/_serialization_impl.py": """
def load(f, map_location=None, *, weights_only=True, **pickle_load_args):
    return None
""",
    "torch/serialization.py": """
__all__ = ["load", "save"]
from torch._serialization_impl import load
def save(obj, f):
    return None
""",
    "torch/optim/lr_scheduler.py": """
import warnings
__all__ = ["LRScheduler", "StepLR", "ExponentialLR", "ReduceLROnPlateau"]
class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
    def step(self, epoch=None):
        return None
class StepLR(LRScheduler):
    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        super().__init__(optimizer, last_epoch)
class _Smooth(LRScheduler):
    pass
class ExponentialLR(_Smooth):
    pass
class ReduceLROnPlateau(LRScheduler):
    def __init__(self, optimizer, mode="min", factor=0.1):
        self.mode = mode
""",
    "torch/onnx/__init__.py": """
import warnings
__all__ = ["export", "dynamo_export"]
def export(model, args=(), f=None, *, dynamo=True, optimize=True):
    return None
def dynamo_export(model, *model_args, export_options=None, **model_kwargs):
    warnings.warn(
        "torch.onnx.dynamo_export is deprecated since 2.7.0. "
        f"Please use torch.onnx.export(..., dynamo=True) instead of {model!r}.",
        category=FutureWarning,
    )
    return None
""",
    "torch/nn/functional.py": """
from typing_extensions import deprecated
def pad(input, pad, *, mode="constant", value=None):
    return input
@deprecated("`torch.nn.functional.norm` is deprecated, use `torch.linalg.norm`")
def norm(input, p="fro"):
    return input
""",
    "torch/contrib.py": """
import warnings
warnings.warn("torch.contrib is deprecated", FutureWarning)
def helper():
    return 1
""",
}


def write_wheel(folder: Path, version: str, files: dict[str, str] | None = None,
                headers: str = "") -> Path:
    """A wheel of this small torch at ``version`` (``2.6.0``: V1, else V2) under ``folder``;
    ``headers``: more lines for its METADATA headers ("Requires-Python: >=3.10\n")."""
    chosen = files if files is not None else (V1 if version.startswith("2.6") else V2)
    path = folder / f"torch-{version}-cp311-none-macosx_11_0_arm64.whl"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in {**COMMON, **chosen}.items():
            if name.endswith("METADATA"):
                text = text.format(version=version).replace("\n\n", f"\n{headers}\n", 1)
            archive.writestr(name.format(version=version), text.lstrip("\n"))
    return path
