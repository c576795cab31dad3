"""What the mutation audit of the tiers and the impact command (issue 31) found no test for:
a removed parameter's position exactly at the call's positional count, ``*args`` forwarded
where the parameter has a place, a subclass known to the knowledge by a re-exported spelling,
and over several releases a use reached at the same tier twice, kept in the first."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

from conftest import Result
from test_impact_cli import trainer  # noqa: F401  (a fixture)
from test_impact_tiers import LR_ITEM, SCHEDULERS, SIGNATURES, analyzer, tiers, uses

from watcher.impact.knowledge import Signature

Run = Callable[..., Result]
PRIVATE = "torch.optim._cosine.CosineLR"  # where it is defined
PUBLIC = f"{SCHEDULERS}.CosineLR"  # the name users write (re-exported)


class Knowledge:
    """LRScheduler, StepLR (2.6 signature) and CosineLR, defined in a private module and
    re-exported from ``torch.optim.lr_scheduler``."""

    def resolve(self, name: str) -> str | None:
        if name == PUBLIC:
            return PRIVATE
        return name if name.startswith(SCHEDULERS + ".") or name == PRIVATE else None

    def names_of(self, api: str) -> list[str]:
        return [PUBLIC, PRIVATE] if api == PRIVATE else [api]

    def subclasses(self, cls: str) -> set[str]:
        return {f"{SCHEDULERS}.StepLR", PRIVATE} if cls == f"{SCHEDULERS}.LRScheduler" else set()

    def signature(self, api: str) -> Signature | None:
        return SIGNATURES[f"{SCHEDULERS}.StepLR"] if api == PRIVATE else SIGNATURES.get(api)

    def deprecated(self, api: str) -> str | None:
        return None

    def module_of(self, api: str) -> str | None:
        return api.rpartition(".")[0]


CALLS = {"sched.py": """\
    from torch.optim.lr_scheduler import CosineLR, StepLR

    def make(optim, rest):
        a = StepLR(optim, 30, 0.1, -1)
        b = StepLR(optim, 30, 0.1, -1, False)
        c = StepLR(optim, *rest)
        d = StepLR(optim, 30, 0.1, -1, True, *rest)
        e = CosineLR(optim, verbose=True)
        return a, b, c, d, e
    """}


def test_positions_count_from_zero_and_star_args_may_carry_a_placed_parameter(tmp_path):
    affects = uses(analyzer(tmp_path, CALLS, Knowledge()), *LR_ITEM)
    # a: four positional arguments stop before verbose (the fifth); b, d pass it by position;
    # c's *rest may reach it; e passes it to a subclass known by its re-exported name.
    found = {line: tier for (_, line), tier in tiers(affects).items() if line > 1}
    assert found == {5: "breaks", 6: "check", 7: "breaks", 8: "breaks"}
    why = {use.line: use.why for use in affects}
    assert why[6].startswith("forwards *args to StepLR, which may carry verbose=")
    assert why[8] == ("passes verbose=, removed in v2.7.0 (the notes say so; no 2.7.0 package "
                      "read yet); CosineLR derives from LRScheduler")


REMOVED = textwrap.dedent("""\
    # PyTorch {version} Release Notes
    # Backwards Incompatible Changes
    ## Quantization
    - Removed `torch.ao.quantization` (#16000{n})
    """)


def test_a_use_reached_at_the_same_tier_by_two_releases_is_the_first_ones(
        run_cli: Run, trainer: Path, tmp_path: Path) -> None:  # noqa: F811
    files = []
    # Releases no package of which can be read here: the notes' stated removals stand (with
    # the bundled 2.9.0 and 2.10.0 atlases, which still have torch.ao.quantization, they would
    # be ``check``).
    for n, version in enumerate(("2.16.0", "2.17.0")):
        path = tmp_path / f"v{version}.md"
        path.write_text(REMOVED.format(version=version, n=n))
        files.append(str(path))
    result = run_cli("impact", *files, "--code", str(trainer), "--format", "json")
    assert result.code == 1
    data = json.loads(result.stdout)
    uses_by_release = {item["release"]: sorted(use["line"] for use in item["affects"])
                       for item in data["items"]}
    assert uses_by_release == {"v2.16.0": [2, 14], "v2.17.0": []}


def test_a_use_matched_by_name_and_by_method_name_on_one_line_keeps_the_name(tmp_path):
    from watcher.impact.code import scan_codebase
    from watcher.impact.model import Subject, Subjects
    from watcher.impact.reach.match import find_affects

    (tmp_path / "run.py").write_text(
        "import torch\n\ndef show(s):\n"
        "    return s.print_lr() or torch.optim.lr_scheduler.LRScheduler.print_lr(s)\n")
    subject = Subject(api=f"{SCHEDULERS}.LRScheduler.print_lr", scope="method",
                      method="print_lr")
    affects = find_affects(Subjects(python=(subject,)), scan_codebase(str(tmp_path), {}), "c")
    assert [(a.line, a.tier, a.by_method_name) for a in affects] == [(4, "breaks", False)]
