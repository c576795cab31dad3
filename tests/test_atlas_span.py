"""The diff of two bundled releases that are not consecutive, computed over only the APIs the
bundled diffs between them name (``span_diff``): an API that differs from the first to the
last differs on some step between consecutive bundled releases. Held here to the whole diff,
change for change, over pairs of both packages near and far apart (every bundled pair was so
checked when this was written: 45 of torch, 28 of torch_xla). Every such pair's diff is
bundled too (``scripts/build_atlases.py --diffs``), which ``atlas diff`` reads: each is held
to the span's."""

from __future__ import annotations

import pytest

from watcher.impact.atlas import bundled_dir, diff, loads
from watcher.impact.atlas.bundled_diffs import bundled_diff, bundled_versions, span_diff

PAIRS = [("torch", "2.5.0", "2.7.0"), ("torch", "2.5.0", "2.15.0"),
         ("torch", "2.9.0", "2.12.0"), ("torch", "2.12.0", "2.14.1"),
         ("torch_xla", "2.1.0", "2.9.0"), ("torch_xla", "2.3.0", "2.6.0")]


def atlas(package: str, version: str):  # type: ignore[no-untyped-def]
    return loads((bundled_dir() / f"{package}-{version}.json.gz").read_bytes())


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("package", "old", "new"), PAIRS)
def test_a_span_of_bundled_releases_diffs_as_the_whole_compare(package, old, new):
    found = span_diff(atlas(package, old), atlas(package, new))
    assert found is not None
    assert found == diff(atlas(package, old), atlas(package, new))


def test_the_bundled_versions_in_order_and_only_spans_between_them():
    torch = bundled_versions("torch")
    assert torch[:3] == ["2.5.0", "2.6.0", "2.7.0"]
    assert torch.index("2.9.0") < torch.index("2.10.0") < torch.index("2.14.1")
    assert "2.1.0" in bundled_versions("torch_xla") and "2.1.0" not in torch
    newer, older = atlas("torch", "2.7.0"), atlas("torch", "2.5.0")
    assert span_diff(newer, older) is None  # backwards: diffed whole by the caller


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("package", ["torch", "torch_xla"])
def test_every_pair_of_bundled_releases_has_its_diff_bundled_as_computed(package):
    versions = bundled_versions(package)
    atlases = {version: atlas(package, version) for version in versions}
    apart = 0
    for index, new in enumerate(versions):
        for position, old in enumerate(versions[:index]):
            found = bundled_diff(package, old, new)
            assert found is not None, f"{package} {old} -> {new}: run " \
                f"scripts/build_atlases.py --diffs --package {package}"
            if position < index - 1:  # the consecutive: test_atlas_bundled
                apart += 1
                assert found == span_diff(atlases[old], atlases[new]), f"{old} -> {new}"
    assert apart == (len(versions) - 1) * (len(versions) - 2) // 2
