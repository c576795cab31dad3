"""Version guards the walk decides: a branch for torch releases before 2.0 never runs on one the
analysis reads; a guard within 2.x, or on anything but torch's version, decides nothing. A
guard is read in each of the shapes codebases write it: a comparison, a helper asked about a
release, a flag named for its test, or a flag the file assigns one of those."""

from __future__ import annotations

import ast
import json
import textwrap

import pytest
from conftest import FIXTURES

from watcher.impact.code.guards import dead_branch, exits, runs_below
from watcher.impact.code.pyindex import read_python
from watcher.impact.code.versions import module_flags


@pytest.mark.parametrize(("test", "dead"), [
    ('torch.__version__ < "1.7"', "body"),
    ('digit_version(TORCH_VERSION) < digit_version("1.7.0")', "body"),
    ('TORCH_VERSION != "parrots" and digit_version(TORCH_VERSION) < digit_version("1.7.0")',
     "body"),
    ('version.parse(torch.__version__) >= version.parse("1.12.0")', "orelse"),
    ('Version(torch.__version__) >= Version("2.0.0")', "orelse"),
    ('"1.13" <= torch.__version__', "orelse"),
    ('not torch.__version__ < "1.7"', "orelse"),
    ('torch.__version__ < "2.0.0a0"', "body"),
    ('torch.version.__version__ == "1.13.0+cu117"', "body"),
    ("TORCH_VERSION >= (1, 8)", "orelse"),
    ('torch.__version__ < "1.7" or use_legacy', None),
    ('torch.__version__ >= "2.6"', None),  # depends on the 2.x release
    ("TORCH_VERSION >= (2, 1)", None),
    ('Version(transformers.__version__) < Version("5.0.0")', None),  # not torch's
    ('TORCH_VERSION == "parrots"', None),
    ("_TORCH_GREATER_EQUAL_1_12", "orelse"),  # a flag named for its test (Lightning)
    ("imports._TORCH_GREATER_EQUAL_1_12", "orelse"),
    ("HAS_NEW_API", None),  # a flag computed elsewhere, under a name that says no test
    ("_TORCH_GREATER_EQUAL", None),  # no release in the name
    ('RequirementCache("torch>=1.13.0")', "orelse"),
    ('RequirementCache("torchvision>=0.15")', None),  # not torch's
    ('is_torch_version("<", "1.9")', "body"),
    ('compare_version("torch", operator.ge, "1.10.0")', "orelse"),
    ('int(torch.__version__.split(".")[0]) >= 2', "orelse"),
    ('int(torch.__version__.split(".")[0]) < 2', "body"),
    ('int(torch.__version__.split(".")[0]) > 1', "orelse"),
])
def test_a_guard_is_decided_only_for_every_release_from_2_0(test, dead):
    assert dead_branch(ast.parse(test, mode="eval").body) == dead


@pytest.mark.parametrize(("test", "bound"), [
    ("TORCH_VERSION >= (2, 5, 0)", ("orelse", (2, 5))),
    ('torch.__version__ < "2.6"', ("body", (2, 6))),
    ('version.parse(torch.__version__) <= version.parse("2.4.1")', ("body", (2, 5))),
    ("TORCH_VERSION > (2, 4)", ("orelse", (2, 5))),
    ('not torch.__version__ >= "2.6"', ("body", (2, 6))),
    ('use_legacy and torch.__version__ < "2.6"', ("body", (2, 6))),
    ('use_legacy or torch.__version__ < "2.6"', None),  # the body may run on any release
    ('torch.__version__ != "2.6"', None),
    ('Version(transformers.__version__) < Version("5.0.0")', None),  # not torch's
    ("_TORCH_GREATER_EQUAL_2_5", ("orelse", (2, 5))),
    ("TORCH_GE_2_4", ("orelse", (2, 4))),
    ("torch_geometric.typing.WITH_PT24", ("orelse", (2, 4))),  # PyG: "with torch 2.4"
    ("not _TORCH_LESS_THAN_2_6", ("orelse", (2, 6))),
    ('torch_version_ge("2.6.0")', ("orelse", (2, 6))),
    ('is_torch_greater_or_equal("2.5")', ("orelse", (2, 5))),  # transformers
    ('is_torch_version(">=", "2.3")', ("orelse", (2, 3))),  # accelerate
    ('int(torch.__version__.split(".")[1]) >= 4', ("orelse", (2, 4))),  # minor, of 2.x
    ('is_version_greater_or_equal("2.5")', None),  # whose version is not said
    ("WITH_CUDA_12_4", None),  # not torch's
])
def test_a_branch_bounded_by_a_torch_version_runs_only_below_it(test, bound):
    assert runs_below(ast.parse(test, mode="eval").body) == bound


def test_a_flag_the_file_assigns_a_version_test_is_read_as_that_test():
    module = ast.parse(
        "import torch\n"
        "WITH_PT20 = int(torch.__version__.split('.')[0]) >= 2\n"
        "WITH_PT24 = WITH_PT20 and int(torch.__version__.split('.')[1]) >= 4\n"
        "LEGACY: bool = bool(RequirementCache('torch<2.6'))\n"
        "MIXED = WITH_PT24 and use_triton\n")
    flags = module_flags(module)
    assert flags == {"WITH_PT20": (ast.GtE, (2, 0)), "WITH_PT24": (ast.GtE, (2, 4)),
                     "LEGACY": (ast.Lt, (2, 6))}
    assert runs_below(ast.parse("WITH_PT24", mode="eval").body, flags) == ("orelse", (2, 4))
    assert runs_below(ast.parse("LEGACY", mode="eval").body, flags) == ("body", (2, 6))
    assert dead_branch(ast.parse("not WITH_PT20", mode="eval").body, flags) == "body"


def test_a_call_running_only_below_a_release_is_not_reached_by_it(run_cli, tmp_path):
    """d2go's ``else`` of ``if TORCH_VERSION >= (2, 5, 0):`` runs only on torch 2.4 or older:
    2.7's change to ``capture_pre_autograd_graph`` cannot reach the call there, and still
    reaches an unguarded one."""
    root = tmp_path / "code"
    root.mkdir()
    (root / "prepare.py").write_text(
        "from typing import Tuple\n"
        "import torch\n"
        "from torch._export import capture_pre_autograd_graph\n"
        "\n"
        "TORCH_VERSION: Tuple[int, ...] = tuple(int(x) for x in "
        "torch.__version__.split('.')[:2])\n"
        "\n"
        "def prepare(model, example):\n"
        "    if TORCH_VERSION >= (2, 5, 0):\n"
        "        return torch.export.export_for_training(model, example).module()\n"
        "    else:\n"
        "        return capture_pre_autograd_graph(model, example)\n"
        "\n"
        "def legacy(model, example):\n"
        "    return capture_pre_autograd_graph(model, example)\n")
    result = run_cli("impact", str(FIXTURES / "releases" / "pytorch" / "v2.7.0.md"),
                     "--code", str(root), "--format", "json")
    lines = sorted(use["line"] for item in json.loads(result.stdout)["items"]
                   for use in item.get("affects", []) if "capture_pre_autograd_graph" in use["api"])
    assert lines == [14], result.stdout


def below_of(source: str) -> dict[int, tuple[int, int] | None]:
    rows = read_python("m.py", textwrap.dedent(source)).uses
    return {row["line"]: row.get("below") for row in rows if row["name"] == "torch.load"}


def test_the_rest_of_a_function_after_an_early_return_for_new_releases_runs_below_them():
    """PyG's ``torch_load``: ``if WITH_PT24:`` returns on every path (a ``try`` whose handler
    returns or raises), so the bare ``torch.load`` after it runs only below 2.4."""
    found = below_of("""\
        import torch
        from torch_geometric import typing

        def torch_load(f):
            if typing.WITH_PT24:
                try:
                    return torch.load(f, weights_only=True)
                except RuntimeError as e:
                    if "safe" in str(e):
                        return torch.load(f, weights_only=False)
                    raise
            return torch.load(f)

        def maybe(f):
            if typing.WITH_PT24:
                if f.endswith(".pt"):
                    return torch.load(f, weights_only=True)
            return torch.load(f)  # reached on 2.4+ too: the if may fall through

        def nested(f, legacy):
            if legacy:
                if typing.WITH_PT24:
                    return None
            return torch.load(f)  # not a statement of the function after the version test
        """)
    assert found == {7: None, 10: None, 12: (2, 4), 17: None, 18: None, 24: None}


@pytest.mark.parametrize(("body", "leaves"), [
    ("return 1", True),
    ("raise ValueError", True),
    ("x = 1", False),
    ("if a:\n    return 1\nelse:\n    raise E", True),
    ("if a:\n    return 1", False),
    ("with f:\n    return 1", True),
    ("try:\n    return 1\nexcept E:\n    pass", False),
    ("try:\n    return 1\nexcept E:\n    raise", True),
    ("for x in y:\n    return x", False),  # an empty loop falls through
])
def test_a_block_exits_only_when_every_path_returns_or_raises(body, leaves):
    assert exits(ast.parse(body).body) is leaves
