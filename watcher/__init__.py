"""release-watch: what changed in PyTorch and PyTorch/XLA releases, by subsystem."""

__version__ = "0.1.0"
