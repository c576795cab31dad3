"""Hostile wheels of the small torch of ``atlas_support``, as a broken mirror or an attacker
could serve them (issue 35): a module nested too deep for ``ast``, a zip bomb (a 3 GB member
in a 3 MB file; another whose directory lies about its size), a module of millions of
functions, a wheel whose METADATA names another version. The zip is written by hand, so a
member's deflate stream can be a block repeated thousands of times (written in a second) and
the directory can say what the test wants it to."""

from __future__ import annotations

import struct
import zipfile
import zlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from atlas_support import COMMON, V2

MB = 1 << 20


@dataclass(frozen=True)
class Member:
    name: str
    raw: bytes  # the deflate stream
    crc: int
    size: int  # uncompressed
    declared: int | None = None  # the size the directory states, when it lies


def deflated(name: str, data: bytes) -> Member:
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    return Member(name, packer.compress(data) + packer.flush(), zlib.crc32(data), len(data))


@cache
def repeated(name: str, unit: bytes, size: int) -> Member:
    """``unit`` over and over to ``size`` bytes, as one member: a block compressed once and
    repeated (each ends in a full flush, so the copies chain into one stream)."""
    chunk = unit * max(1, MB // len(unit))
    count = max(1, size // len(chunk))
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = packer.compress(chunk) + packer.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    return Member(name, block * count + b"\x03\x00", crc, len(chunk) * count)


def write_zip(path: Path, members: list[Member]) -> Path:
    """A zip of ``members`` (deflated, no zip64: each under 4 GiB)."""
    directory = b""
    with path.open("wb") as out:
        for member in members:
            name = member.name.encode()
            size = member.size if member.declared is None else member.declared
            offset = out.tell()
            fields = (20, 0, zipfile.ZIP_DEFLATED, 0, 0x21, member.crc, len(member.raw), size)
            out.write(struct.pack("<IHHHHHIII", 0x04034B50, *fields) +
                      struct.pack("<HH", len(name), 0) + name + member.raw)
            directory += (struct.pack("<IH", 0x02014B50, 20) +
                          struct.pack("<HHHHHIII", *fields) +
                          struct.pack("<HHHHHII", len(name), 0, 0, 0, 0, 0, offset) + name)
        start = out.tell()
        out.write(directory)
        out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                              len(directory), start, 0))
    return path


def sound_members(version: str, says: str | None = None) -> list[Member]:
    """The small torch at ``version`` (its METADATA saying ``says``, if given)."""
    files = {**COMMON, **V2}
    return [deflated(name.format(version=version),
                     (text.format(version=says or version) if name.endswith("METADATA")
                      else text.lstrip("\n")).encode())
            for name, text in files.items()]


def wheel_path(folder: Path, version: str) -> Path:
    return folder / f"torch-{version}-cp311-none-macosx_11_0_arm64.whl"


def sound(folder: Path, version: str) -> Path:
    return write_zip(wheel_path(folder, version), sound_members(version))


def deep_nesting(folder: Path, version: str) -> Path:
    """``x = a[0][0]...`` 100,000 deep (``ast.parse``: RecursionError) and a default 900 deep
    (``ast.unparse``: RecursionError), in a 1.5 KB wheel."""
    return write_zip(wheel_path(folder, version), [
        *sound_members(version),
        deflated("torch/deep.py", b"x = a" + b"[0]" * 100_000 + b"\n"),
        deflated("torch/default.py", b"def f(x=a" + b"[0]" * 900 + b"):\n    pass\n")])


def zip_bomb(folder: Path, version: str, *, lying: bool = False) -> Path:
    """One 3 GB member of spaces in a 3 MB file; ``lying``: its directory says 1 KB."""
    bomb = repeated("torch/bomb.py", b" ", 3000 * MB)
    if lying:
        bomb = Member(bomb.name, bomb.raw, bomb.crc, bomb.size, declared=1000)
    return write_zip(wheel_path(folder, version), [*sound_members(version), bomb])


FUNCTION = b"def f(a, b=1, *c, d=None, **e):\n    '''One of many.'''\n    return a + b\n"


def huge_module(folder: Path, version: str, size: int = 195 * MB) -> Path:
    """A ``.py`` of ``size`` bytes of functions (195 MB: 2.7 million)."""
    return write_zip(wheel_path(folder, version), [
        *sound_members(version), repeated("torch/huge.py", FUNCTION, size)])


def many_modules(folder: Path, version: str, count: int = 400, size: int = MB) -> Path:
    """``count`` public modules of ``size`` bytes of functions each: a CPU-long build (each
    module's tree freed after it is read, so its memory stays low)."""
    return write_zip(wheel_path(folder, version), [
        *sound_members(version),
        *(repeated(f"torch/many{number}.py", FUNCTION, size) for number in range(count))])


def other_version(folder: Path, version: str, says: str) -> Path:
    """A sound wheel named ``version`` whose METADATA says ``says``."""
    return write_zip(wheel_path(folder, version), sound_members(version, says))
