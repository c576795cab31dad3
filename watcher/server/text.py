"""The Prometheus text format (version 0.0.4) as prometheus_client's ``generate_latest``
writes it, for the families the daemon formats itself (the per-repo ones, the requests by
status): the same bytes, at a fraction of the cost, since a label set's prefix is encoded once.
Tests compare the two renderings byte for byte (tests/test_metrics.py).

Metric and label names here are fixed and valid, so they are never escaped; label values and
help texts are escaped as prometheus_client escapes them.
"""

from __future__ import annotations

import math


def family_head(name: str, documentation: str, kind: str) -> str:
    """``# HELP`` and ``# TYPE`` of a family (``name`` as shown: a counter's ends ``_total``)."""
    help_text = documentation.replace("\\", r"\\").replace("\n", r"\n")
    return f"# HELP {name} {help_text}\n# TYPE {name} {kind}\n"


def label_value(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def labels(pairs: dict[str, str]) -> str:
    """``{a="x",b="y"}``, names sorted as prometheus_client sorts them."""
    return "{" + ",".join(f'{k}="{label_value(v)}"' for k, v in sorted(pairs.items())) + "}"


def number(value: float) -> str:
    """A sample's value as prometheus_client's ``floatToGoString`` writes it."""
    d = float(value)
    if math.isinf(d):
        return "+Inf" if d > 0 else "-Inf"
    if math.isnan(d):
        return "NaN"
    s = repr(d)
    dot = s.find(".")
    if d > 0 and dot > 6:  # Go switches to exponents sooner than Python
        mantissa = f"{s[0]}.{s[1:dot]}{s[dot + 1 :]}".rstrip("0.")
        return f"{mantissa}e+{dot - 1:02d}"
    return s


def count(value: int) -> str:
    """An integer counter's value: ``number(float(value))``, quicker for the usual sizes."""
    return f"{value}.0" if 0 <= value < 1_000_000 else number(value)
