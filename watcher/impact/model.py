"""The values of the impact analysis: what an item changes (``Subject``), what a codebase uses
(``Use``, ``Declaration``), and where a change touches the code (``Affect``).

Plain frozen pydantic models, so the text reader, the code index and the matcher are pure
functions over values and the code index can be cached as JSON per file.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from watcher.models import Affect

__all__ = [
    "Affect",
    "Declaration",
    "Effect",
    "EnvironmentSubject",
    "FileIndex",
    "Qualifier",
    "Ref",
    "Subject",
    "Subjects",
    "UnparsableError",
    "Use",
]

# How a Python subject is touched:
#   "uses"   any reference to the API (a removed or deprecated function, class, module, config)
#   "passes" a call that passes keyword ``option`` (a removed or deprecated option)
#   "omits"  a call that does not pass ``option`` (a flipped default)
#   "errors" only what a call raises or warns on invalid input changed: valid uses are not
#            touched, and invalid ones cannot be told statically, so nothing is flagged
#            (the item still names the API in ``apis``)
#   "signature" how arguments are passed changed (now keyword-only, keyword arguments no longer
#            supplied) with no option named: whether a call is touched depends on arguments
#            the index does not count, so nothing is flagged rather than every call
Condition = Literal["uses", "passes", "omits", "errors", "signature"]

# How ``api`` is compared with a use's resolved name:
#   "exact"     the name itself (and attribute chains through it: ``torch.load`` touches
#               ``torch.load(...)`` but not ``torch.loads``)
#   "namespace" the name and everything under it (``torch.ao.quantization`` covers
#               ``torch.ao.quantization.quantize_fx.prepare_fx``)
#   "method"    a method whose receiver's type cannot be known statically (``Tensor.new_tensor``,
#               ``LRScheduler.print_lr``): matched by the attribute name ``method`` on any object,
#               and marked as such to readers
Scope = Literal["exact", "namespace", "method"]

# How a use is referenced when it is not a plain call or read: decorators are applied bare
# (``@x``, no ``is_call``) or called (``@x(...)``, ``is_call``); "partial": the function
# ``functools.partial`` binds (read as a call of it, with the partial's keywords); "compared":
# an operand of a comparison (``f is torch.load``), neither called nor handed on; "aliased":
# bound to a local name (``loader = torch.load``), read again where the name is used.
Ref = Literal["", "import", "annotation", "isinstance", "decorator", "base", "assign",
              "partial", "compared", "aliased"]

# What an item does to a subject, read from the words around it: "removed" (the name or option
# is gone, or renamed), "deprecated" (it still works and warns), "changed" (its behaviour).
Effect = Literal["removed", "deprecated", "changed"]

# Where an input kind is made, seen from a use it reaches (``Qualifier.within``).
Within = Literal["codebase", "file", "definition"]
# What an environment subject is about.
EnvironmentKind = Literal["python", "cuda", "package", "renamed_package", "channel", "abi",
                          "gpu_arch"]


class UnparsableError(Exception):
    """A file of a codebase (Python, or an environment file) that cannot be read; the message
    is one line, fit for a report."""


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Subject(Frozen):
    """One API a release-note item changes, read from the item's own text."""

    api: str  # fully qualified: "torch.load", "torch._inductor.config.autotune_fallback_to_aten"
    scope: Scope = "exact"
    condition: Condition = "uses"
    option: str | None = None  # the keyword, with condition "passes" or "omits"
    method: str | None = None  # the attribute name, with scope "method"
    effect: Effect = "changed"
    # The option's value the change is about, as written ("False" of "`dynamo=False` is
    # deprecated"): a call passing another constant is not touched.
    value: str | None = None
    # Other options the item says the change comes with, as ``name=value`` ("the exporter now
    # uses the `dynamo=True` option"): a changed default has no effect on a call passing
    # another constant for one of them (``dynamo=False``).
    given: tuple[str, ...] = ()
    # A way of passing arguments the change is about, with condition "signature": "final_dict",
    # keyword arguments passed as a dict ending a positional tuple ("supply model keyword
    # arguments as a final dictionary is deprecated": ``export(m, (x, {"mask": m}))``);
    # "moved", arguments passed by position up to ``option``, which moved from argument
    # number ``value`` (the package's diff: a parameter inserted before it).
    # "returns_input": a code shape the words name with no API of its own (``[[code_shapes]]``:
    # "an output of a custom operator shares storage with an input"), reaching only the uses
    # showing it.
    shape: Literal["final_dict", "moved", "returns_input"] | None = None
    # With condition "errors", the exception types invalid calls raised before ("instead of
    # the generic `RuntimeError`") and the ones they raise now: code catching only an old one
    # around the call no longer handles the error.
    raised: tuple[str, ...] = ()
    raises: tuple[str, ...] = ()
    # The kind of value of ``option`` the change is limited to, by its vocabulary name
    # (``[[values]]`` of ``config/impact.toml``: "fully masked rows" of ``attn_mask``): a call
    # the code shows cannot pass one is not reached.
    limited_to: str | None = None
    # The option is a plain word of the title, not a code span ("to be on the given Tensor's
    # device by default"): the API's own only where the package's signature of it has that
    # parameter (``reach.match`` reads it as a plain use otherwise).
    worded: bool = False


class Qualifier(Frozen):
    """What a change is limited to: a kind of "input" the code must be able to make ("nested
    tensors"), or a "state" it must be able to set (``grad_scale`` already set). ``made_by``:
    the dotted names (or ``.method``s) whose use makes the input; for a state, the attribute
    or keyword names that set it."""

    # setting: selected by a call (made_by); absent: only code that never calls made_by
    kind: Literal["input", "state", "setting", "absent"]
    name: str
    made_by: tuple[str, ...]
    # An input made only where it is used: in its file ("file"), or in the module-level function
    # or class around the use ("definition"); or handed on anywhere ("codebase").
    within: Within = "codebase"


class EnvironmentSubject(Frozen):
    """An environment requirement an item changes.

    - python: ``minimum`` is the new lowest supported version ("3.10"); a codebase whose
      ``requires-python`` still admits a lower version is touched.
    - cuda: ``removed`` is a CUDA version no longer supported ("12.1"); a base image or pin of
      that version is touched.
    - package: ``name`` now needs ``specifier`` (">=0.3.1"); a pin that admits a lower version is
      touched.
    - renamed_package: ``name`` (the old name, "pytorch-triton") is now ``new_name``; any pin of
      the old name is touched.
    - channel: the conda channel ``name`` ("pytorch") gets no more builds ("Removed Anaconda
      support"); an environment that installs torch from it is touched.
    - abi: the wheels are built with the C++11 ABI (``_GLIBCXX_USE_CXX11_ABI=1``); a C++ build
      that forces the old ABI against them is touched.
    - gpu_arch: torch's CUDA ``removed`` build no longer runs on the GPUs ``name`` ("Volta");
      an environment installing that build is touched, at most as ``check``: which GPUs it runs
      on is not in the code.
    """

    kind: EnvironmentKind
    name: str = ""  # package name (normalised per PEP 503), for package and renamed_package
    new_name: str = ""
    specifier: str = ""  # PEP 440 specifier, for package
    minimum: str = ""  # version, for python
    removed: str = ""  # version, for cuda and gpu_arch

    @property
    def label(self) -> str:
        """How ``apis`` and ``affects[].api`` name it: "python>=3.10", "cuda 12.1", ..."""
        if self.kind == "python":
            return f"python>={self.minimum}"
        if self.kind == "cuda":
            return f"cuda {self.removed}"
        if self.kind == "renamed_package":
            return f"{self.name} (now {self.new_name})"
        if self.kind == "channel":
            return f"the {self.name} conda channel"
        if self.kind == "abi":
            return "the C++11 ABI"
        if self.kind == "gpu_arch":
            return f"CUDA {self.removed} builds on {self.name} GPUs"
        return f"{self.name}{self.specifier}"


class Subjects(Frozen):
    """Everything one item changes; empty when it names nothing a codebase could use."""

    python: tuple[Subject, ...] = ()
    environment: tuple[EnvironmentSubject, ...] = ()
    qualifiers: tuple[Qualifier, ...] = ()  # the change reaches code only with one of these

    def __bool__(self) -> bool:
        return bool(self.python or self.environment)

    @property
    def apis(self) -> list[str]:
        """The contract's ``apis`` field: each API once, in the order the text names them."""
        names = [subject.api for subject in self.python]
        names += [subject.label for subject in self.environment]
        return list(dict.fromkeys(names))


class Use(Frozen):
    """One reference to an imported name in a Python file, resolved through its imports."""

    line: int
    code: str  # the source line, stripped
    name: str  # resolved dotted name ("torch.nn.functional.relu"); "" for an unresolved method
    method: str = ""  # the attribute called on an object of unknown type ("print_lr")
    is_call: bool = False
    keywords: tuple[str, ...] = ()  # keyword names passed, when a call
    passes_kwargs: bool = False  # a ``**kwargs`` in the call may carry any option
    ref: Ref = ""  # how it is referenced when not a plain call or read
    args: int = 0  # positional arguments passed, when a call (``*args`` not counted)
    passes_args: bool = False  # a ``*args`` in the call may carry any positional argument
    values: dict[str, bool | int | float | str | None] = {}  # constant keyword values passed
    ignore: tuple[str, ...] = ()  # the items an ignore comment on its line names
    # Names a feature check around it asks about first (``if "x" in signature(f).parameters``)
    probed: tuple[str, ...] = ()
    # The first line of the module-level function or class the use is in; 0 at module level
    scope: int = 0
    # Keywords a ``try`` passed the same function before this call, in its ``except
    # TypeError:`` handler: the call runs only on releases that refuse them
    fallback: tuple[str, ...] = ()
    # An SDPA call whose masks, as far as its file shows, keep a key in every row
    # (``code.masks``): a change limited to fully masked rows cannot reach it
    keeps_rows: bool = False
    # The exception types the handlers of ``try`` blocks around a call catch, by last name
    # (a bare ``except:`` is ``BaseException``); not those of a handler that retries the call
    caught: tuple[str, ...] = ()
    # A positional argument is a tuple ending in a dict (``(x, {"mask": m})``, ``(batch,)`` of a
    # dict the file builds): keyword arguments passed as a final dict
    final_dict: bool = False
    # The positions of the dicts it passes positionally (a dict literal, or a name the file
    # binds to one): where the API takes a tuple of arguments (``args``), a dict there is read
    # as ``(the_dict,)``, a final dict of keyword arguments
    dict_at: tuple[int, ...] = ()
    # The torch release it runs only below ((2, 5) in the ``else`` of ``if TORCH_VERSION >=
    # (2, 5):``): no change of that release or a later one reaches it
    below: tuple[int, int] | None = None
    # A lookup by a key the file made (``code.madekeys``): the key, and where it was made
    made_key: str = ""
    # A registered operator's implementation returning one of its inputs, or a view of one
    # (``code.aliasing``): which function, and what it returns
    returns_input: str = ""
    # Keywords passing a None-default parameter of the calling function (``code.forwarded``):
    # option -> [function, the parameter's position (-1: keyword only), whether this file
    # calls the function, whether such a call may give the parameter]
    forwarded: dict[str, tuple[str, int, bool, bool]] = {}
    # A call passing on nothing spread but its own function's ``**kwargs`` (``code.forwarded``):
    # [the name that function is called by, the keywords this file's calls of it pass, whether
    # one spreads ``*``/``**`` or the file hands it on, how many calls this file makes]
    spreads_kwargs_of: tuple[str, tuple[str, ...], bool, int] | None = None
    # A call spreading its function's parameter that defaults to a literal dict (``**params``,
    # ``code.forwarded``): [the function, the parameter, its position, whether this file calls
    # the function, whether such a call may give the parameter]
    spreads_default_of: tuple[str, str, int, bool, bool] | None = None
    # A call whose every ``**`` spreads a dict starting from a name no function around it
    # takes as a parameter (a config it loads, a module's dict; ``code.forwarded``): its keys
    # are the codebase's own, not a caller's
    spreads_local: bool = False


class Declaration(Frozen):
    """An environment declaration in a non-Python file (pyproject, requirements, Dockerfile)."""

    line: int
    code: str
    kind: Literal["python", "cuda", "package", "channel", "abi", "requirements", "gpu_targets"]
    # normalised package name, for package; the conda channel, for channel; the file as
    # written, for requirements (``pip install -r requirements/gpu.txt``)
    name: str = ""
    specifier: str = ""  # PEP 440 specifier as written (">=3.9", "==2.1.0"), for python/package
    # the CUDA version of a base image or wheel index ("12.1"); abi: "0"; gpu_targets: the
    # compute capabilities a build targets (``TORCH_CUDA_ARCH_LIST="9.0 10.0"``), as written
    version: str = ""
    ignore: tuple[str, ...] = ()  # the items an ignore comment on its line names
    # The torch release the declaring environment (a Dockerfile stage, a requirements file, a
    # script) is pinned to ("2.6.0": ``torch==2.6.0``, or an image tagged ``torch2.6``): it
    # runs that torch with what it declares beside it until the pin is changed.
    torch: str = ""
    # An installer's Python or CUDA (a Dockerfile stage, a conda environment, a setup script)
    # where that environment names no torch: whether a release's wheels reach it depends on
    # what its other installs bring, which the file does not say.
    torch_unseen: bool = False
    # What may still bring torch into that environment, as written: the requirements files,
    # local packages and other installers it runs (torch named in one of the codebase's reaches
    # it after all) and the packages it names that require torch ("package lightning").
    installs_from: tuple[str, ...] = ()
    # A cuda declaration that is a base image's CUDA toolkit (``FROM nvidia/cuda:12.4.1-devel``):
    # what the image compiles extensions with, not the build of the torch installed on it, which
    # a pip wheel brings with its own CUDA libraries (from the index the install names).
    toolkit: bool = False
    # The torch series the environment's pinned Python holds it to ("2.4.*" for python=3.8,
    # with no torch pin): a later release's other environment changes (a channel, a CUDA, a
    # package) do not reach it; its Python floor, about that very Python, still does
    python_holds_torch: str = ""


class FileIndex(Frozen):
    """What one file uses: its Python uses or its environment declarations."""

    path: str  # relative to its root, with "/" separators
    uses: tuple[Use, ...] = ()
    declarations: tuple[Declaration, ...] = ()
