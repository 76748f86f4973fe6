"""Times that ran past the end of their run: right-censored observations.

A metric that times something (``completion_s``, ``cwnd_recovery_s``; ``MetricInfo.unfinished``
says what) has no value when that did not happen before the run ended. Leaving such runs out
would bias every summary toward the variant that fails most: its median would be that of the
few runs it finished. They are kept as +inf instead, a value known only to be larger than any
finished one. Medians, order statistics, the sign test and the rank-sum test depend only on the
order of the values, so they stay exact with it (a median is infinite when half or more of the
runs are). What needs magnitudes (a mean, a plot's axis) says how many it had to leave out.

Two infinite values are tied: neither is known to be the larger.

One metric has the mirror image: ``log_gain`` is −inf where MPTCP delivered nothing while TCP
did (``MetricInfo.stalled``), a run worse than any other. It is kept for the same reason and
handled the same way, at the other end of the order.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = [
    "differences",
    "nonfinite_text",
    "outer_differences",
    "quantiles",
    "stalled_count",
    "unfinished_count",
]


def differences(b: npt.ArrayLike, a: npt.ArrayLike) -> np.ndarray:
    """``b − a`` element by element, 0 where both are the same infinity (a tie) rather than
    NaN."""
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    both = np.isinf(x) & (x == y)
    with np.errstate(invalid="ignore"):
        return np.where(both, 0.0, y - x)


def nonfinite_text(value: float) -> str | None:
    """How tables write a value that is not a finite number ("–" for a missing one, "∞" for an
    unfinished time), or None for a finite one."""
    if math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return None


def outer_differences(b: npt.ArrayLike, a: npt.ArrayLike) -> np.ndarray:
    """``b[i] − a[j]`` for every pair, flattened; 0 where both are the same infinity."""
    y = np.asarray(b, dtype=float)
    x = np.asarray(a, dtype=float)
    return differences(*np.meshgrid(y, x, indexing="ij")).ravel()


def quantiles(values: npt.ArrayLike, qs: npt.ArrayLike) -> np.ndarray:
    """``numpy.quantile`` (linear interpolation between order statistics) of ``values``, which
    may hold +inf or −inf: a quantile on an infinite order statistic, or between a finite one
    and an infinite one, is that infinity (numpy would give NaN between two)."""
    v = np.asarray(values, dtype=float)
    q = np.asarray(qs, dtype=float)
    if v.size == 0:
        return np.full(q.shape, np.nan)
    infinite = np.isinf(v)
    if not infinite.any():
        return np.asarray(np.quantile(v, q), dtype=float)
    finite = v[~infinite]
    # Any stand-ins beyond every finite value order the same; interpolating toward one gives
    # more than the largest finite value (less than the smallest) exactly where the quantile
    # is infinite.
    top = float(finite.max()) if finite.size else 0.0
    bottom = float(finite.min()) if finite.size else 0.0
    above, below = top + max(1.0, abs(top)), bottom - max(1.0, abs(bottom))
    stand_ins = np.where(np.isposinf(v), above, np.where(np.isneginf(v), below, v))
    out = np.asarray(np.quantile(stand_ins, q), dtype=float)
    if not finite.size:
        # Between −inf and +inf a quantile has no value.
        out[(out > below) & (out < above)] = np.nan
    out[out > top] = np.inf
    out[out < bottom] = -np.inf
    return out


def unfinished_count(column: pd.Series) -> int:
    """How many values of ``column`` are +inf."""
    return int(np.isposinf(column.to_numpy(dtype=float)).sum())


def stalled_count(column: pd.Series) -> int:
    """How many values of ``column`` are −inf."""
    return int(np.isneginf(column.to_numpy(dtype=float)).sum())
