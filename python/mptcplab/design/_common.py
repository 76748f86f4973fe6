"""Shared argument checks for the design engines: random generators, sizes and unit-cube points.

Every engine takes its randomness as a keyword-only ``rng`` that may be an integer seed, a
``numpy.random.SeedSequence`` or a ``numpy.random.Generator``; the same seed always gives the same
design. ``None`` is refused on purpose: a design that cannot be regenerated cannot be audited.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

RngLike: TypeAlias = int | np.integer | np.random.SeedSequence | np.random.Generator

# Points on the boundary of [0, 1] computed as sums of floats may overshoot by a few ulps.
UNIT_CUBE_TOLERANCE = 1e-12

#: Largest design: WSP and the quality measures compare every pair of points (10,000 points
#: make 50 million pairs, 400 MB of distances; 100,000 asked for 37 GiB).
MAX_POINTS = 10_000
#: Most factors of a design: Sobol' sequences stop at 21,201 dimensions, and space-filling
#: criteria mean little long before a thousand.
MAX_DIMS = 1_000


def as_generator(rng: RngLike) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for an int seed, a SeedSequence or a Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise ValueError(f"rng: expected a non-negative integer seed, got {int(rng)}")
        return np.random.default_rng(int(rng))
    raise ValueError(
        "rng: expected an integer seed, a numpy.random.SeedSequence or a numpy.random.Generator, "
        f"got {rng!r}"
    )


def check_count(name: str, value: object, *, minimum: int = 1) -> int:
    """Validate a positive integer argument such as ``d`` or ``n``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {int(value)}")
    return int(value)


def check_size(d: object, n: object) -> tuple[int, int]:
    """Validate a design's number of factors ``d`` and of points ``n`` against the bounds every
    engine keeps (:data:`MAX_DIMS`, :data:`MAX_POINTS`)."""
    d = check_count("d", d)
    n = check_count("n", n)
    if d > MAX_DIMS:
        raise ValueError(f"d: at most {MAX_DIMS} factors, got {d}")
    if n > MAX_POINTS:
        raise ValueError(
            f"n: at most {MAX_POINTS} points, got {n} (a design's quality measures compare "
            "every pair of points)"
        )
    return d, n


def check_real(name: str, value: object) -> float:
    """A real-number argument as a float; strings and booleans are refused by name (numpy's
    own message for them names neither the argument nor the value)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    return float(value)


def check_flag(name: str, value: object) -> bool:
    """Validate a true/false option such as ``scramble``: a string or number is refused rather
    than read by its truth value ("no" would mean true)."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name}: expected true or false, got {value!r}")
    return bool(value)


def as_unit_points(points: npt.ArrayLike, *, name: str = "points") -> np.ndarray:
    """Return ``points`` as a float (n, d) array inside [0, 1]^d, or raise a clear ValueError.

    Values that overshoot the cube by at most ``UNIT_CUBE_TOLERANCE`` are clipped back into it.
    """
    try:
        arr = np.asarray(points, dtype=float)
    except (TypeError, ValueError) as exc:
        ragged = _ragged_row(points)
        if ragged is not None:
            raise ValueError(f"{name}: expected an (n, d) array, but {ragged}") from None
        raise ValueError(f"{name}: expected a numeric (n, d) array ({exc})") from None
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array of shape (n, d), got shape {arr.shape}")
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name}: expected at least one point and one dimension, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        row, col = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name}: point {row}, coordinate {col} is not finite ({float(arr[row, col])})"
        )
    outside = (arr < -UNIT_CUBE_TOLERANCE) | (arr > 1.0 + UNIT_CUBE_TOLERANCE)
    if np.any(outside):
        row, col = np.argwhere(outside)[0]
        raise ValueError(
            f"{name}: point {row}, coordinate {col} is {float(arr[row, col])!r}; "
            "expected a value in [0, 1] (scale factor values back to the unit cube first)"
        )
    return np.clip(arr, 0.0, 1.0)


def _ragged_row(points: object) -> str | None:
    """Where rows of ``points`` differ in length, said plainly (numpy speaks of an
    "inhomogeneous shape after 1 dimensions"), or None when they do not."""
    if isinstance(points, str | bytes | np.ndarray) or not isinstance(points, Sequence):
        return None
    lengths = [len(row) if isinstance(row, Sequence | np.ndarray) else None for row in points]

    def said(length: int | None) -> str:
        return "a number" if length is None else f"{length} value{'' if length == 1 else 's'}"

    for i, length in enumerate(lengths):
        if length != lengths[0]:
            return f"row 0 has {said(lengths[0])} and row {i} has {said(length)}"
    return None
