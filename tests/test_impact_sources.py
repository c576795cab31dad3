"""Where ``impact`` gets a release's package from, and whose release it is (issues 36 and 40):
the notes name their repository (PyTorch/XLA's join torch_xla's bundled atlases, so a TPU
codebase learns what 2.8 removed from the package itself), and atlases a poll or ``atlas
build`` kept in the store are read by the offline command, never written by it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from atlas_support import V1, V2, write_wheel

from watcher.cli.commands.impact_sources import repo_of
from watcher.store import Store

TPU_TRAINER = """\
    import torch_xla
    import torch_xla.runtime as xr


    def step(model, batch):
        device = xr.xla_device()
        compiled = torch_xla.compile(model, num_different_graphs_allowed=2)
        return compiled(batch.to(device))
    """
# As PyTorch/XLA titles its releases: "2.8", not "2.8.0".
XLA_28 = textwrap.dedent("""\
    # PyTorch/XLA 2.8 release

    ## Bug fixes

    - Fix a hang in the PJRT client when a host leaves (#9000)
    """)


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


@pytest.mark.parametrize(("body", "repo"), [
    ("# PyTorch/XLA 2.8 release\n", "pytorch/xla"),
    ("# torch_xla 2.9.0\n", "pytorch/xla"),
    ("Cloud TPUs now support the PyTorch 2.0 release, via PyTorch/XLA integration.\n"
     "## Beta Features\n", "pytorch/xla"),
    ("# PyTorch 2.7.0 Release Notes\nPyTorch/XLA users: see its own notes.\n", "pytorch/pytorch"),
    ("- Fix a crash (#1)\n", "pytorch/pytorch"),
])
def test_the_notes_say_whose_they_are(body, repo):
    assert repo_of(body) == repo


def test_an_xla_release_joins_the_torch_xla_package_diff(run_cli, tmp_path):
    code = write(tmp_path / "tpu", {"train.py": TPU_TRAINER})
    notes = tmp_path / "notes.md"
    notes.write_text(XLA_28)
    result = run_cli("impact", str(notes), "--code", str(code), "--format", "json")
    assert result.code == 1, result.stderr
    uses = {use["line"]: use for item in json.loads(result.stdout)["items"]
            for use in item.get("affects", [])}
    assert {line: (use["tier"], use["source"]) for line, use in uses.items()} == {
        6: ("breaks", "package"), 7: ("breaks", "package")}
    assert uses[6]["why"] == ("calls torch_xla.runtime.xla_device, removed in v2.8 (the 2.8.0 "
                              "package: torch_xla.runtime.xla_device is gone)")
    assert uses[7]["why"] == ("passes num_different_graphs_allowed=, removed in v2.8 (the 2.8.0 "
                              "package: torch_xla.compile takes no num_different_graphs_allowed)")


def test_impact_reads_the_atlases_the_store_keeps_and_writes_none(run_cli, write_config,
                                                                   tmp_path):
    config = write_config(repos=("pytorch/pytorch",))
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    # Two releases no atlas is bundled for, built into the store as a poll's would be.
    for version, files in (("3.0.0", V1), ("3.1.0", V2)):
        built = run_cli("--config", str(config), "atlas", "build",
                        str(write_wheel(wheels, version, files)))
        assert built.code == 0, built.stderr
    code = write(tmp_path / "code", {"linalg.py": """\
        import torch

        lower = torch.cholesky(torch.eye(2))
        """})
    notes = tmp_path / "notes.md"
    notes.write_text("# PyTorch 3.1.0 Release Notes\n# Bug fixes\n- Fix a crash (#1)\n")
    store = tmp_path / "store"
    files = sorted(path.name for path in store.rglob("*"))

    result = run_cli("--config", str(config), "impact", str(notes), "--code", str(code),
                     "--format", "json")
    assert result.code == 1, result.stderr
    (use,) = [use for item in json.loads(result.stdout)["items"]
              for use in item.get("affects", [])]
    assert (use["line"], use["tier"], use["source"]) == (3, "breaks", "package")
    assert use["why"].endswith("(the 3.1.0 package: torch.cholesky now only raises)")
    # Nothing kept: no file added (diskcache touches its database on opening), and the
    # atlases are the two built.
    assert sorted(path.name for path in store.rglob("*")) == files
    kept = Store.open(store)
    try:
        assert kept.atlas_versions("torch") == ["3.0.0", "3.1.0"]
    finally:
        kept.close()
