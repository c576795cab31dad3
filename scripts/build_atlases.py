"""Builds the API atlases bundled with release-watch (``config/atlases/``): for each version,
the wheel is downloaded with pip (one platform's, no dependencies, nothing installed), read
as a zip (``watcher.impact.atlas``), and its atlas written as ``{package}-{version}.json.gz``.

    python scripts/build_atlases.py 2.5.0 2.6.0 2.7.0 [--package torch] [--wheels /tmp/wheels]
        [--platform PLATFORM] [--keep] [--out config/atlases]
    python scripts/build_atlases.py --wheel /opt/wheels/torch-2.13.0+cpu-...whl [--out DIR]
    python scripts/build_atlases.py --diffs [--package torch_xla]   # every pair's diff
    python scripts/build_atlases.py --names     # the classifier's short names (names.json)

The bundled set, as built (the wheels of this machine; pip fetches any other):

    python scripts/build_atlases.py --wheels /work/wheels --keep \
        2.5.0 2.6.0 2.7.0 2.8.0 2.9.0 2.10.0 2.11.0 2.12.0 2.15.0
    python scripts/build_atlases.py \
        --wheel /opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl \
        --wheel /opt/pypi-more/files/torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl
    python scripts/build_atlases.py --package torch_xla --wheels /work/wheels --keep \
        2.1.0 2.2.0 2.3.0 2.4.0 2.5.0 2.6.0 2.7.0 2.8.0 2.9.0
    python scripts/build_atlases.py --diffs && python scripts/build_atlases.py --diffs \
        --package torch_xla && python scripts/build_atlases.py --names

The platform is the smallest wheel's unless ``--platform``: torch's macOS arm64 wheels
(``macosx_11_0_arm64`` to 2.11, ``macosx_14_0_arm64`` from 2.12), torch_xla's Linux ones (it
publishes no other). A wheel already in ``--wheels`` is not downloaded again; each is deleted
once built unless ``--keep`` (they are 60-200 MB). Wheels never go into the repository.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from packaging.version import Version

from watcher.impact.atlas import build_atlas, dumps

REPO = Path(__file__).resolve().parent.parent


def platform_for(package: str, version: str) -> str:
    """The platform of the smallest wheel of a release (issue 27: torch's macOS arm64)."""
    if package == "torch_xla":
        return "manylinux_2_28_x86_64"
    return "macosx_14_0_arm64" if Version(version) >= Version("2.12") else "macosx_11_0_arm64"


def download(package: str, version: str, platform: str, folder: Path) -> Path:
    """``pip download`` of one wheel (or the one already there)."""
    dist = package.replace("_", "-")
    found = _wheel_in(folder, package, version)
    if found is not None:
        return found
    subprocess.run([sys.executable, "-m", "pip", "download", f"{dist}=={version}", "--no-deps",
                    "--platform", platform, "--only-binary=:all:", "--python-version", "3.11",
                    "-d", str(folder), "-q"], check=True)
    found = _wheel_in(folder, package, version)
    if found is None:
        raise SystemExit(f"pip downloaded no wheel of {dist}=={version} into {folder}")
    return found


def _wheel_in(folder: Path, package: str, version: str) -> Path | None:
    return next(iter(sorted(folder.glob(f"{package}-{version}-*.whl"))), None)


def build(wheel: Path, package: str, out: Path) -> Path:
    started = time.perf_counter()
    atlas = build_atlas(wheel, package)
    data = dumps(atlas)
    target = out / f"{package}-{atlas.version}.json.gz"
    target.write_bytes(data)
    print(f"{target.relative_to(REPO) if target.is_relative_to(REPO) else target}: "
          f"{len(atlas.names):,} names, {len(atlas.apis):,} definitions, {len(data) / 1e3:.0f} KB"
          f" (built in {time.perf_counter() - started:.1f} s from {wheel.name}, "
          f"{wheel.stat().st_size / 1e6:.0f} MB)")
    return target


def write_diffs(package: str, out: Path) -> int:
    """The diff of every pair of bundled atlases, older to newer, bundled too
    (``watcher.impact.atlas.bundled_diffs``): consecutive ones for ``impact`` (a release
    against the one before it, ``AtlasSource.before``), the others for ``atlas diff`` of
    releases further apart (computed, even over only the APIs the steps between them name, it
    costs more than twice reading it). Each is the whole ``diff`` of the two atlases."""
    from watcher.impact.atlas import loads
    from watcher.impact.atlas.bundled_diffs import write_diff
    from watcher.impact.atlas.source import bundled_path, bundled_versions

    versions = bundled_versions(package, out)
    atlases = {version: loads(bundled_path(package, version, out).read_bytes())
               for version in versions}
    for index, new in enumerate(versions):
        for old in versions[:index]:
            print(write_diff(atlases[old], atlases[new], out), file=sys.stderr)
    return 0


def write_names(package: str, out: Path) -> int:
    """The short names of the newest bundled atlas (``watcher.impact.atlas.short_names``), for
    the classifier: ``config/atlases/names.json``."""
    from watcher.impact.atlas import AtlasSource
    from watcher.impact.atlas.short_names import write_short_names
    from watcher.notes.taxonomy import builtin_taxonomy

    source = AtlasSource(store=None, index=None, clock=lambda: None, bundled=out)  # type: ignore[arg-type]
    newest = source.known(package, source.versions(package)[-1])
    assert newest is not None
    print(write_short_names(newest, builtin_taxonomy().apis.owner, out / "names.json"),
          file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("versions", nargs="*", help="versions to download and build")
    parser.add_argument("--wheel", action="append", default=[], type=Path,
                        help="build this wheel file instead (repeatable)")
    parser.add_argument("--package", default="torch", choices=["torch", "torch_xla"])
    parser.add_argument("--platform", help="the wheel's platform (else platform_for's)")
    parser.add_argument("--wheels", type=Path, default=Path("/tmp/wheels"),
                        help="where wheels are downloaded")
    parser.add_argument("--out", type=Path, default=REPO / "config" / "atlases")
    parser.add_argument("--keep", action="store_true", help="keep the downloaded wheels")
    parser.add_argument("--diffs", action="store_true",
                        help="(only) write the diff of each bundled atlas and the one before it")
    parser.add_argument("--names", action="store_true",
                        help="(only) write the newest bundled atlas's short names (names.json)")
    args = parser.parse_args(argv)
    if args.diffs:
        return write_diffs(args.package, args.out)
    if args.names:
        return write_names(args.package, args.out)
    if not args.versions and not args.wheel:
        parser.error("give versions or --wheel")
    args.out.mkdir(parents=True, exist_ok=True)
    for wheel in args.wheel:
        build(wheel, args.package, args.out)
    args.wheels.mkdir(parents=True, exist_ok=True)
    failed = []
    for version in args.versions:
        try:
            platform = args.platform or platform_for(args.package, version)
            wheel = download(args.package, version, platform, args.wheels)
        except subprocess.CalledProcessError:
            print(f"{args.package} {version}: pip has no {platform} wheel of it; skipped",
                  file=sys.stderr)
            failed.append(version)
            continue
        build(wheel, args.package, args.out)
        if not args.keep:
            wheel.unlink()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
