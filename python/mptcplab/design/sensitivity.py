"""Sensitivity of a study's conclusions to the choice of design.

Paasch, Khalili, Bonaventure, CoNEXT 2013 (spec ``algorithms.md`` §4.6): run several designs of
comparable size, compare the 5th, 25th, 50th, 75th and 95th percentiles of the metric across them,
and report their standard deviation relative to the metric's range. Percentiles use numpy's
default linear interpolation (Hyndman & Fan type 7); the spread across designs is the sample
standard deviation (ddof = 1) unless told otherwise; NaN values (failed runs) are ignored.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd

DEFAULT_PERCENTILES = (5, 25, 50, 75, 95)


_SUMMARY_COLUMNS = ("mean", "std", "range", "relative_std")


def _check_percentiles(percentiles: object) -> np.ndarray:
    expected = "expected a list of numbers in [0, 100], e.g. [5, 25, 50, 75, 95]"
    # A string is iterable: "50" would be read as the percentiles 5 and 0.
    if isinstance(percentiles, str | bytes) or not isinstance(percentiles, Iterable):
        raise ValueError(f"percentiles: {expected}, got {percentiles!r}")
    values = list(percentiles)
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"percentiles: {expected}, got {value!r} in {values!r}")
    pct = np.asarray(values, dtype=float)
    if pct.size == 0 or np.any(np.isnan(pct)) or np.any((pct < 0) | (pct > 100)):
        raise ValueError(f"percentiles: {expected}, got {values!r}")
    return pct


def sensitivity(
    metric_by_design: Sequence[npt.ArrayLike] | Mapping[str, npt.ArrayLike] | pd.DataFrame,
    percentiles: Sequence[float] = DEFAULT_PERCENTILES,
    *,
    ddof: int = 1,
) -> pd.DataFrame:
    """Per-percentile values of a metric for each design and their spread across designs.

    ``metric_by_design`` holds one array of metric values per design: a list, or a mapping (a
    dict, or a DataFrame with one column per design) whose keys name the designs.
    Returns a frame indexed by ``percentile`` with one column per design (``design_0 ..
    design_{m-1}`` for a list, the keys for a mapping), ``mean``, ``std`` (across designs),
    ``range`` (max - min of all values pooled) and ``relative_std`` (``std / range``; 0 when
    every value is equal).
    """
    if isinstance(metric_by_design, np.ndarray) and metric_by_design.ndim == 1:
        raise ValueError("metric_by_design: expected one array of metric values per design")
    if isinstance(metric_by_design, str):
        raise ValueError(
            f"metric_by_design: expected one array of metric values per design, "
            f"got {metric_by_design!r}"
        )
    # Iterating a DataFrame or a dict gives its keys, which would be read as the metric values.
    if isinstance(metric_by_design, Mapping | pd.DataFrame):
        names = [str(key) for key in metric_by_design]
        labels = [repr(name) for name in names]
        arrays = [metric_by_design[key] for key in metric_by_design]
        if clash := sorted(set(names) & set(_SUMMARY_COLUMNS)):
            raise ValueError(f"metric_by_design: design name(s) {clash} clash with the summary")
        # Keys 1 and "1" are two designs but one column name: one would hide the other.
        if len(set(names)) != len(names):
            keys = [key for key in metric_by_design if names.count(str(key)) > 1]
            raise ValueError(
                f"metric_by_design: design keys {keys} give the same column name; "
                "give each design a distinct name"
            )
    else:
        arrays = list(metric_by_design)
        names = [f"design_{i}" for i in range(len(arrays))]
        labels = [str(i) for i in range(len(arrays))]
    samples = []
    for label, values in zip(labels, arrays, strict=True):
        try:
            arr = np.asarray(values, dtype=float).ravel()
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"metric_by_design: design {label}: expected numbers ({exc})"
            ) from None
        finite = arr[~np.isnan(arr)]
        if finite.size == 0:
            raise ValueError(f"metric_by_design: design {label} has no (non-NaN) metric values")
        if np.any(np.isinf(finite)):
            raise ValueError(f"metric_by_design: design {label} has infinite metric values")
        samples.append(finite)
    if len(samples) < 2:
        raise ValueError(
            f"metric_by_design: need at least 2 designs to compare, got {len(samples)}"
        )
    # int(1.5) would quietly be 1, True would be 1, and a negative ddof is no variance.
    if isinstance(ddof, bool) or not isinstance(ddof, numbers.Integral) or ddof < 0:
        raise ValueError(f"ddof: expected an integer >= 0, got {ddof!r}")
    if len(samples) <= ddof:
        raise ValueError(f"ddof: {ddof} leaves no degrees of freedom for {len(samples)} designs")
    pct = _check_percentiles(percentiles)

    table = np.column_stack([np.percentile(s, pct) for s in samples])
    pooled = np.concatenate(samples)
    value_range = float(pooled.max() - pooled.min())
    std = table.std(axis=1, ddof=ddof)
    relative = std / value_range if value_range > 0 else np.zeros_like(std)
    frame = pd.DataFrame(
        table,
        index=pd.Index(pct, name="percentile"),
        columns=names,
    )
    frame["mean"] = table.mean(axis=1)
    frame["std"] = std
    frame["range"] = value_range
    frame["relative_std"] = relative
    return frame
