"""The code side of the impact analysis: what ``pyindex`` reads from one Python file (names
resolved through imports, calls with their keywords, config patches, methods of unknown
objects), and what ``scan`` makes of a tree (skipped folders, re-exports across files,
unparsable files, the per-file cache)."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from watcher.impact.code import UnparsableError, index_python, read_python, scan_codebase
from watcher.impact.code.newsyntax import downgraded
from watcher.impact.model import FileIndex


def uses(source: str, path: str = "pkg/mod.py") -> list[tuple[int, str, bool, tuple[str, ...]]]:
    """(line, name or ".method", is_call, keywords) of each use."""
    index = index_python(path, textwrap.dedent(source))
    return [(use.line, use.name or "." + use.method, use.is_call, use.keywords)
            for use in index.uses]


def names(source: str, path: str = "pkg/mod.py") -> set[str]:
    return {name for _, name, _, _ in uses(source, path)}


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def test_names_resolve_through_every_import_form():
    assert uses("""\
        import torch
        import torch.nn.functional as F
        from torch.distributed.fsdp import fully_shard as fs
        from torch import nn

        def step(x, model):
            a = F.relu(x)
            b = torch.nn.functional.relu(x)
            fs(model)
            return nn.Linear(
                3, 4)
        """) == [
        (1, "torch", False, ()),
        (2, "torch.nn.functional", False, ()),
        (3, "torch.distributed.fsdp.fully_shard", False, ()),
        (4, "torch.nn", False, ()),
        (7, "torch.nn.functional.relu", True, ()),
        (8, "torch.nn.functional.relu", True, ()),  # the longest chain, once
        (9, "torch.distributed.fsdp.fully_shard", True, ()),
        (10, "torch.nn.Linear", True, ()),  # the line where a multi-line call starts
    ]


def test_a_use_keeps_its_stripped_source_line():
    index = index_python("a.py", "import torch\nif True:\n    x = torch.load('m.pt')   \n")
    assert [(use.line, use.code) for use in index.uses] == [
        (1, "import torch"), (3, "x = torch.load('m.pt')")]
    long = index_python("b.py", "import torch\ntorch.load(" + "x" * 300 + ")\n")
    assert len(long.uses[-1].code) == 200


def test_imports_inside_functions_try_blocks_and_type_checking_resolve():
    found = names("""\
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from torch.optim import Optimizer
        try:
            from torch.ao.quantization import quantize_dynamic
        except ImportError:
            from torch.quantization import quantize_dynamic

        def shrink(model, opt: Optimizer):
            import torch.ao.quantization.quantize_fx as qfx
            qfx.prepare_fx(model)
            return quantize_dynamic(model)

        def late():
            return np.zeros(3)  # imported below its use

        import numpy as np
        """)
    assert {"torch.optim.Optimizer", "torch.ao.quantization.quantize_fx.prepare_fx",
            "torch.ao.quantization.quantize_dynamic", "numpy.zeros"} <= found
    assert "typing.TYPE_CHECKING" not in found  # the standard library is never recorded


def test_star_imports_and_relative_imports():
    found = uses("""\
        from torch.nn import *
        from .utils import load_model
        from ..core import engine
        from . import sibling
        Linear(3, 4)
        load_model("x")
        """, path="pkg/sub/train.py")
    assert found == [(1, "torch.nn", False, ()), (2, "pkg.sub.utils.load_model", False, ()),
                     (3, "pkg.core.engine", False, ()), (4, "pkg.sub.sibling", False, ()),
                     (5, "torch.nn.Linear", True, ()),  # the one star import binds it
                     (6, "pkg.sub.utils.load_model", True, ())]
    # From a package's __init__, "." is the package itself; above the codebase root: skipped.
    assert names("from .io import load\n", path="pkg/__init__.py") == {"pkg.io.load"}
    assert names("from ... import x\n", path="pkg/mod.py") == set()


def test_calls_record_their_keywords_and_kwargs():
    assert uses("""\
        import torch
        torch.load(f, weights_only=True)
        torch.load(f, map_location="cpu", **options)
        torch.load(*args)
        """) == [(1, "torch", False, ()), (2, "torch.load", True, ("weights_only",)),
                 (3, "torch.load", True, ("map_location",)), (4, "torch.load", True, ())]
    index = index_python("a.py", "import torch\ntorch.load(f, **kw)\n")
    assert index.uses[1].passes_kwargs and not index.uses[0].passes_kwargs


def test_a_branch_for_torch_releases_before_2_0_is_not_read():
    found = uses("""\
        import torch
        from mmcv.utils import TORCH_VERSION, digit_version
        if TORCH_VERSION != "parrots" and digit_version(TORCH_VERSION) < digit_version("1.7.0"):
            def load(f):
                return torch.load(f)
        else:
            from torch.hub import load_state_dict_from_url
        if torch.__version__ >= "2.6":
            torch.load(f, weights_only=True)
        else:
            torch.load(f)
        state = torch.load(f, **({"weights_only": True} if torch.__version__ >= "1.13" else {}))
        """)
    names_by_line = {line: name for line, name, *_ in found}
    assert 5 not in names_by_line  # only below torch 1.7
    assert names_by_line[7] == "torch.hub.load_state_dict_from_url"
    # A guard within 2.x depends on the release: both branches stay.
    assert names_by_line[9] == names_by_line[11] == "torch.load"
    # The dict of the dead branch carries nothing: the call says weights_only.
    assert (12, "torch.load", True, ("weights_only",)) in found


def test_a_dict_set_in_both_branches_of_an_if_holds_either_branchs_keys():
    found = uses("""\
        import torch
        def load(p, safe):
            if safe:
                kwargs = {"weights_only": True}
            else:
                kwargs = {}
            state = torch.load(p, **kwargs)
            kwargs = {}
            return state, torch.load(p, **kwargs)
        """)
    assert (7, "torch.load", True, ("weights_only",)) in found  # says it on some path
    assert (9, "torch.load", True, ()) in found  # reassigned after the if: none


def test_a_module_function_returning_a_dict_it_built_spreads_its_keys():
    found = uses("""\
        import torch
        def load_options():
            options = {"weights_only": True, "map_location": "cpu"}
            return options
        def grown():
            options = {"map_location": "cpu"}
            options["mmap"] = True
            return options
        def opened(extra):
            options = {"map_location": "cpu"}
            options.update(extra)
            return options
        a = torch.load(p, **load_options())
        b = torch.load(p, **grown())
        c = torch.load(p, **opened(e))
        """)
    assert (13, "torch.load", True, ("map_location", "weights_only")) in found
    assert (14, "torch.load", True, ("map_location", "mmap")) in found  # a constant key added
    assert (15, "torch.load", True, ()) in found  # updated from a dict of unknown keys: no claim


def test_a_method_returning_the_keywords_it_is_given_spreads_those_of_the_call():
    """avalanche's strategies build DataLoader arguments with a method that copies its own
    ``**kwargs`` into the dict it returns, then spread it: the keys are the call's keywords and
    the constant keys the method adds, so no ``pin_memory_device`` reaches the DataLoader."""
    found = uses("""\
        from torch.utils.data import DataLoader
        class Strategy:
            def _common(self, **kwargs):
                args = {}
                for k, v in kwargs.items():
                    args[k] = v
                if args.get("pin_memory", None) is None:
                    args["pin_memory"] = True
                return args
            def make(self, num_workers=0, **kwargs):
                args = self._common(batch_size=8, num_workers=num_workers)
                args["ffcv_args"] = kwargs["ffcv_args"]
                return DataLoader(self.data, **args)
            def spread(self, **kwargs):
                return DataLoader(self.data, **self._common(**kwargs))
        def merged(**kw):
            return {**kw, "pin_memory": True}
        def copied(**kw):
            options = dict(**kw)
            return options
        DataLoader(data, **merged(batch_size=2))
        DataLoader(data, **copied(num_workers=4))
        """)
    assert (13, "torch.utils.data.DataLoader", True,
            ("batch_size", "ffcv_args", "num_workers", "pin_memory")) in found
    assert (15, "torch.utils.data.DataLoader", True, ()) in found  # its own ** may pass any
    assert (21, "torch.utils.data.DataLoader", True, ("batch_size", "pin_memory")) in found
    assert (22, "torch.utils.data.DataLoader", True, ("num_workers",)) in found

def test_functools_partial_is_a_call_of_its_first_argument():
    found = uses("""\
        import functools
        from functools import partial
        import torch
        a = functools.partial(torch.load, weights_only=True)
        b = partial(torch.load, map_location="cpu")
        c = partial(print, end="")
        """)
    assert (4, "torch.load", True, ("weights_only",)) in found
    assert (5, "torch.load", True, ("map_location",)) in found
    assert (4, "torch.load", False, ()) in found  # the reference handed to partial
    assert not [use for use in found if use[0] == 6]


def test_config_patches_and_assignments_name_the_config():
    found = uses("""\
        import torch
        from torch._inductor import config

        with torch._inductor.config.patch(autotune_fallback_to_aten=True):
            pass
        with config.patch({"max_autotune": True, "debug": False}):
            pass
        with config.patch("freezing", True):
            pass
        torch._inductor.config.cpp_wrapper = True

        @torch._dynamo.config.patch(suppress_errors=True)
        def compiled():
            pass
        """)
    configs = {(line, name) for line, name, call, _ in found
               if not call and "config." in name}
    assert configs == {
        (4, "torch._inductor.config.autotune_fallback_to_aten"),
        (6, "torch._inductor.config.max_autotune"), (6, "torch._inductor.config.debug"),
        (8, "torch._inductor.config.freezing"), (10, "torch._inductor.config.cpp_wrapper"),
        (12, "torch._dynamo.config.suppress_errors")}


def test_methods_of_unknown_objects_are_kept_by_method_name():
    found = uses("""\
        import torch

        def train(scheduler, model):
            scheduler.print_lr()
            torch.zeros(3).new_tensor([1])
            size = model.weight
            model.weight = None
        """)
    assert (4, ".print_lr", True, ()) in found
    assert (5, ".new_tensor", True, ()) in found and (5, "torch.zeros", True, ()) in found
    assert (6, ".weight", False, ()) in found
    assert not [use for use in found if use[0] == 7]  # an assignment target is not a use


def test_only_imported_roots_are_recorded():
    found = names("""\
        import os.path
        import numpy as np
        x = os.path.join("a", "b")
        y = undefined_name.attribute
        np.zeros(3)
        """)
    assert found == {"numpy", "numpy.zeros", ".attribute"}


def test_index_python_accepts_bytes_with_a_coding_cookie():
    source = "# -*- coding: latin-1 -*-\nimport torch\ns = 'caf\xe9'; torch.load(s)\n"
    index = index_python("a.py", source.encode("latin-1"))
    assert index.uses[-1].code == "s = 'café'; torch.load(s)"
    crlf = index_python("b.py", b"import torch\r\n\r\ntorch.load(x)\r\n")
    assert [(use.line, use.code) for use in crlf.uses] == [
        (1, "import torch"), (3, "torch.load(x)")]


@pytest.mark.parametrize("source", [
    "def oops(:\n", b"import torch\x00\n", b"# coding: utf-8\nx = '\xff'\n",
    "x = " + "(" * 300 + ")" * 300 + "\n", "x = " + "-" * 200_000 + "1\n"])
def test_files_that_do_not_parse_raise_one_clear_error(source):
    with pytest.raises(UnparsableError) as raised:
        index_python("bad.py", source)
    assert "\n" not in str(raised.value) and str(raised.value)


# The scan.

def test_scan_skips_tool_folders_virtualenvs_and_symlinked_folders(tmp_path):
    """A symlinked folder is not entered, and a link to a file outside the codebase is not
    read; a link to a file inside it is indexed at its own path (a recipe runs it there)."""
    root = write(tmp_path / "code", {
        "main.py": "import torch\n",
        "pkg/__init__.py": "",
        "build/gen.py": "import torch\n", "dist/x.py": "", "node_modules/a.py": "",
        ".git/hooks/h.py": "", ".tox/t.py": "", "__pycache__/c.py": "",
        "mypkg.egg-info/e.py": "", "site-packages/s.py": "",
        "env/pyvenv.cfg": "home = /usr/bin\n", "env/lib/torch_user.py": "import torch\n",
        "venv/lib/v.py": "", "notes.md": "import torch\n"})
    os.symlink(root / "pkg", root / "linked")
    os.symlink(root / "main.py", root / "alias.py")
    (tmp_path / "outside.py").write_text("import torch\n")
    os.symlink(tmp_path / "outside.py", root / "escape.py")
    os.symlink(root / "missing.py", root / "dangling.py")
    index = scan_codebase(str(root), {})
    assert [file.path for file in index.files] == ["alias.py", "main.py", "pkg/__init__.py"]
    assert index.counts.files == 3 and index.counts.lines == 2


def test_unparsable_files_are_counted_not_fatal(tmp_path):
    root = write(tmp_path, {"good.py": "import torch\ntorch.load(x)\n",
                            "bad.py": "def oops(:\n", "nul.py": "x = 1\x00\n"})
    index = scan_codebase(str(tmp_path), {})
    assert [file.path for file in index.files] == ["good.py"]
    assert [path for path, _ in index.unparsable] == ["bad.py", "nul.py"]
    assert index.unparsable[0][1] == "line 1: invalid syntax"
    assert scan_codebase(str(root), {}).counts.files == 3


NEWER_SYNTAX = """\
    import torch
    from torch import nn


    class Box[T: torch.Tensor](nn.Module):
        def load[K](self, path: K) -> T:
            return torch.load(path)


    type Batch[T] = dict[str, T]
    type Plain = list[torch.Tensor]


    def first[T](
            xs: list[T]) -> T:
        try:
            return torch.jit.script(xs[0])
        except ValueError, TypeError:
            return torch.cat(xs)


    def keeps(type, x):
        type = type(x)
        return type
    """


def test_code_in_a_newer_pythons_syntax_is_read_on_the_lines_it_was_written_on():
    """orb-models' ``class ModelMixin[T: AbstractAtomBatch](torch.nn.Module)`` (3.12 type
    parameters) did not parse on 3.11, and its torch uses went unread: type parameter lists,
    ``type`` aliases and 3.14's ``except A, B:`` are read in their 3.11 spelling, each use on
    its own line, and shown as written. ``type`` as a plain name is left alone."""
    found = uses(NEWER_SYNTAX)
    # (a type parameter's bound goes with its list: an annotation, never a call)
    assert [(line, name) for line, name, _, _ in found] == [
        (1, "torch"), (2, "torch.nn"), (5, "torch.nn.Module"), (7, "torch.load"),
        (11, "torch.Tensor"), (17, "torch.jit.script"), (19, "torch.cat")]
    index = index_python("pkg/mod.py", textwrap.dedent(NEWER_SYNTAX))
    assert {use.line: use.code for use in index.uses}[5] == \
        "class Box[T: torch.Tensor](nn.Module):"
    assert downgraded("import torch\nx = type(torch)\n") is None
    with pytest.raises(UnparsableError):
        read_python("pkg/new.py", 'f"{x["a"]}"\n')  # 3.12's f-string nesting: not rewritten


def test_a_missing_root_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        scan_codebase(str(tmp_path / "nope"))


def test_reexports_across_files_resolve_to_the_outside_name(tmp_path):
    write(tmp_path, {
        "mypkg/__init__.py": "from .io import load\n",
        "mypkg/io.py": "from torch.serialization import load\nfrom torch import save as put\n",
        "mypkg/utils.py": "from torch import load as load_model\n",
        "mypkg/train.py": """\
            from .utils import load_model
            from mypkg.io import put
            import mypkg.io as mio
            load_model("a")
            put(x, "b")
            mio.load("c")
            """,
        "app.py": "import mypkg\nfrom mypkg import load\nload('d')\nmypkg.load('e')\n",
        "cycle/a.py": "from cycle.b import f\n", "cycle/b.py": "from cycle.a import f\n",
        "cycle/__init__.py": "", "loop.py": "from cycle.a import f\nf()\n"})
    index = scan_codebase(str(tmp_path), {})
    by_path = {file.path: [(use.line, use.name) for use in file.uses if use.is_call]
               for file in index.files}
    assert by_path["mypkg/train.py"] == [(4, "torch.load"), (5, "torch.save"),
                                         (6, "torch.serialization.load")]
    assert by_path["app.py"] == [(3, "torch.serialization.load"),
                                 (4, "torch.serialization.load")]
    assert by_path["loop.py"] == [(2, "cycle.a.f")]  # a cycle stops; the name stays


def test_names_a_star_import_binds_resolve_to_the_module_that_binds_them(tmp_path):
    write(tmp_path, {
        "pkg/__init__.py": "from .common import *\n",
        "pkg/common.py": "import torch\nfrom torch.jit import script\n",
        "pkg/other.py": "import numpy as np\n",
        "pkg/model.py": """\
            from .other import *
            from .common import *
            f = torch.jit.script(lambda x: x)
            g = script(lambda x: x)
            np.zeros(3)
            undefined_helper(1)
            """,
        "app.py": "from pkg import *\nscript(h)\n",
        "outside.py": "from torch.nn.functional import *\nrelu(x)\n",
        "two.py": "from torch.nn.functional import *\nfrom numpy import *\nrelu(x)\n",
        "local.py": """\
            from torch import *
            def load(path):
                return path
            load("x")
            for save in []:
                save(1)
            print(len([]))
            """})
    index = scan_codebase(str(tmp_path), {})
    calls = {file.path: [(use.line, use.name) for use in file.uses if use.is_call]
             for file in index.files}
    assert calls["pkg/model.py"] == [(3, "torch.jit.script"), (4, "torch.jit.script"),
                                     (5, "numpy.zeros")]  # undefined_helper: no one binds it
    assert calls["app.py"] == [(2, "torch.jit.script")]  # through the package's own star
    assert calls["outside.py"] == [(2, "torch.nn.functional.relu")]
    assert calls["two.py"] == []  # two libraries could bind it: which one cannot be told
    assert calls["local.py"] == []  # the file binds load and save itself; print is Python's
    alone = index_python("m.py", "from torch.nn.functional import *\nrelu(x)\n")
    assert [use.name for use in alone.uses if use.is_call] == ["torch.nn.functional.relu"]


def test_uses_behind_a_feature_check_carry_the_names_it_asks_about():
    index = index_python("a.py", textwrap.dedent("""\
        import inspect, torch
        if "symmetric" in inspect.signature(torch.cuda.MemPool).parameters and ok:
            torch.cuda.MemPool(a, symmetric=True)
        elif hasattr(torch, "compile"):
            torch.compile(m)
        torch.load(f)
        """))
    probed = {(use.line, use.name): use.probed for use in index.uses if use.is_call}
    assert probed == {(3, "torch.cuda.MemPool"): ("symmetric",), (5, "torch.compile"): ("compile",),
                      (6, "torch.load"): ()}


def test_calls_in_a_type_error_handler_carry_the_keywords_the_try_passed():
    index = index_python("a.py", textwrap.dedent("""\
        import torch
        try:
            torch.load(f, weights_only=False, mmap=True)
        except TypeError:
            torch.load(f)
            torch.save(f, weights_only=False)
        except OSError:
            torch.load(f)
        """))
    fallback = {(use.line, use.name): use.fallback for use in index.uses if use.is_call}
    assert fallback == {(3, "torch.load"): (), (5, "torch.load"): ("mmap", "weights_only"),
                        (6, "torch.save"): (), (8, "torch.load"): ()}

def test_script_folders_resolve_sibling_modules(tmp_path):
    """pytorch/examples style: each folder is a script folder, ``import utils`` is its own."""
    write(tmp_path, {"a/utils.py": "from torch import load\n", "a/main.py":
                     "import utils\nutils.load('x')\n", "b/utils.py": "import numpy\n",
                     "b/main.py": "from utils import load\nload('y')\n"})
    index = scan_codebase(str(tmp_path), {})
    calls = {file.path: [use.name for use in file.uses if use.is_call] for file in index.files}
    assert calls["a/main.py"] == ["torch.load"]
    assert calls["b/main.py"] == ["utils.load"]  # b/utils.py binds no load: left as written


def test_a_tree_that_holds_the_library_itself_keeps_public_names(tmp_path):
    write(tmp_path, {"torch/__init__.py": "from torch.serialization import load\n",
                     "torch/serialization.py": "def load(f): ...\n",
                     "user.py": "import torch\ntorch.load('x')\n"})
    index = scan_codebase(str(tmp_path), {})
    user = next(file for file in index.files if file.path == "user.py")
    assert [use.name for use in user.uses if use.is_call] == ["torch.load"]


def test_a_second_scan_of_an_unchanged_tree_reads_nothing(tmp_path):
    write(tmp_path, {"a.py": "import torch\ntorch.load(x)\n", "b.py": "import torch\n",
                     "bad.py": "def oops(:\n", "requirements.txt": "torch==2.1.0\n"})
    cache: dict[str, str] = {}
    first = scan_codebase(str(tmp_path), cache)
    assert (first.counts.read, first.counts.cached) == (4, 0)
    assert set(cache) == {"a.py", "b.py", "bad.py", "requirements.txt"}
    entry = json.loads(cache["a.py"])
    assert {"size", "mtime_ns", "sha256", "index"} <= set(entry)
    assert FileIndex.model_validate(entry["index"]).uses[1].name == "torch.load"
    second = scan_codebase(str(tmp_path), cache)
    assert (second.counts.read, second.counts.cached) == (0, 4)
    assert second.files == first.files and second.unparsable == first.unparsable


def test_a_touched_file_is_reread_and_reused_when_its_content_is_the_same(tmp_path):
    write(tmp_path, {"a.py": "import torch\ntorch.load(x)\n", "b.py": "import torch\n"})
    cache: dict[str, str] = {}
    scan_codebase(str(tmp_path), cache)
    stat = (tmp_path / "a.py").stat()
    os.utime(tmp_path / "a.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    touched = scan_codebase(str(tmp_path), cache)
    assert (touched.counts.read, touched.counts.cached) == (1, 2)  # read, hash equal: reused
    assert json.loads(cache["a.py"])["mtime_ns"] == stat.st_mtime_ns + 5_000_000_000
    assert scan_codebase(str(tmp_path), cache).counts.read == 0

    (tmp_path / "a.py").write_text("import torch\n\ntorch.save(x, f)\n")
    os.utime(tmp_path / "a.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 9_000_000_000))
    changed = scan_codebase(str(tmp_path), cache)
    assert (changed.counts.read, changed.counts.cached) == (1, 1)
    a = next(file for file in changed.files if file.path == "a.py")
    assert [(use.line, use.name) for use in a.uses] == [(1, "torch"), (3, "torch.save")]


def test_a_deleted_file_leaves_the_cache(tmp_path):
    write(tmp_path, {"a.py": "import torch\n", "sub/b.py": "import torch\n"})
    cache: dict[str, str] = {"stale/elsewhere.py": "{}"}
    scan_codebase(str(tmp_path), cache)
    assert set(cache) == {"a.py", "sub/b.py"}
    (tmp_path / "sub" / "b.py").unlink()
    scan_codebase(str(tmp_path), cache)
    assert set(cache) == {"a.py"}


def test_a_corrupt_or_old_cache_entry_is_a_miss(tmp_path):
    write(tmp_path, {"a.py": "import torch\n", "b.py": "import torch\n"})
    index = scan_codebase(str(tmp_path), {"a.py": "not json", "b.py": '{"v": 0}'})
    assert (index.counts.read, index.counts.cached) == (2, 0)


def test_environment_files_are_scanned_beside_python(tmp_path):
    write(tmp_path, {"pyproject.toml": '[project]\nrequires-python = ">=3.9"\n',
                     "docker/Dockerfile": "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n",
                     "setup.py": "import torch\nfrom setuptools import setup\n"
                                 "setup(python_requires='>=3.8')\n"})
    index = scan_codebase(str(tmp_path), {})
    assert [(path, d.kind, d.specifier or d.version) for path, d in index.declarations] == [
        ("docker/Dockerfile", "cuda", "12.1"), ("pyproject.toml", "python", ">=3.9"),
        ("setup.py", "python", ">=3.8")]
    setup = next(file for file in index.files if file.path == "setup.py")
    assert setup.uses[0].name == "torch" and setup.declarations[0].line == 3


def test_each_use_records_how_it_is_referenced():
    source = textwrap.dedent("""\
        import torch
        from torch import nn

        @torch.jit.ignore
        def f(x: torch.Tensor) -> nn.Module:
            y: torch.dtype = torch.float32
            if isinstance(x, (torch.Tensor, nn.Parameter)):
                torch.save(x, *paths, **options)
            obj.grad_scale = 2.0
            return torch.compile(x, 1, 2, mode="max")

        class M(nn.Module):
            @torch.compile(fullgraph=True)
            def forward(self):
                pass
        """)
    index = read_python("m.py", source)
    refs = {(row["line"], row["name"]): (row.get("ref", ""), row.get("is_call", False))
            for row in index.uses}
    assert refs[(1, "torch")] == ("import", False)
    assert refs[(4, "torch.jit.ignore")] == ("decorator", False)
    assert refs[(5, "torch.Tensor")] == ("annotation", False)
    assert refs[(5, "torch.nn.Module")] == ("annotation", False)
    assert refs[(6, "torch.dtype")] == ("annotation", False)
    assert refs[(6, "torch.float32")] == ("aliased", False)  # read where y is
    assert refs[(7, "torch.Tensor")] == ("isinstance", False)
    assert refs[(7, "torch.nn.Parameter")] == ("isinstance", False)
    assert refs[(12, "torch.nn.Module")] == ("base", False)
    assert refs[(13, "torch.compile")] == ("decorator", True)
    save = next(row for row in index.uses if row["name"] == "torch.save")
    assert (save.get("args"), save.get("passes_args"), save.get("passes_kwargs")) == (
        1, True, True)
    compile_call = next(row for row in index.uses if row["line"] == 10)
    assert (compile_call["args"], compile_call["keywords"]) == (3, ["mode"])
    assert {"grad_scale", "mode", "fullgraph"} <= set(index.sets)


def test_an_unchanged_tree_is_answered_from_the_last_index(tmp_path):
    import gc

    (tmp_path / "a.py").write_text("import torch\ntorch.load(x)\n")
    cache: dict[str, str] = {}
    first = scan_codebase(str(tmp_path), cache)
    assert gc.isenabled()  # paused only while the scan ran
    _ = first.table
    # Nothing touched: no cache entry is even decoded (they could be anything now).
    garbage = dict.fromkeys(cache, "not json")
    again = scan_codebase(str(tmp_path), garbage, previous=first)
    assert again.records is first.records and again.table is first.table
    assert (again.counts.read, again.counts.cached, again.counts.cache_changed) == (0, 1, False)
    # A touched file: the usual per-file cache path.
    (tmp_path / "b.py").write_text("import torch\n")
    changed = scan_codebase(str(tmp_path), cache, previous=first)
    assert [record.path for record in changed.records] == ["a.py", "b.py"]
    assert changed.counts.read == 1
