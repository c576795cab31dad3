"""Version guards the walk decides: a branch for torch releases before 2.0 never runs on one the
analysis reads; a guard within 2.x, or on anything but torch's version, decides nothing."""

from __future__ import annotations

import ast
import json

import pytest
from conftest import FIXTURES

from watcher.impact.code.guards import dead_branch, runs_below


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
    ("_TORCH_GREATER_EQUAL_1_12", None),  # a flag computed elsewhere
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
])
def test_a_branch_bounded_by_a_torch_version_runs_only_below_it(test, bound):
    assert runs_below(ast.parse(test, mode="eval").body) == bound


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
