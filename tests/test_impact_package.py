"""The package's own API changes joined with the notes (``watcher.impact.reach.package``): the real
2.7 notes and the bundled 2.6/2.7 atlases against code written like real code; a subclass of
the class the notes name, a parameter passed by position, a default the notes never mention;
and in the bot, the same through a poll. No network: the atlases are bundled."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES, release_notes

from watcher.impact.analysis.release import package_changes
from watcher.impact.atlas import AtlasSource

V27 = FIXTURES / "releases" / "pytorch" / "v2.7.0.md"
TRAIN = textwrap.dedent("""\
    import torch
    from torch.optim.lr_scheduler import ReduceLROnPlateau, StepLR


    def schedulers(model):
        optim = torch.optim.SGD(model.parameters(), lr=0.1)
        plateau = ReduceLROnPlateau(optim, mode="max", verbose=True)
        step = StepLR(optim, 30, 0.1, -1, True)
        quiet = StepLR(optim, 30)
        plateau.print_lr()
        return plateau, step, quiet


    def export(model, args, **kwargs):
        torch.onnx.export(model, args, "m.onnx")
        torch.onnx.export(model, args, "m.onnx", optimize=False)
        torch.onnx.export(model, args, "m.onnx", **kwargs)


    from torch.serialization import FILE_LIKE  # noqa: E402
    """)


@pytest.fixture
def code(tmp_path: Path) -> Path:
    root = tmp_path / "trainer"
    root.mkdir()
    (root / "train.py").write_text(TRAIN)
    return root


def uses(report: dict) -> dict[int, tuple[str, str, str]]:
    """line → (tier, source, why) over every item."""
    return {use["line"]: (use["tier"], use["source"], use["why"])
            for item in report["items"] for use in item.get("affects", [])}


def uses_of(run_cli, tmp_path: Path, notes: str, source: str) -> dict[int, tuple[str, str, str]]:
    """``uses`` of ``impact`` with the notes file ``notes`` (of the fixtures) on one module
    holding ``source``."""
    root = tmp_path / "code"
    root.mkdir()
    (root / "module.py").write_text(textwrap.dedent(source))
    result = run_cli("impact", str(FIXTURES / "releases" / "pytorch" / notes), "--code",
                     str(root), "--format", "json")
    return uses(json.loads(result.stdout))


@pytest.mark.slow
def test_the_27_notes_and_its_package_break_what_the_upgrade_would_break(run_cli, code):
    result = run_cli("impact", str(V27), "--code", str(code), "--format", "json")
    assert result.code == 1, result.stderr  # uses break
    found = uses(json.loads(result.stdout))
    # The notes name "the LRScheduler constructor"; the package shows every scheduler lost
    # verbose (ReduceLROnPlateau, StepLR, each a change of its own), and where StepLR took it
    # by position.
    assert found[7] == ("breaks", "package", "passes verbose=, removed in v2.7.0 (the 2.7.0 "
                        "package: torch.optim.lr_scheduler.ReduceLROnPlateau takes no verbose)")
    assert found[8][:2] == ("breaks", "package") and "by position (argument 5)" in found[8][2]
    assert 9 not in found  # StepLR(optim, 30) passes no verbose
    # scheduler.print_lr() on an object of unknown type: removed, but whose method is a guess
    assert found[10][0] == "check" and "print_lr" in found[10][2]
    # The default of torch.onnx.export's optimize changed, which the notes do not say; it
    # applies only with dynamo=True (not the default then), which the package does not say
    # either: counted in one line, not flagged.
    assert not {15, 16, 17} & set(found)
    # torch.serialization.FILE_LIKE is gone, which the notes do not say: an item of the
    # package's own, and the import breaks.
    assert found[20] == ("breaks", "package", "imports torch.serialization.FILE_LIKE, removed "
                                             "in v2.7.0 (the 2.7.0 package: "
                                             "torch.serialization.FILE_LIKE is gone)")
    report = json.loads(result.stdout)
    lr = next(item for item in report["items"] if "print_lr" in item["text"].split("\n")[0])
    # The notes' own subjects stay named, though the package's changes find their uses.
    assert lr["apis"][:2] == ["LRScheduler.print_lr", "LRScheduler"]
    (package,) = [item for item in report["items"] if item["origin"] == "package"]
    assert "`torch.serialization.FILE_LIKE`" in package["text"]
    assert package["kind"] == "bc_breaking"


def test_text_names_the_changed_apis_briefly(run_cli, code):
    result = run_cli("impact", str(V27), "--code", str(code))
    assert result.code == 1
    line = next(line for line in result.stdout.splitlines() if "changes: LRScheduler" in line)
    assert line.endswith("more")  # 17 schedulers, listed whole in the JSON only


def test_the_diff_is_read_from_bundled_atlases_without_the_network(caplog):
    source = AtlasSource(store=None, index=None, clock=lambda: None)  # type: ignore[arg-type]
    package = package_changes(source, "pytorch/pytorch", "v2.7.0")
    assert package is not None and package.before.version.startswith("2.6")
    removed = {(c.api, c.parameter) for c in package.changes if c.change == "parameter_removed"}
    assert ("torch.optim.lr_scheduler.ReduceLROnPlateau", "verbose") in removed
    with caplog.at_level(logging.INFO):
        assert package_changes(source, "pytorch/pytorch", "v2.8.0-rc1", prerelease=True) is None
        assert package_changes(source, "pytorch/pytorch", "v9.0.0") is None  # no index
        assert package_changes(source, "pytorch/vision", "v0.22.0") is None  # no atlas read
    said = [r.getMessage() for r in caplog.records if "package diff skipped" in r.getMessage()]
    assert len(said) == 2 and "pre-release" in said[0] and "torch 9.0.0" in said[1]


JSONL = '[[notifiers]]\nname = "log"\ntype = "jsonl"\npath = "events.jsonl"\n'


def test_a_poll_announces_the_package_change_that_touches_the_code(
        fake_github, write_config, run_cli, tmp_path, code):
    fake_github.add_release("pytorch/pytorch", tag="v2.7.0", name="PyTorch 2.7.0",
                            body=release_notes("pytorch/v2.7.0.md"))
    console = '[[notifiers]]\nname = "console"\ntype = "console"\n'
    config = write_config(f'[impact]\ncode = ["{code}"]\n', repos=("pytorch/pytorch",),
                          notifiers=JSONL + console)
    result = run_cli("--config", str(config), "poll")
    assert result.code == 0, result.stderr
    assert "more API changes in the package that the notes do not mention, none touching " \
        "your code" in result.stdout
    (event,) = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text()
                .splitlines()]
    (package,) = [item for item in event["items"] if item["origin"] == "package"]
    assert {use["line"] for use in package["affects"]} == {20}
    # The package's other API changes touch nothing here: counted, not listed.
    assert event["summary"]["unmentioned_api_changes"] > 10
    notes = [item for item in event["items"] if item["origin"] == "notes"]
    assert len(notes) == event["summary"]["items"] - 1
    lr = next(item for item in notes if "print_lr" in item["text"].split("\n")[0])
    assert {use["line"]: use["tier"] for use in lr["affects"]} == {7: "breaks", 8: "breaks",
                                                                  10: "check"}


def test_a_base_class_option_spares_a_subclass_whose_own_constructor_keeps_it(run_cli,
                                                                               tmp_path):
    """2.10 removes ``data_source`` from ``Sampler``; ``SequentialSampler`` has an
    ``__init__`` of its own that still takes it: the notes' reading would flag every sampler,
    the atlases say which lost it."""
    found = uses_of(run_cli, tmp_path, "v2.10.0.md", """\
        import torch
        from torch.utils.data import Sampler, SequentialSampler


        class Mine(Sampler):
            def __init__(self, data):
                super().__init__(data)


        def samplers(dataset):
            return SequentialSampler(dataset), Mine(dataset)
        """)
    assert 10 not in found  # SequentialSampler(dataset) keeps its data_source


class CountingNames(dict[str, str]):
    """A name table that counts how often a name is looked up in it."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.asked = 0

    def get(self, name: str, default: object = None) -> object:  # type: ignore[override]
        self.asked += 1
        return super().get(name, default)


def test_the_package_step_asks_the_atlas_for_a_name_once():
    """Each package change is weighed against each BC-breaking item's subjects (thousands of
    pairs, the same few hundred names): an atlas resolves a name once, and an item without
    subjects is not weighed at all."""
    from watcher.impact.atlas import Api, Atlas
    from watcher.impact.reach import speaks_of

    names = CountingNames({"torch.optim.SGD": "torch.optim.sgd.SGD"})
    atlas = Atlas("torch", "2.7.0", {"torch.optim.sgd.SGD": Api("class")}, names)
    assert [atlas.resolve("torch.optim.SGD") for _ in range(3)] == ["torch.optim.sgd.SGD"] * 3
    assert [atlas.resolve("torch.optim.Gone") for _ in range(3)] == [None] * 3
    # One look-up of each name, and of each owner along the way (torch.optim, torch).
    assert names.asked == 4
    source = AtlasSource(store=None, index=None, clock=lambda: None)  # type: ignore[arg-type]
    package = package_changes(source, "pytorch/pytorch", "v2.7.0")
    assert package is not None
    assert speaks_of(package.changes[0], (), "Remove it", object()) is None  # type: ignore[arg-type]


def test_a_module_said_to_change_reaches_only_what_its_package_shows_changed(run_cli, tmp_path):
    """2.9: "Objects in torch.utils.dlpack have been updated ... such as DLDeviceType"; the
    package shows two members of DLDeviceType gone. A use of them breaks; calls of
    to_dlpack and from_dlpack, unchanged in the package, are not reached."""
    found = uses_of(run_cli, tmp_path, "v2.9.0.md", """\
        from torch.utils.dlpack import DLDeviceType, from_dlpack, to_dlpack


        def roundtrip(tensor):
            return from_dlpack(to_dlpack(tensor))


        PINNED = DLDeviceType.kDLCPUPinned
        """)
    assert 5 not in found
    assert found[8][0] == "breaks", found[8]


def test_a_subclass_constructing_its_base_with_a_removed_option_breaks(run_cli, tmp_path):
    """``super().__init__(data)`` in a ``Sampler`` subclass constructs a ``Sampler`` with
    ``data_source``; the 2.10 package's ``Sampler`` (``Generic``, no constructor of its own)
    takes no argument at all, so the package proves it: ``breaks``."""
    found = uses_of(run_cli, tmp_path, "v2.10.0.md", """\
        import torch
        from torch.utils.data import Sampler


        class Ordered(Sampler):
            def __init__(self, data):
                super().__init__(data)
                self.data = data


        class Weighted(torch.utils.data.Sampler[int]):
            def __init__(self, data_source):
                super().__init__(data_source)
        """)
    assert found[7][0] == "breaks", found
    assert "takes no data_source" in found[7][2]
    assert found[13][0] == "breaks", found  # the base written as a generic alias


def test_another_packages_subclass_passing_a_deprecated_option_is_reached(run_cli, tmp_path):
    """torchdata's ``StatefulDataLoader`` derives from ``DataLoader`` and takes its options
    (the vocabulary's ``[[subclasses]]``): passing ``pin_memory_device`` to it is a use of
    2.9's deprecation, as it is on ``DataLoader``; a call not passing it is none."""
    found = uses_of(run_cli, tmp_path, "v2.9.0.md", """\
        from torchdata.stateful_dataloader import StatefulDataLoader
        import torchdata.stateful_dataloader as sdl


        def loaders(dataset):
            a = StatefulDataLoader(dataset, pin_memory=True, pin_memory_device="cuda")
            b = sdl.StatefulDataLoader(dataset, pin_memory_device="cuda")
            c = StatefulDataLoader(dataset, batch_size=4)
            return a, b, c
        """)
    assert found[6][0] == "check" and "pin_memory_device" in found[6][2], found
    assert "StatefulDataLoader derives from DataLoader" in found[6][2]
    assert found[7][0] == "check", found
    assert 8 not in found


def test_slicing_a_dim_the_file_flattened_is_reached_by_the_deprecation(run_cli, tmp_path):
    """2.10 deprecates slicing a flattened dim from the root mesh. A lookup by a key the file
    made with ``_flatten`` (the same string, the same name, or any name when the key is a
    parameter of the flattening function) is ``check``; a dim the mesh was built with, a bare
    ``_flatten()``, and another package's ``_flatten`` make no key."""
    found = uses_of(run_cli, tmp_path, "v2.10.0.md", """\
        import torch
        from torch.distributed.device_mesh import init_device_mesh

        HSDP = "hsdp"


        def build():
            mesh = init_device_mesh("cuda", (2, 2, 2), mesh_dim_names=("dp", "cp", "tp"))
            mesh["dp", "cp"]._flatten("dp_cp")
            mesh[("dp", "cp")]._flatten(HSDP)
            a = mesh["dp_cp"]
            b = mesh[HSDP].get_group()
            c = mesh["tp"]
            d = mesh["tp", "cp"]._flatten().get_group()
            return a, b, c, d


        class Rollout:
            def setup(self):
                self.mesh[self.mesh.mesh_dim_names[1:]]._flatten(mesh_dim_name="exclude_dp")
                self.rank = self.mesh["exclude_dp"].get_local_rank()


        def other(x, table):
            y, _ = torch.jit._flatten(x)
            return table["tp"], y
        """)
    flattened = {line: use for line, use in found.items() if "looks up by" in use[2]}
    assert sorted(flattened) == [11, 12, 21], found
    assert all(use[0] == "check" for use in flattened.values())
    assert "'dp_cp', made by line 9" in flattened[11][2]


def test_a_flattened_key_given_as_a_parameter_may_be_any_name_looked_up(run_cli, tmp_path):
    found = uses_of(run_cli, tmp_path, "v2.10.0.md", """\
        def flatten_mesh(device_mesh, name=None):
            return device_mesh._flatten(mesh_dim_name=name)


        def flatten_dims(device_mesh, dims, names):
            flatten_mesh(device_mesh[dims], "_".join(dims))
            for dim_name in names:
                _ = device_mesh[dim_name]
            return device_mesh["tp"]
        """)
    flattened = {line: use for line, use in found.items() if "looks up by" in use[2]}
    assert sorted(flattened) == [6, 8], found
    assert "which may be name (line 2)" in flattened[8][2]


def test_a_file_reading_the_flattened_dims_may_look_up_any_of_them(run_cli, tmp_path):
    """A root mesh lists the dims flattened from it in ``_flatten_mapping``: a file reading it
    may slice any of them, by any name (Megatron-FSDP's index of its meshes)."""
    found = uses_of(run_cli, tmp_path, "v2.10.0.md", """\
        def mesh_names(device_mesh):
            flat = list(device_mesh._get_root_mesh()._flatten_mapping)
            return [*device_mesh.mesh_dim_names, *flat]


        class Index:
            def group(self):
                return self.device_mesh[self.dp_shard_dim].get_group(), self.sizes["dp"]
        """)
    flattened = {line: use for line, use in found.items() if "looks up by" in use[2]}
    assert sorted(flattened) == [8], found
    assert "the keys of _flatten_mapping (line 2)" in flattened[8][2]


def test_a_dict_passed_as_the_exported_arguments_is_a_final_dict_of_keywords(run_cli, tmp_path):
    """pytorch_tabular exports ``torch.onnx.export(self.model, x, path)`` with ``x`` a dict of
    its two inputs: torch wraps a lone ``args`` into a tuple, so the dict ends it, which 2.5
    deprecates as keyword arguments passed as a final dict. A tensor or a tuple of tensors
    there is not; the package names the parameter (``args``) that takes the arguments."""
    found = uses_of(run_cli, tmp_path, "v2.5.0.md", """\
        import torch


        def save(model, path):
            x = {"continuous": torch.zeros(1, 3), "categorical": torch.zeros(1, 2)}
            torch.onnx.export(model, x, str(path), opset_version=12)
            torch.onnx.export(model, (torch.zeros(1),), str(path), opset_version=12)
            torch.onnx.export(model, torch.zeros(1), str(path), opset_version=12)
            torch.onnx.export(model, {"x": torch.zeros(1)}, str(path), opset_version=12)
        """)
    final = {line: use for line, use in found.items() if "as the arguments of" in use[2]}
    assert sorted(final) == [6, 9], found
    assert final[6][0] == "check"


def test_a_scheduler_deriving_from_the_private_lrscheduler_loses_verbose(run_cli, tmp_path):
    """graphium's ``WarmUpLinearLR(_LRScheduler)`` calls ``super().__init__(optimizer,
    last_epoch, verbose)``: torch's private ``_LRScheduler`` is ``LRScheduler`` (the atlas lists
    public names only), whose ``verbose`` 2.7 removes, so the call breaks; one passing two
    arguments does not."""
    found = uses_of(run_cli, tmp_path, "v2.7.0.md", """\
        from torch.optim.lr_scheduler import _LRScheduler


        class WarmUp(_LRScheduler):
            def __init__(self, optimizer, last_epoch=-1, verbose=False):
                super().__init__(optimizer, last_epoch, verbose)


        class Plain(_LRScheduler):
            def __init__(self, optimizer, last_epoch=-1):
                super().__init__(optimizer, last_epoch)
        """)
    assert found[6][0] == "breaks" and "_LRScheduler derives from LRScheduler" in found[6][2]
    assert 11 not in found, found


def test_a_dict_updated_from_a_literal_dict_keeps_known_keys(run_cli, tmp_path):
    """optimum-quanto's examples build ``dataset_kwargs`` and ``update`` it from a literal dict
    of DataLoader options: the spread passes those keys, no ``pin_memory_device``. A dict
    updated from one of unknown keys may carry anything."""
    found = uses_of(run_cli, tmp_path, "v2.9.0.md", """\
        import torch


        def main(args, d1):
            dataset_kwargs = {"batch_size": args.batch_size}
            if torch.cuda.is_available():
                backend_kwargs = {"num_workers": 1, "pin_memory": True, "shuffle": True}
                dataset_kwargs.update(backend_kwargs)
            loader = torch.utils.data.DataLoader(d1, **dataset_kwargs)
            other = {"batch_size": 1}
            other.update(args.extra)
            opened = torch.utils.data.DataLoader(d1, **other)
            pinned = {"batch_size": 1}
            pinned.update({"pin_memory_device": "cuda"})
            return loader, opened, torch.utils.data.DataLoader(d1, **pinned)
        """)
    assert 9 not in found, found
    assert found[12][0] == "check" and "may carry pin_memory_device" in found[12][2]
    # the literal's keys are added: the option it carries is passed
    assert found[15][0] == "check" and "passes pin_memory_device=" in found[15][2], found


def test_a_spread_dict_default_no_caller_replaces_passes_only_its_keys(run_cli, tmp_path):
    """pytorch_tabular's ``save_model_for_inference(path, kind, onnx_export_params={"opset_version":
    12})`` adds ``input_names`` and exports with ``**onnx_export_params``: where no call gives
    the parameter, the export passes those keys only (its opset is explicit, no ``training``
    or ``operator_export_type`` can come); a caller giving another dict may pass anything."""
    source = """\
        import torch


        class Model:
            def save(self, path, kind="onnx", params={"opset_version": 12}):
                params["input_names"] = ["x"]
                torch.onnx.export(self.model, (torch.zeros(1),), str(path), **params)


        def run(model):
            model.save("m.onnx", kind="onnx"{given})
        """
    (tmp_path / "quiet").mkdir()
    quiet = uses_of(run_cli, tmp_path / "quiet", "v2.5.0.md", source.replace("{given}", ""))
    assert 7 not in quiet, quiet
    (tmp_path / "given").mkdir()
    given = uses_of(run_cli, tmp_path / "given", "v2.5.0.md",
                    source.replace("{given}", ', params={"training": 1}'))
    assert given[7][0] == "check" and "may carry" in given[7][2], given


def test_a_spread_dict_default_of_forward_may_be_given_by_any_module_call(run_cli, tmp_path):
    """A module's ``forward`` is called as ``model(x, ...)``, which its name does not find: a
    call of ``self.forward`` in view does not make its dict default the only one it gets."""
    source = """\
        import torch


        class Exporter(torch.nn.Module):
            def forward(self, path, params={"opset_version": 12}):
                torch.onnx.export(self.model, (torch.zeros(1),), str(path), **params)

            def again(self, path):
                return self.forward(path)


        def run(exporter):
            exporter("m.onnx", params={"training": 1})
        """
    uses = uses_of(run_cli, tmp_path, "v2.5.0.md", source)
    assert uses[6][0] == "check" and "may carry" in uses[6][2], uses


def test_a_custom_operator_returning_its_input_is_reached_by_2_9(run_cli, tmp_path):
    """2.9 warns that a custom operator whose output shares storage with an input may now give
    wrong results under ``torch.compile``. foundation-model-stack's ``paged_attn_store`` fake
    returns its own ``key_cache, value_cache``; an operator returning a view (``x.view(-1)``)
    does too. A clone, a new tensor, an ``autograd.Function`` returning its input (no
    operator), and the operator's decorator itself are not reached."""
    found = uses_of(run_cli, tmp_path, "v2.9.0.md", """\
        import torch
        from torch.library import custom_op


        @custom_op("spyre::store", mutates_args=())
        def store(key: torch.Tensor, key_cache: torch.Tensor) -> torch.Tensor:
            return key_cache.clone()


        @store.register_fake
        def store_meta(key, key_cache):
            return key_cache


        @torch.library.custom_op("mylib::bar", mutates_args=())
        def bar(x: torch.Tensor) -> torch.Tensor:
            return x.view(-1)


        @torch.library.custom_op("mylib::fresh", mutates_args=())
        def fresh(x: torch.Tensor) -> torch.Tensor:
            return torch.empty_like(x)


        class Copy(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x
        """)
    aliasing = {line: use for line, use in found.items() if "sharing storage" in use[2]}
    assert sorted(aliasing) == [12, 17], found
    assert all(use[0] == "check" for use in aliasing.values())
    assert "store_meta, the fake of an operator, returns its input key_cache" in aliasing[12][2]
    assert 5 not in found and 20 not in found


def test_a_dim_flattened_in_one_file_and_sliced_in_another_is_reached(run_cli, tmp_path):
    """finetrainers' parallel backend flattens "dp_cp" on the root mesh it builds and hands
    it out through ``get_mesh(name)``, which slices ``self._mesh[name]`` for whatever its
    callers ask; the trainer, in another file, slices ``get_mesh()["dp_cp"]``. A string no
    file flattens (``"tp"``), or a lookup on a value not named for a mesh (``batch["dp_cp"]``),
    is no such slice."""
    root = tmp_path / "code"
    (root / "parallel").mkdir(parents=True)
    (root / "parallel" / "ptd.py").write_text(textwrap.dedent("""\
        from torch.distributed.device_mesh import init_device_mesh


        class Backend:
            def get_mesh(self, name=None):
                def _get_mesh():
                    return self._mesh if name is None else self._mesh[name]
                if self._mesh is None:
                    mesh = init_device_mesh("cuda", (2, 2), mesh_dim_names=("dp", "cp"))
                    mesh[("dp", "cp")]._flatten(mesh_dim_name="dp_cp")
                    self._mesh = mesh
                return _get_mesh()
        """))
    (root / "trainer.py").write_text(textwrap.dedent("""\
        def step(backend, batch):
            group = backend.get_mesh()["dp_cp"].get_group()
            tp = backend.get_mesh()["tp"]
            return group, tp, batch["dp_cp"]
        """))
    result = run_cli("impact", str(FIXTURES / "releases" / "pytorch" / "v2.10.0.md"), "--code",
                     str(root), "--format", "json")
    found = {(use["path"], use["line"]): use["why"] for item in json.loads(result.stdout)["items"]
             for use in item.get("affects", []) if "looks up by" in use["why"]}
    assert sorted(found) == [("parallel/ptd.py", 7), ("trainer.py", 2)], found
    assert "a parameter its callers give, which may be 'dp_cp' (line 10)" in found[
        ("parallel/ptd.py", 7)]
    assert "'dp_cp', made by parallel/ptd.py line 10" in found[("trainer.py", 2)]


def test_an_option_forwarded_from_a_none_default_no_caller_gives_is_not_passed(run_cli,
                                                                              tmp_path):
    """``dynamic_axes=dynamic_axes`` passes on a parameter defaulting to None: where every call
    of the function, in any file, leaves it out, the export only ever gets None, which is not
    using the deprecated option. A call giving it (by position, in another file) or no call
    seen at all keeps the use."""
    root = tmp_path / "code"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "tests.py").write_text(textwrap.dedent("""\
        import torch


        class ExportTest:
            def run_model(self, model, x, do_constant_folding=True, dynamic_axes=None):
                torch.onnx.export(model, x, "m.onnx", dynamic_axes=dynamic_axes)

            def test_export(self):
                self.run_model(object(), (1,), do_constant_folding=False)
        """))
    (root / "pkg" / "helpers.py").write_text(textwrap.dedent("""\
        import torch


        def export(model, x, dynamic_axes=None):
            torch.onnx.export(model, x, "m.onnx", dynamic_axes=dynamic_axes)


        def never_called(model, x, dynamic_axes=None):
            torch.onnx.export(model, x, "n.onnx", dynamic_axes=dynamic_axes)
        """))
    (root / "pkg" / "main.py").write_text(textwrap.dedent("""\
        from pkg.helpers import export


        def go(model, x):
            export(model, x, {"x": [0]})
        """))
    result = run_cli("impact", str(FIXTURES / "releases" / "pytorch" / "v2.10.0.md"), "--code",
                     str(root), "--format", "json")
    found = {(use["path"], use["line"]) for item in json.loads(result.stdout)["items"]
             if "dynamic_axes" in item["text"] for use in item.get("affects", [])}
    assert found == {("pkg/helpers.py", 5), ("pkg/helpers.py", 9)}, found


def test_kwargs_passed_on_that_no_caller_fills_with_the_option_do_not_carry_it(run_cli,
                                                                                tmp_path):
    """A DataLoader subclass passing its ``**kwargs`` to ``super().__init__`` (openspeech's
    AudioDataLoader): where every construction of it, in any file, passes other keywords, the
    deprecated ``pin_memory_device`` never arrives. A caller passing it, spreading ``**``,
    a subclass (constructed with anything) or no caller seen keeps the use."""
    root = tmp_path / "code"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    loader = """\
        from torch.utils.data import DataLoader


        class {name}(DataLoader):
            def __init__(self, dataset, num_workers, **kwargs):
                super().__init__(dataset=dataset, num_workers=num_workers, **kwargs)
        """
    for name in ("Quiet", "Given", "Spread", "Derived", "Unseen"):
        (root / "pkg" / f"{name.lower()}.py").write_text(
            textwrap.dedent(loader).format(name=name))
    (root / "pkg" / "main.py").write_text(textwrap.dedent("""\
        from pkg.quiet import Quiet
        from pkg.given import Given
        from pkg.spread import Spread
        from pkg.derived import Derived


        class Mine(Derived):
            pass


        def loaders(data, options):
            a = Quiet(data, 2, batch_size=4, shuffle=True)
            b = Given(data, 2, pin_memory=True, pin_memory_device="cuda")
            c = Spread(data, 2, **options)
            return a, b, c
        """))
    result = run_cli("impact", str(FIXTURES / "releases" / "pytorch" / "v2.9.0.md"), "--code",
                     str(root), "--format", "json")
    found = {use["path"] for item in json.loads(result.stdout)["items"]
             if "pin_memory_device" in item["text"] for use in item.get("affects", [])}
    assert found == {"pkg/given.py", "pkg/spread.py", "pkg/derived.py", "pkg/unseen.py"}, found


@pytest.mark.parametrize(("config", "flagged"), [
    (None, set()),
    ("loader:\n  pin_memory_device: cuda\n", {"pkg/data.py"}),
    ('LOADER = {"pin_memory_device": "cuda"}\n', {"pkg/data.py"})])
def test_a_deprecated_option_no_file_writes_is_not_carried_by_kwargs(run_cli, tmp_path, config,
                                                                      flagged):
    """pytorch_tabular's ``DataLoader(..., **self.config.dataloader_kwargs)``, with no caller
    in view: the deprecated ``pin_memory_device`` can only come through the forward where
    something in the tree writes it (a YAML key, a dict key); where nothing does, it would
    come from a caller outside the tree, whose warning it is. A removed option
    (``StepLR``'s ``verbose`` in 2.7) stays ``check``: the library's call is where it breaks."""
    root = tmp_path / "code"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "data.py").write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader


        def loader(dataset, config):
            return DataLoader(dataset, batch_size=8, pin_memory=True, **config.loader_kwargs)
        """))
    (root / "pkg" / "sched.py").write_text(textwrap.dedent("""\
        from torch.optim.lr_scheduler import StepLR


        def scheduler(optimizer, **options):
            return StepLR(optimizer, step_size=10, **options)
        """))
    if config is not None:
        (root / ("config.yaml" if config.startswith("loader") else "pkg/defaults.py")) \
            .write_text(config)
    found = {}
    for release in ("v2.9.0", "v2.7.0"):
        result = run_cli("impact", str(FIXTURES / "releases" / "pytorch" / f"{release}.md"),
                         "--code", str(root), "--format", "json")
        for item in json.loads(result.stdout)["items"]:
            for use in item.get("affects", []):
                found.setdefault(use["path"], set()).add((use["tier"], use["why"][:40]))
    assert ("pkg/data.py" in found) == bool(flagged), found
    assert found["pkg/sched.py"] == {("check", "forwards **kwargs to StepLR, which may c")}


@pytest.mark.parametrize("config", ["gamma: 0.9\n", "gamma: 0.9\nverbose: true\n"])
def test_a_removed_option_no_file_writes_is_not_carried_by_the_codebase_own_dicts(
        run_cli, tmp_path, config):
    """tky823's recipes' ``ExponentialLR(optimizer, **config_scheduler)`` of a YAML file they
    load, and NATSpeech's ``StepLR(optimizer, **hparams["scheduler_params"])`` of a module's
    dict: the dicts are the codebase's own, so 2.7's removed ``verbose`` reaches them only where
    a file of the tree writes it. A library's forward of its callers' ``**kwargs`` or of a dict
    parameter stays ``check`` either way: its users' calls break there."""
    root = tmp_path / "code"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "train.py").write_text(textwrap.dedent("""\
        import torch
        import yaml

        hparams = {}


        def main(args, optimizer):
            with open(args.scheduler_path) as f:
                config_scheduler = yaml.safe_load(f)
            first = torch.optim.lr_scheduler.ExponentialLR(optimizer, **config_scheduler)
            second = torch.optim.lr_scheduler.StepLR(optimizer, **hparams["scheduler_params"])
            return first, second


        def forwarded(optimizer, **kwargs):
            return torch.optim.lr_scheduler.StepLR(optimizer, **kwargs)


        def given(optimizer, options):
            return torch.optim.lr_scheduler.StepLR(optimizer, **options)
        """))
    (root / "scheduler.yaml").write_text(config)
    result = run_cli("impact", str(FIXTURES / "releases" / "pytorch" / "v2.7.0.md"), "--code",
                     str(root), "--format", "json")
    lines = {use["line"] for item in json.loads(result.stdout)["items"]
             if "print_lr" in item["text"] for use in item.get("affects", [])
             if use["tier"] == "check"}
    assert lines == ({10, 11, 16, 20} if "verbose" in config else {16, 20}), lines


@pytest.mark.parametrize("spelled", [False, True])
def test_a_removal_the_package_disputes_is_not_carried_by_kwargs_nobody_writes(run_cli, tmp_path,
                                                                              spelled):
    """PyG's ``torch.onnx.export(model, args, f, **kwargs)``: 2.11's notes remove
    ``custom_translation_table`` from ``torch.onnx.export``, yet the 2.11.0 package still takes
    it (only the dispatcher's overload matching changed). Where nothing in the tree writes the
    option the forward cannot carry it from the tree, as a deprecated option: no use. Where a
    file writes it, ``check``. ``fallback``, which the package confirms gone, stays ``check``
    either way: a library's forward is where its users' calls break."""
    root = tmp_path / "code"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "onnx.py").write_text(textwrap.dedent("""\
        import torch


        def safe_export(model, args, f, **kwargs):
            torch.onnx.export(model, args, f, **kwargs)
        """))
    if spelled:
        (root / "pkg" / "tables.py").write_text('OPTIONS = {"custom_translation_table": {}}\n')
    result = run_cli("impact", str(FIXTURES / "releases" / "pytorch" / "v2.11.0.md"), "--code",
                     str(root), "--format", "json")
    found = {item["text"].strip("* ")[:30]: use["tier"]
             for item in json.loads(result.stdout)["items"] for use in item.get("affects", [])
             if use["path"] == "pkg/onnx.py"}
    assert found == {"Remove the `fallback` option f": "check",
                     **({"Remove overload matching logic": "check"} if spelled else {})}, found


def test_a_deprecated_option_passed_as_its_none_default_is_not_used(run_cli, tmp_path):
    """wenet's BPU exporter passes ``dynamic_axes=None`` (static shapes): None is the
    option's default, so the deprecation of using it does not reach the call; passing a value
    does. (A removed parameter still refuses the keyword, None or not.)"""
    root = tmp_path / "code"
    root.mkdir()
    (root / "export.py").write_text(textwrap.dedent("""\
        import torch


        def static(model, x):
            torch.onnx.export(model, x, "s.onnx", dynamic_axes=None, opset_version=11)


        def dynamic(model, x):
            torch.onnx.export(model, x, "d.onnx", dynamic_axes={"x": [0]})
        """))
    result = run_cli("impact", str(FIXTURES / "releases" / "pytorch" / "v2.10.0.md"), "--code",
                     str(root), "--format", "json")
    found = {(use["path"], use["line"]) for item in json.loads(result.stdout)["items"]
             if "dynamic_axes" in item["text"] for use in item.get("affects", [])}
    assert found == {("export.py", 9)}, found


def test_a_forward_parameter_is_given_by_calls_of_the_module(run_cli, tmp_path):
    """``forward`` is called through the module (``self.attn(x, mask)``), never by its name:
    no call seen is no evidence that its mask is always None."""
    found = uses_of(run_cli, tmp_path, "v2.5.0.md", """\
        import torch
        import torch.nn.functional as F


        class Attention(torch.nn.Module):
            def forward(self, q, k, v, attention_mask=None):
                return F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)


        class Block(torch.nn.Module):
            def forward(self, x, mask):
                return self.attn.forward(x, x, x) + self.attn(x, x, x, mask)
        """)
    assert found[7][0] == "check", found
