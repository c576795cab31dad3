"""What reading one wheel may cost at most, and the error for going past it.

Every wheel the package index serves is untrusted: a mirror can serve a broken file, a slow
one or a hostile one. Each stage has a limit that holds whatever the wheel or the server does:

- the index's JSON: an overall deadline (``json_seconds``) and a size (``MAX_JSON``);
- the download: an overall deadline (``download_seconds``), a throughput floor (slower than
  ``min_rate`` bytes a second over any ``slow_seconds`` is abandoned, so a drip ends in well
  under two minutes), the size the index declares checked while streaming, and a cap on it
  (``max_wheel``; real torch wheels are 66 MB to about 900 MB);
- the read: a cap on one module's source (``max_module``: a larger one is skipped) and on all
  of them (``max_modules``: the wheel is refused), checked from the zip directory before a
  byte is decompressed (the largest real member, ``torch/testing/_internal/
  common_methods_invocations.py``, is 1.4 MB; all of torch 2.15's ``.py``/``.pyi`` 56 MB);
- the build: a child process with an address-space limit (``memory``; a real torch build
  peaks at 68 MB), a CPU limit (``cpu_seconds``; 5 s here) and a wall-clock deadline
  (``build_seconds``), so the parent survives whatever the child does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from watcher.config import ImpactConfig

MB = 1_000_000
MAX_JSON = 32 * MB  # one release's JSON lists a few dozen files: tens of KB


@dataclass(frozen=True, slots=True)
class Budget:
    json_seconds: float = 60.0
    download_seconds: float = 1800.0
    min_rate: float = 10_000.0  # bytes a second ...
    slow_seconds: float = 30.0  # ... over any window this long
    max_wheel: int = 1500 * MB
    max_module: int = 16 * MB
    max_modules: int = 400 * MB
    memory: int = 512 * MB
    cpu_seconds: float = 120.0
    build_seconds: float = 300.0

    @classmethod
    def of(cls, impact: ImpactConfig) -> Budget:
        """The budget ``[impact]`` sets (its keys are named in the errors)."""
        return cls(json_seconds=impact.index_timeout, download_seconds=impact.download_timeout,
                   min_rate=impact.download_min_rate, slow_seconds=impact.download_slow_for,
                   max_wheel=impact.wheel_max_size, max_module=impact.module_max_size,
                   max_modules=impact.modules_max_size, memory=impact.build_memory,
                   cpu_seconds=impact.build_cpu, build_seconds=impact.build_timeout)

    @property
    def seconds(self) -> float:
        """The longest one version's fetch and build can take while within its budget."""
        return self.json_seconds + self.download_seconds + self.build_seconds


def megabytes(size: float) -> str:
    """``1_500_000_000`` → ``1500 MB``; ``12_345`` → ``12 KB``: sizes in one-line errors."""
    if size >= MB:
        return f"{size / MB:,.0f} MB"
    return f"{size / 1000:,.0f} KB" if size >= 1000 else f"{size:.0f} bytes"
