"""Distance functions for the point-selection algorithms, chosen by name.

Santiago, Claeys-Bruno & Sergent (2012) and DiceDesign use the Euclidean distance; the Rust ``wsp``
crate uses the city-block (L1) distance. A metric here is a function ``f(x, Y) -> distances`` from
one point ``x`` of shape (d,) to each row of ``Y`` (m, d).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import numpy as np

Metric: TypeAlias = Callable[[np.ndarray, np.ndarray], np.ndarray]


def euclidean(x: np.ndarray, ys: np.ndarray) -> np.ndarray:
    diff = ys - x
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def cityblock(x: np.ndarray, ys: np.ndarray) -> np.ndarray:
    return np.abs(ys - x).sum(axis=1)


def chebyshev(x: np.ndarray, ys: np.ndarray) -> np.ndarray:
    return np.abs(ys - x).max(axis=1)


METRICS: dict[str, Metric] = {
    "euclidean": euclidean,
    "cityblock": cityblock,
    "manhattan": cityblock,
    "chebyshev": chebyshev,
}


def resolve_metric(metric: str | Metric) -> tuple[str, Metric]:
    """Return ``(name, function)`` for a metric name or a user-supplied function."""
    if callable(metric):
        return getattr(metric, "__name__", "custom"), metric
    if isinstance(metric, str) and metric in METRICS:
        return metric, METRICS[metric]
    raise ValueError(f"metric: expected one of {sorted(METRICS)} or a function, got {metric!r}")


def unit_cube_diameter(metric: Metric, d: int) -> float:
    """Largest distance between two points of [0, 1]^d (opposite corners, for any norm)."""
    return float(metric(np.zeros(d), np.ones((1, d)))[0])


def distance_matrix(points: np.ndarray, metric: Metric) -> np.ndarray:
    """Full symmetric matrix of distances, row by row (the sets passed here are small)."""
    n = points.shape[0]
    out = np.empty((n, n))
    for i in range(n):
        out[i] = metric(points[i], points)
    return out
