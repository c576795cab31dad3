"""Calibration on releases held out of training: the softmax temperature, and how the
confidences it gives bear out (the README's calibration table)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

Scored = tuple[Sequence[float], int]  # a held-out item's class scores, and its gold class
BUCKETS = (0.0, 0.3, 0.5, 0.7, 0.9, 1.0)


def log_loss(held: Sequence[Scored], temperature: float) -> float:
    total = 0.0
    for scores, gold in held:
        scaled = [s / temperature for s in scores]
        top = max(scaled)
        total += top + math.log(sum(math.exp(s - top) for s in scaled)) - scaled[gold]
    return total / len(held)


def fit_temperature(held: Sequence[Scored]) -> float:
    """The temperature that minimises the log-loss of held-out predictions: a model trained on
    some releases is surer of itself than it has a right to be on the next one (an SVM's
    margins of about ±1 need T < 1 to become probabilities at all)."""
    if not held:
        return 1.0
    grid = [round(0.02 * 1.05 ** step, 4) for step in range(114)]  # 0.02 … 5, 5 % apart
    return min(grid, key=lambda t: log_loss(held, t))


def buckets(pairs: Sequence[tuple[float, bool]]) -> list[tuple[float, float, int, float]]:
    """(low, high, items, share right) for each confidence range of ``BUCKETS``."""
    rows = []
    for low, high in itertools.pairwise(BUCKETS):
        inside = [right for p, right in pairs if low <= p < high or (high == 1.0 and p == 1.0)]
        if inside:
            rows.append((low, high, len(inside), sum(inside) / len(inside)))
    return rows


def precision_at(pairs: Sequence[tuple[float, bool]], coverage: float) -> float:
    """Share right among the ``coverage`` most confident items (ties broken by order)."""
    ranked = sorted(pairs, key=lambda pair: -pair[0])
    top = ranked[:max(1, round(len(ranked) * coverage))]
    return sum(right for _, right in top) / len(top)
