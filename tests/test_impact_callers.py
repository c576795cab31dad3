"""A function called only under a version guard runs only on the releases the guard lets in:
its uses are not reached by a later release's change, whether the guard is in its own file or
another, a live branch (``< (2, 6)``) or one for a release older than any read (``1.13``) that
the walk skips; one call that may run on any release, a decorator, a callback or no call seen
at all leaves them reached."""

from __future__ import annotations

import pytest
from test_impact_tiers import analyzer, tiers, uses

from watcher.impact.code.scan import scan_codebase

FLIP = ("2.6.0-torch-load", "Flip default torch.load")

BACKPORT = """\
    import torch

    def fixed_1_13_load(f):
        return torch.load(f)
    """

GUARDED_ELSEWHERE = """\
    import torch
    from packaging.version import parse

    from .internals import fixed_1_13_load

    def load(f):
        torch_version = parse(torch.__version__)
        if torch_version >= parse("1.13.0") and torch_version < parse("1.14.0"):
            return fixed_1_13_load(f)
        return torch.load(f, weights_only=False)
    """


def package(**modules: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", **{f"pkg/{name}.py": text for name, text in modules.items()}}


def test_a_backport_called_only_for_an_old_release_in_another_file_is_not_reached(tmp_path):
    code = analyzer(tmp_path, package(internals=BACKPORT, checkpoint=GUARDED_ELSEWHERE))
    assert tiers(uses(code, *FLIP)) == {}


def test_one_call_that_may_run_on_any_release_leaves_it_reached(tmp_path):
    anywhere = "from pkg.internals import fixed_1_13_load\n\nstate = fixed_1_13_load('x.pt')\n"
    code = analyzer(tmp_path, package(internals=BACKPORT, checkpoint=GUARDED_ELSEWHERE,
                                      script=anywhere))
    assert tiers(uses(code, *FLIP)) == {("pkg/internals.py", 4): "check"}


def test_a_function_no_file_calls_stays_reached(tmp_path):
    # A library's public function: its callers are elsewhere.
    code = analyzer(tmp_path, package(internals=BACKPORT))
    assert tiers(uses(code, *FLIP)) == {("pkg/internals.py", 4): "check"}


@pytest.mark.parametrize(("guard", "reached"), [
    ("TORCH_VERSION < (2, 6)", False),  # runs only below the release of the change
    ("TORCH_VERSION < (2, 7)", True),   # 2.6 runs it
])
def test_a_live_guard_in_the_same_file_bounds_the_function(tmp_path, guard, reached):
    text = f"""\
        import torch
        from pkg.compat import TORCH_VERSION

        def _old_load(f):
            return torch.load(f)

        def load(f):
            if {guard}:
                return _old_load(f)
            return torch.load(f, weights_only=True)
        """
    found = tiers(uses(analyzer(tmp_path, package(io=text)), *FLIP))
    assert found == ({("pkg/io.py", 5): "check"} if reached else {})


def test_a_caller_bounded_by_its_own_callers_bounds_the_function(tmp_path):
    helpers = """\
        import torch

        def _read(f):
            return torch.load(f)

        def legacy_restore(f):
            return _read(f)
        """
    caller = """\
        import torch
        from pkg.helpers import legacy_restore

        def restore(f):
            if torch.__version__ < "1.10":
                return legacy_restore(f)
            return None
        """
    code = analyzer(tmp_path, package(helpers=helpers, trainer=caller))
    assert tiers(uses(code, *FLIP)) == {}


@pytest.mark.parametrize("registered", [
    "@register\ndef _old_load(f):\n    return torch.load(f)\n",  # the decorator may call it
    "def _old_load(f):\n    return torch.load(f)\n\nHOOKS = [_old_load]\n",  # a callback
])
def test_a_function_handed_on_stays_reached(tmp_path, registered):
    text = ("import torch\nfrom pkg.hooks import register\n\n" + registered
            + "\nif torch.__version__ < '1.10':\n    _old_load('x.pt')\n")
    found = tiers(uses(analyzer(tmp_path, package(io=text)), *FLIP))
    assert list(found.values()) == ["check"]


def test_what_a_skipped_branch_names_survives_the_scan_cache(tmp_path):
    for name, text in package(internals=BACKPORT, checkpoint=GUARDED_ELSEWHERE).items():
        path = tmp_path / "code" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(__import__("textwrap").dedent(text))
    cache: dict[str, str] = {}
    first = scan_codebase(str(tmp_path / "code"), cache=cache)
    again = scan_codebase(str(tmp_path / "code"), cache=cache)
    assert again.counts.cached == again.counts.files == 3
    assert first.unreached == again.unreached == {"pkg.internals.fixed_1_13_load": (1, 14)}


def test_the_bound_does_not_hang_on_which_use_is_matched_first(tmp_path):
    # inner <- a <- b <- c <- d <- a call under a guard: from b the guarded call is three callers
    # up, from inner five, past DEPTH. Whichever use is matched first, b's is bounded and
    # inner's stays reached.
    text = """\
        import torch

        def inner(f):
            return torch.load(f)

        def a(f):
            return inner(f)

        def b(f):
            torch.load(f)
            return a(f)

        def c(f):
            return b(f)

        def d(f):
            return c(f)

        def restore(f):
            if torch.__version__ < "1.10":
                return d(f)
            return None
        """
    found = tiers(uses(analyzer(tmp_path, package(io=text)), *FLIP))
    assert found == {("pkg/io.py", 4): "check"}
