"""Version guards the walk decides: a branch for torch releases before 2.0 never runs on one the
analysis reads; a guard within 2.x, or on anything but torch's version, decides nothing."""

from __future__ import annotations

import ast

import pytest

from watcher.impact.code.guards import dead_branch


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
