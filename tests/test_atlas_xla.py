"""torch_xla's bundled atlases (2.1-2.9, from its Linux wheels): ``atlas diff`` of two of its
releases needs no network, lists what a TPU user meets, and keeps the internal Pallas kernels
out of the way (counted, flagged ``internal``, listed last)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from conftest import Result
from fakes.pypi import FakePackageIndex

Run = Callable[..., Result]


def _offline(tmp_path: Path) -> str:
    with FakePackageIndex() as gone:  # stopped: any request to it is refused
        index = gone.url
    path = tmp_path / "release-watch.toml"
    path.write_text(f'[store]\npath = "{tmp_path / "store"}"\n\n'
                    f'[impact]\npackage_index = "{index}"\n', encoding="utf-8")
    return str(path)


def test_the_2_8_diff_is_offline_and_lists_what_a_tpu_user_meets(tmp_path: Path,
                                                                  run_cli: Run) -> None:
    config = _offline(tmp_path)
    found = run_cli("atlas", "diff", "2.7.0", "2.8.0", "--package", "torch_xla", "--format",
                    "json", "--config", config)
    assert found.code == 0, found.stderr
    changes = {(c["api"], c["change"], c["parameter"]): c
               for c in json.loads(found.stdout)["changes"]}
    assert ("torch_xla.runtime.xla_device", "removed", None) in changes
    for api, parameter in [
            ("torch_xla.compile", "num_different_graphs_allowed"),
            ("torch_xla.distributed.fsdp.XlaFullyShardedDataParallel",
             "mark_step_on_finalization"),
            ("torch_xla.core.xla_model.get_xla_supported_devices", "devkind")]:
        assert (api, "parameter_removed", parameter) in changes, api
        assert "internal" not in changes[(api, "parameter_removed", parameter)]
    kernels = [c for key, c in changes.items() if ".pallas_kernels." in key[0]]
    assert kernels and all(c["internal"] is True for c in kernels)


def test_internal_kernels_come_last_under_their_own_heading(tmp_path: Path,
                                                            run_cli: Run) -> None:
    found = run_cli("atlas", "diff", "2.7.0", "2.8.0", "--package", "torch_xla", "--config",
                    _offline(tmp_path))
    lines = found.stdout.splitlines()
    assert lines[0].startswith("torch_xla 2.7.0 -> 2.8.0: ")
    first = next(n for n, line in enumerate(lines) if line.startswith("internal kernels: "))
    assert all("pallas_kernels" not in line for line in lines[:first])
    assert "  torch_xla.runtime.xla_device" in lines[:first]


def test_a_deprecated_then_removed_name_is_announced_twice(tmp_path: Path,
                                                           run_cli: Run) -> None:
    config = _offline(tmp_path)
    marked = run_cli("atlas", "diff", "2.4.0", "2.5.0", "--package", "torch_xla",
                     "--config", config)
    gone = run_cli("atlas", "diff", "2.6.0", "2.7.0", "--package", "torch_xla",
                   "--config", config)
    assert "  torch_xla.core.xla_model.xrt_world_size: xrt_world_size() will be removed in " \
           "release 2.7." in marked.stdout.splitlines()
    assert "  torch_xla.core.xla_model.xrt_world_size" in gone.stdout.splitlines()
